"""The rest of the API from Python: communicators, statistics, seed groups, int64 indices."""

import numpy as np
import pytest

import zipfcoll


def test_comm_properties(comm, world):
    assert comm.rank == world.Get_rank() and comm.size == world.Get_size()
    local, count = comm.local_rank
    assert 0 <= local < count
    assert isinstance(comm.topology, str)
    model = comm.machine_model()
    assert set(model) == {"intra_node", "inter_node", "local_gbs", "ranks_per_core"}
    assert model["ranks_per_core"] >= 1.0


def test_a_given_machine_model_comes_back_exactly(world):
    # All three figures given: auto's choices no longer depend on a measurement.
    with zipfcoll.Comm.from_mpi4py(world, intra_node=(1.5, 12.25), inter_node=(7.0, 0.5),
                                   local_gbs=2.0 / 7.0) as c:
        model = c.machine_model()
    crowd = model.pop("ranks_per_core")  # counted on the host, never given
    assert model == {"intra_node": (1.5, 12.25), "inter_node": (7.0, 0.5),
                     "local_gbs": 2.0 / 7.0}
    assert crowd >= 1.0


def test_stats_dict(comm, world):
    comm.reset_stats()
    idx = np.arange(10, dtype=np.int64) * (comm.rank + 1)
    with zipfcoll.SparsePlan(comm, 3, 100, index_type="int64",
                             algorithm="unique_allreduce") as plan:
        res = plan.reduce(idx, np.ones((10, 3), dtype=np.float32))
    assert res.indices.dtype == np.int64
    stats = comm.stats()
    last, total = stats["last"], stats["total"]
    assert last["calls"] == 1 and total["calls"] == 1
    assert last["tokens"] == 10 and last["global_unique"] == res.num_unique
    assert last["algorithm"] == "unique_allreduce"
    assert set(last["seconds"]) == {"local", "header", "index_exchange", "merge", "scatter",
                                    "row_exchange", "total"}
    # Host arrays: every phase ran on the host, with no wait for a device.
    assert last["path"] == {phase: "host" for phase in last["seconds"]}
    assert last["host_syncs"] == 0 and total["host_syncs"] == 0
    assert last["bytes_sent"] > 0 or comm.size == 1
    # The busiest rank and the sum over ranks, the same on every rank; header, keys, rows.
    assert last["bytes_received_max"] == max(world.allgather(last["bytes_received"]))
    assert last["bytes_received_sum"] == sum(world.allgather(last["bytes_received"]))
    assert last["rounds"] == 3


