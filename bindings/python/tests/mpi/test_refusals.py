"""Arguments the module refuses itself, before the library sees the call (a dtype, a shape, a
strided array, a bad out array, a bad name), on one rank of a collective call: every rank
raises the same class at once, with the refusing rank's message, instead of the others
waiting for it. Run on a communicator with the default timeout_ms (10 minutes: a refusal left
on its rank would make the run outlast ctest's limit) and on one with a short timeout (the
others would raise TimeoutError instead). Each rank's outcome is gathered before anything is
asserted, so that a rank that fails a check still takes the same collective calls as the
others."""

import numpy as np
import pytest

import zipfcoll

SHORT_MS = 30000
D, V = 4, 100


@pytest.fixture(scope="module", params=["default timeout", "short timeout"])
def rcomm(request, world):
    kwargs = {} if request.param == "default timeout" else {"timeout_ms": SHORT_MS}
    c = zipfcoll.Comm.from_mpi4py(world, **kwargs)
    yield c
    if c.alive:
        c.destroy()


def outcome(call):
    """(class name, message) of the zipfcoll.Error `call` raised, else (None, "")."""
    try:
        call()
    except zipfcoll.Error as e:
        return type(e).__name__, str(e)
    return None, ""


def expect_refused_everywhere(comm, world, good, bad_call, cls, text, bad=None):
    """Rank `bad` (the last by default) makes `bad_call`, the others `good`: every rank
    raises `cls` with the same message, naming rank `bad` and containing `text`; the
    communicator works on."""
    bad = comm.size - 1 if bad is None else bad
    mine = outcome(bad_call if comm.rank == bad else good)
    everyone = world.allgather(mine)
    assert all(name == cls.__name__ for name, _ in everyone), everyone
    assert len({msg for _, msg in everyone}) == 1, everyone
    assert f"rank {bad}: " in mine[1] and text in mine[1], mine
    assert comm.allreduce(np.ones(2, np.float32)).out[0] == comm.size


def inputs(rank, k=6):
    idx = (np.arange(k, dtype=np.int32) * (rank + 3)) % V
    return idx, np.ones((k, D), np.float32)


# ---- SparsePlan.reduce ------------------------------------------------------------------

class ExportFails:
    """An array-like whose DLPack export raises, as torch's does for a tensor that requires
    grad: not a zipfcoll.Error, yet agreed like one."""

    def __dlpack__(self, stream=None):
        raise RuntimeError("this tensor cannot be exported")

    def __dlpack_device__(self):
        return (1, 0)


REDUCE_REFUSALS = {
    "an export that raises": (lambda idx, rows: (idx, ExportFails()),
                              "RuntimeError: this tensor cannot be exported"),
    "float64 rows": (lambda idx, rows: (idx, rows.astype(np.float64)),
                     "rows must hold float32, float16 or bfloat16 rows, not an unsupported"),
    "fewer rows than indices": (lambda idx, rows: (idx, rows[:-1]),
                                f"rows has {5 * D} elements; count x dim"),
    "float32 indices": (lambda idx, rows: (idx.astype(np.float32), rows),
                        "indices must hold int32 or int64 indices, not float32"),
    "int64 indices on an int32 plan": (lambda idx, rows: (idx.astype(np.int64), rows),
                                       "indices hold int64, but the plan was made for int32"),
    "strided rows": (lambda idx, rows: (idx, np.ones((rows.shape[0], 2 * D), np.float32)[:, ::2]),
                     "rows is not C-contiguous"),
    "a list of indices": (lambda idx, rows: (list(idx), rows),
                          "has neither the buffer protocol nor __dlpack__"),
}


@pytest.mark.parametrize("case", sorted(REDUCE_REFUSALS))
def test_reduce(rcomm, world, case):
    spoil, text = REDUCE_REFUSALS[case]
    idx, rows = inputs(rcomm.rank)
    with zipfcoll.SparsePlan(rcomm, D, V) as plan:
        expect_refused_everywhere(rcomm, world, lambda: plan.reduce(idx, rows),
                                  lambda: plan.reduce(*spoil(idx, rows)),
                                  zipfcoll.InvalidArgumentError, text)


def test_reduce_bad_stream_and_out_arrays(rcomm, world):
    idx, rows = inputs(rcomm.rank)
    good_out = (np.empty(64, np.int32), np.empty((64, D), np.float32))
    read_only = np.empty((64, D), np.float32)
    read_only.flags.writeable = False
    spoiled = {
        "stream must be None": dict(stream="cuda"),
        "out must be a tuple": dict(out=np.empty(64, np.int32)),
        "out indices must be a vector of int32": dict(out=(np.empty(64, np.int64), good_out[1])),
        "out rows must be a float32 matrix (64, 4)": dict(out=(good_out[0], np.empty((64, 3),
                                                                                     np.float32))),
        "out rows is read-only": dict(out=(good_out[0], read_only)),
    }
    with zipfcoll.SparsePlan(rcomm, D, V) as plan:
        for text, kwargs in spoiled.items():
            expect_refused_everywhere(rcomm, world, lambda: plan.reduce(idx, rows, out=good_out),
                                      lambda: plan.reduce(idx, rows, **kwargs),
                                      zipfcoll.InvalidArgumentError, text)


