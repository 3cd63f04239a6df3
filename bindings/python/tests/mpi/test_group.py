"""Grouped calls (Comm.group, group_start / group_end): each call gives what it gives alone,
bit for bit; a step's calls share one agreement, on which its loss rides; results and outputs
appear only when the whole group succeeded, and a failure on any rank fails it on every rank;
what a call borrowed stays alive until the group ends."""

import gc

import numpy as np
import pytest

import zipfcoll

D, V = 8, 500


def step_inputs(rank, table):
    """This rank's indices and rows for one table: frequent ids shared by all ranks, some
    of its own."""
    rng = np.random.default_rng(1000 * table + rank)
    idx = (rng.zipf(1.3, 96) % V).astype(np.int32)
    rows = rng.standard_normal((idx.size, D + table)).astype(np.float32)
    return idx, rows


def test_each_call_gives_what_it_gives_alone(comm):
    plans = [zipfcoll.SparsePlan(comm, D + t, V, algorithm="owner_partitioned")
             for t in range(2)]
    inputs = [step_inputs(comm.rank, t) for t in range(2)]
    loss = np.array([0.1 * (comm.rank + 1), 64.0], np.float32)
    dense = np.linspace(-1, 1, 1000, dtype=np.float32) * (comm.rank + 1)
    alone = [p.reduce(i, r) for p, (i, r) in zip(plans, inputs)]
    alone = [(a.indices.copy(), a.rows.copy()) for a in alone]
    loss_alone = comm.allreduce(loss).out
    dense_alone = comm.allreduce(dense, compression="fp16").out

    with comm.group():
        pending = [p.reduce(i, r) for p, (i, r) in zip(plans, inputs)]
        loss_sum = comm.allreduce(loss)
        dense_sum = comm.allreduce(dense, compression="fp16")
        assert not any(p.done for p in pending + [loss_sum, dense_sum])
    for p, (indices, rows) in zip(pending, alone):
        got = p.wait()
        assert np.array_equal(got.indices, indices)
        assert np.array_equal(got.rows.view(np.uint32), rows.view(np.uint32))
        assert got.algorithm == "owner_partitioned" and not got.overflowed
    assert np.array_equal(loss_sum.wait().out.view(np.uint32), loss_alone.view(np.uint32))
    assert np.array_equal(dense_sum.wait().out.view(np.uint32), dense_alone.view(np.uint32))
    del pending
    for p in plans:
        p.destroy()


def test_a_step_pays_one_agreement_and_the_loss_rides_on_it(comm):
    plans = [zipfcoll.SparsePlan(comm, D + t, V, algorithm="owner_partitioned")
             for t in range(2)]
    inputs = [step_inputs(comm.rank, t) for t in range(2)]
    alone = 0
    for p, (i, r) in zip(plans, inputs):
        comm.reset_stats()
        p.reduce(i, r)
        alone += comm.stats()["last"]["rounds"]
    comm.reset_stats()
    comm.allreduce(np.ones(3, np.float32))
    alone += comm.stats()["last"]["rounds"]
    comm.reset_stats()
    with comm.group():
        for p, (i, r) in zip(plans, inputs):
            p.reduce(i, r)
        comm.allreduce(np.ones(3, np.float32))
    last = comm.stats()["last"]
    assert last["calls"] == 3
    if comm.size > 1:
        # Alone: each call 3 rounds (its agreement, then two exchanges). Grouped: one
        # agreement, carrying the loss, then each table's two exchanges.
        assert alone == 9 and last["rounds"] == 5
    for p in plans:
        p.destroy()


def test_results_wait_for_the_end(comm):
    out = np.full(4, -1.0, np.float32)
    comm.group_start()
    pending = comm.allreduce(np.ones(4, np.float32), out)
    with pytest.raises(zipfcoll.InvalidUsageError, match="has not ended"):
        pending.wait()
    assert np.all(out == -1.0)  # nothing is written before the end
    comm.group_start()  # groups nest: only the outermost end runs them
    comm.group_end()
    assert not pending.done
    comm.group_end()
    assert pending.done and pending.wait().out is out
    assert np.all(out == comm.size)


def test_borrowed_arrays_live_until_the_end(comm):
    plan = zipfcoll.SparsePlan(comm, D, V)
    idx, rows = step_inputs(comm.rank, 0)
    want = plan.reduce(idx, rows).rows.copy()
    with comm.group():
        # Temporaries only the Pending holds; the plan destroyed before it runs.
        summed = comm.allreduce(np.full(5, float(comm.rank), np.float32))
        reduced = plan.reduce(idx.copy(), rows.copy())
        plan.destroy()
        gc.collect()
    assert np.array_equal(summed.wait().out, np.full(5, comm.size * (comm.size - 1) / 2))
    assert np.array_equal(reduced.wait().rows, want)


def test_a_mismatch_fails_every_rank_and_writes_nothing(comm):
    if comm.size == 1:
        pytest.skip("a disagreement needs two ranks")
    out = np.full(2, -1.0, np.float32)
    with pytest.raises(zipfcoll.MismatchError, match="number of calls") as e:
        with comm.group():
            first = comm.allreduce(np.ones(2, np.float32), out)
            if comm.rank == 0:
                comm.allreduce(np.ones(3, np.float32))
    assert "rank 0 has 2" in str(e.value)
    assert np.all(out == -1.0)
    with pytest.raises(zipfcoll.MismatchError, match="number of calls"):
        first.wait()
    # The communicator works on.
    assert comm.allreduce(np.ones(2, np.float32)).out[0] == comm.size


def test_an_argument_refused_on_one_rank_fails_the_others(comm):
    # Refused by the module before the library sees it, on one rank: every rank's group fails
    # with that rank's error, and so does each call's Pending.
    bad = comm.size - 1
    pendings = []
    with pytest.raises(zipfcoll.InvalidArgumentError, match=f"rank {bad}: send must hold "
                       "float32 values, not an unsupported type"):
        with comm.group():
            pendings.append(comm.allreduce(np.ones(2, np.float32)))
            send = np.ones(2, np.float64 if comm.rank == bad else np.float32)
            pendings.append(comm.allreduce(send))
    for p in pendings:
        with pytest.raises(zipfcoll.InvalidArgumentError, match=f"rank {bad}: "):
            p.wait()
    assert comm.allreduce(np.ones(2, np.float32)).out[0] == comm.size


def test_a_call_that_cannot_be_grouped_fails_the_group(comm):
    with pytest.raises(zipfcoll.InvalidUsageError, match="zfcUniqueMerge"):
        with comm.group():
            pending = comm.allreduce(np.ones(2, np.float32))
            comm.unique_merge(np.arange(3, dtype=np.int32), 10)
    with pytest.raises(zipfcoll.InvalidUsageError, match="zfcUniqueMerge"):
        pending.wait()


def test_a_plan_runs_once_per_group(comm):
    plan = zipfcoll.SparsePlan(comm, D, V)
    idx, rows = step_inputs(comm.rank, 0)
    with pytest.raises(zipfcoll.InvalidUsageError, match="runs twice in one group"):
        with comm.group():
            plan.reduce(idx, rows)
            plan.reduce(idx, rows)
    plan.destroy()


def test_an_aborted_communicator_fails_its_open_group(fresh_comm):
    fresh_comm.group_start()
    pending = fresh_comm.allreduce(np.ones(2, np.float32))
    fresh_comm.abort()
    with pytest.raises(zipfcoll.InvalidUsageError, match="aborted before its group ended"):
        pending.wait()