def test_split_and_seed_groups(comm):
    half = comm.split(comm.rank % 2, key=-comm.rank)
    assert half.size == (comm.size + 1 - comm.rank % 2) // 2
    half.destroy()
    assert comm.split(-1) is None
    with zipfcoll.SeedGroup(comm, "all_distinct", base_seed=5) as g:
        assert g.count == comm.size and g.id == comm.rank and g.comm.size == 1
    with zipfcoll.SeedGroup(comm, "explicit", explicit_group=comm.rank // 2) as g:
        assert g.id == comm.rank // 2
        sub = g.comm
        total = sub.allreduce(np.ones(4, np.float32)).out
        assert total[0] == sub.size
    with pytest.raises(zipfcoll.InvalidUsageError, match="SeedGroup"):
        sub.rank  # the group, and with it its communicator, is gone


def test_auto_reports_the_algorithm_it_ran(comm):
    idx = np.arange(50, dtype=np.int32)
    with zipfcoll.SparsePlan(comm, 4, 1000, algorithm="auto") as plan:
        res = plan.reduce(idx, np.ones((50, 4), np.float32))
    assert res.algorithm in {zipfcoll.algorithm_name(a) for a in range(1, 7)}
    assert np.all(res.rows == comm.size)


def test_overflow_on_device_changes_nothing_for_host_arrays(comm):
    # The flag stays on the device only for a step that runs there; host arrays get the
    # finished result, as from a plan without the setting.
    rng = np.random.default_rng(11 + comm.rank)
    idx = rng.integers(0, 60, size=30 + comm.rank).astype(np.int32)
    rows = rng.standard_normal((idx.size, 4)).astype(np.float32)
    with zipfcoll.SparsePlan(comm, 4, 60, algorithm="unique_allreduce") as plain, \
            zipfcoll.SparsePlan(comm, 4, 60, algorithm="unique_allreduce",
                                overflow_on_device=True) as flagged:
        want = plain.reduce(idx, rows)
        got = flagged.reduce(idx, rows)
        assert got._fields[-1] == "overflow_flag"
        assert got.overflow_flag is None and got.overflowed is False
        assert got.num_unique == want.num_unique and want.overflow_flag is None
        assert np.array_equal(got.indices, want.indices)
        assert np.array_equal(got.rows, want.rows)
        if comm.rank == comm.size - 1:
            rows[0, 2] = np.inf
        got = flagged.reduce(idx, rows)
        assert got.overflowed is True and got.overflow_flag is None
    with pytest.raises(TypeError):
        zipfcoll.SparsePlan(comm, 4, 60, overflow_on_device="yes")


def test_reduce_bounded_matches_reduce_and_reports_a_small_capacity_once(comm):
    rng = np.random.default_rng(7 + comm.rank)
    idx = rng.integers(0, 40, size=25 + comm.rank).astype(np.int32)
    rows = rng.standard_normal((idx.size, 4)).astype(np.float32)
    with zipfcoll.SparsePlan(comm, 4, 40, algorithm="unique_allreduce") as plan:
        plain = plan.reduce(idx, rows)
        ug = plain.num_unique
        want_ids, want_rows = plain.indices.copy(), plain.rows.copy()
        cap = ug + 3
        out_ids = np.full(cap, 9, dtype=np.int32)
        out_rows = np.full((cap, 4), 5.0, dtype=np.float32)
        st = plan.reduce_bounded(idx, rows, out=(out_ids, out_rows))
        assert st == zipfcoll.BoundedStatus(ug, "no error", True, False)
        assert np.array_equal(out_ids[:ug], want_ids) and (out_ids[ug:] == -1).all()
        assert np.array_equal(out_rows[:ug], want_rows) and (out_rows[ug:] == 0).all()
        assert comm.check_async_error() is True
        small_ids = np.full(ug - 1, 9, dtype=np.int32)
        small_rows = np.full((ug - 1, 4), 5.0, dtype=np.float32)
        st = plan.reduce_bounded(idx, rows, out=(small_ids, small_rows))
        assert not st.ok and st.num_unique == ug
        assert (small_ids == 9).all() and (small_rows == 5.0).all()
        with pytest.raises(zipfcoll.InvalidArgumentError, match="more than its capacity"):
            comm.check_async_error()
        assert comm.check_async_error() is True


def test_eight_bit_names_stochastic_rounding_and_error_feedback(world):
    # Every compression name the library gives is taken; stochastic rounding repeats its bits
    # on a new communicator with the same seed and calls; a residual carries what the encode
    # left out, zeros where nothing was (an exact value).
    x = np.linspace(-1.0, 1.0, 1000, dtype=np.float32) * (world.Get_rank() + 1)
    sums = []
    for attempt in range(2):
        with zipfcoll.Comm.from_mpi4py(world, rounding_seed=7) as c:
            for name in ("fp8_e4m3", "fp8_e5m2", "int8", "fp16_sr", "bf16_sr", "int8_sr"):
                out, overflowed = c.allreduce(x, compression=name)
                assert not overflowed
                np.testing.assert_allclose(out, x * sum(range(1, world.Get_size() + 1)) /
                                           (world.Get_rank() + 1), rtol=0.2, atol=0.05)
                sums.append(out.tobytes())
    assert sums[:6] == sums[6:]
    with zipfcoll.Comm.from_mpi4py(world) as c:
        residual = np.zeros_like(x)
        out, overflowed = c.allreduce(x, compression="int8", residual=residual)
        assert not overflowed
        assert np.any(residual != 0) and np.all(np.abs(residual) <= np.abs(x).max() / 254 * 1.001)
        with pytest.raises(zipfcoll.InvalidArgumentError, match="int4"):
            c.allreduce(x, compression="int4")