def test_reduce_refused_on_rank_one_of_several(rcomm, world):
    # Not only the last rank: the refusing rank's number is the one every rank names.
    idx, rows = inputs(rcomm.rank)
    with zipfcoll.SparsePlan(rcomm, D, V) as plan:
        expect_refused_everywhere(rcomm, world, lambda: plan.reduce(idx, rows),
                                  lambda: plan.reduce(idx, rows.astype(np.float64)),
                                  zipfcoll.InvalidArgumentError, "not an unsupported", bad=1)


def test_reduce_refused_on_every_rank_names_the_first(rcomm, world):
    idx, rows = inputs(rcomm.rank)
    with zipfcoll.SparsePlan(rcomm, D, V) as plan:
        bad = lambda: plan.reduce(idx, rows.astype(np.float64))  # noqa: E731
        expect_refused_everywhere(rcomm, world, bad, bad, zipfcoll.InvalidArgumentError,
                                  "not an unsupported", bad=0)


# ---- the other plan calls -----------------------------------------------------------------

def test_reduce_bounded(rcomm, world):
    idx, rows = inputs(rcomm.rank)
    out = (np.empty(64, np.int32), np.empty((64, D), np.float32))
    with zipfcoll.SparsePlan(rcomm, D, V) as plan:
        good = lambda: plan.reduce_bounded(idx, rows, out=out)  # noqa: E731
        expect_refused_everywhere(rcomm, world, good,
                                  lambda: plan.reduce_bounded(idx, rows[:-1], out=out),
                                  zipfcoll.InvalidArgumentError, "count x dim")
        expect_refused_everywhere(rcomm, world, good,
                                  lambda: plan.reduce_bounded(idx, rows, out=out,
                                                              status=np.zeros(3, np.int64)),
                                  zipfcoll.InvalidArgumentError, "status must be 2 int64")
        # Once the plan agreed this capacity, the others' calls agree in their kernels: they
        # find the refusal in their status, as any rank's failure, and the next call that is
        # not bounded raises it; the refusing rank's call raises it.
        assert good().ok
        bad = rcomm.size - 1
        if rcomm.rank == bad:
            mine = outcome(lambda: plan.reduce_bounded(idx.astype(np.float32), rows, out=out))
        else:
            st = plan.reduce_bounded(idx, rows, out=out)
            mine = (None if st.ok else st.result, "")
        later = outcome(rcomm.check_async_error)
        everyone = world.allgather((mine, later))
        for r, (got, after) in enumerate(everyone):
            if r == bad:
                assert got[0] == "InvalidArgumentError" and f"rank {bad}: " in got[1], got
                assert after == (None, ""), after
            else:
                assert got[0] == "invalid argument", got
                assert after[0] == "InvalidArgumentError", after
        assert rcomm.allreduce(np.ones(2, np.float32)).out[0] == rcomm.size


def test_reduce_apply(rcomm, world):
    idx, rows = inputs(rcomm.rank)
    table = np.zeros((V, D), np.float32)
    with zipfcoll.SparsePlan(rcomm, D, V) as plan:
        good = lambda: plan.reduce_apply(idx, rows, table)  # noqa: E731
        before = table.copy()
        expect_refused_everywhere(rcomm, world, good,
                                  lambda: plan.reduce_apply(idx, rows,
                                                            np.zeros((V, 2), np.float32)),
                                  zipfcoll.InvalidArgumentError, "table must be a float32 matrix")
        expect_refused_everywhere(rcomm, world, good,
                                  lambda: plan.reduce_apply(idx, rows, table, update="momentum"),
                                  zipfcoll.InvalidArgumentError, "update 'momentum'")
        assert np.array_equal(table, before)  # no table changed on any rank


def test_sharded_calls(rcomm, world):
    idx, rows = inputs(rcomm.rank)
    shard = np.zeros((zipfcoll.shard_rows(V, rcomm.size, rcomm.rank), D), np.float32)
    with zipfcoll.SparsePlan(rcomm, D, V) as plan:
        expect_refused_everywhere(rcomm, world, lambda: plan.sharded_gather(shard, idx),
                                  lambda: plan.sharded_gather(shard.astype(np.float64), idx),
                                  zipfcoll.InvalidArgumentError, "shard must be a float32 matrix")
        expect_refused_everywhere(rcomm, world,
                                  lambda: plan.sharded_reduce_apply(idx, rows, shard),
                                  lambda: plan.sharded_reduce_apply(idx, rows[:-1], shard),
                                  zipfcoll.InvalidArgumentError, "count x dim")
        assert not shard.any()


# ---- the communicator's calls -------------------------------------------------------------

def test_allreduce(rcomm, world):
    send = np.ones(8, np.float32)
    good = lambda: rcomm.allreduce(send)  # noqa: E731
    for text, bad in {
        "send must hold float32 values, not an unsupported": lambda: rcomm.allreduce(
            send.astype(np.float64)),
        "out has 7 elements": lambda: rcomm.allreduce(send, np.empty(7, np.float32)),
        "send is not C-contiguous": lambda: rcomm.allreduce(np.ones(16, np.float32)[::2]),
        "compression 'fp8'": lambda: rcomm.allreduce(send, compression="fp8"),
    }.items():
        expect_refused_everywhere(rcomm, world, good, bad, zipfcoll.InvalidArgumentError, text)


def test_unique_merge(rcomm, world):
    idx, _ = inputs(rcomm.rank)
    good = lambda: rcomm.unique_merge(idx, V)  # noqa: E731
    expect_refused_everywhere(rcomm, world, good,
                              lambda: rcomm.unique_merge(idx.astype(np.float64), V),
                              zipfcoll.InvalidArgumentError, "int32 or int64")
    expect_refused_everywhere(rcomm, world, good,
                              lambda: rcomm.unique_merge(idx, V,
                                                         positions=np.empty(6, np.int64)),
                              zipfcoll.InvalidArgumentError, "positions must be int32")


def test_seed_group(rcomm, world):
    made = []
    good = lambda: made.append(zipfcoll.SeedGroup(rcomm, "log2"))  # noqa: E731
    expect_refused_everywhere(rcomm, world, good,
                              lambda: zipfcoll.SeedGroup(rcomm, "fibonacci"),
                              zipfcoll.InvalidArgumentError, "fibonacci")
    for g in made:
        g.destroy()


# ---- groups -------------------------------------------------------------------------------

def test_a_refused_call_fails_its_group_everywhere(rcomm, world):
    idx, rows = inputs(rcomm.rank)
    bad = rcomm.size - 1
    out = np.full(2, -1.0, np.float32)
    with zipfcoll.SparsePlan(rcomm, D, V) as plan:
        pendings = []

        def step():
            with rcomm.group():
                pendings.append(rcomm.allreduce(np.ones(2, np.float32), out))
                r = rows.astype(np.float64) if rcomm.rank == bad else rows
                pendings.append(plan.reduce(idx, r))

        mine = outcome(step)
        everyone = world.allgather(mine)
        assert all(name == "InvalidArgumentError" for name, _ in everyone), everyone
        assert len({msg for _, msg in everyone}) == 1, everyone
        assert f"rank {bad}: rows must hold float32" in mine[1], mine
        for p in pendings:
            assert p.done
            with pytest.raises(zipfcoll.InvalidArgumentError, match=f"rank {bad}: "):
                p.wait()
        assert np.array_equal(out, np.full(2, -1.0, np.float32))  # nothing written
    assert rcomm.allreduce(np.ones(2, np.float32)).out[0] == rcomm.size


def test_a_group_of_one_refused_call(rcomm, world):
    # The refusing rank's library group holds nothing: it still takes part in the end.
    send = np.ones(3, np.float32)
    bad = rcomm.size - 1

    def step():
        with rcomm.group():
            rcomm.allreduce(send.astype(np.float64) if rcomm.rank == bad else send)

    mine = outcome(step)
    everyone = world.allgather(mine)
    assert all(name == "InvalidArgumentError" for name, _ in everyone), everyone
    assert f"rank {bad}: send must hold float32" in mine[1], mine
    assert rcomm.allreduce(np.ones(2, np.float32)).out[0] == rcomm.size


def test_a_call_refused_in_a_group_by_the_library_fails_the_group(rcomm, world):
    # reduce_bounded is no group's: the library refuses it on the rank that makes it and
    # fails that rank's group, so the group fails on every rank.
    idx, rows = inputs(rcomm.rank)
    out = (np.empty(64, np.int32), np.empty((64, D), np.float32))
    bad = rcomm.size - 1
    with zipfcoll.SparsePlan(rcomm, D, V) as plan:
        def step():
            with rcomm.group():
                rcomm.allreduce(np.ones(2, np.float32))
                if rcomm.rank == bad:
                    plan.reduce_bounded(idx, rows, out=out)

        mine = outcome(step)
        everyone = world.allgather(mine)
        assert all(name == "InvalidUsageError" for name, _ in everyone), everyone
        assert f"rank {bad}: zfcSparseReduceBounded was called between" in everyone[0][1]
    assert rcomm.allreduce(np.ones(2, np.float32)).out[0] == rcomm.size
