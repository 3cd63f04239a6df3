"""Table updates from Python: the fused reduce_apply gives the bits of reduce() then the same
update in NumPy; a sharded table, gathered, matches the replicated one; the sharded calls in
a group give what they give alone, and an overflow in the group changes no shard; bad input
raises the same class on every rank and writes nothing."""

import numpy as np
import pytest

import zipfcoll

VOCAB, DIM = 500, 6


def step_input(rank, step):
    rng = np.random.default_rng(100 * step + rank)
    idx = (rng.zipf(1.3, size=80 + 7 * rank) - 1) % VOCAB
    return idx.astype(np.int32), rng.standard_normal((idx.size, DIM)).astype(np.float32)


def fresh_table():
    return (np.arange(VOCAB * DIM, dtype=np.float32).reshape(VOCAB, DIM) % 97) / 97 - 0.5


@pytest.mark.parametrize("chunk", [0, 1])
def test_reduce_apply_matches_reduce_then_sgd(comm, chunk):
    want, got = fresh_table(), fresh_table()
    lr = np.float32(0.05)
    with zipfcoll.SparsePlan(comm, DIM, VOCAB, algorithm="owner_partitioned") as ref, \
            zipfcoll.SparsePlan(comm, DIM, VOCAB, stream_chunk_bytes=chunk) as fused:
        for step in range(3):
            idx, rows = step_input(comm.rank, step)
            res = ref.reduce(idx, rows)
            want[res.indices] -= lr * res.rows
            assert fused.reduce_apply(idx, rows, got, update="sgd", alpha=lr) is False
            assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    assert comm.stats()["last"]["algorithm"] == "key_routed"


def test_sharded_table_matches_the_replicated_one(comm):
    table = fresh_table()
    rows_here = zipfcoll.shard_rows(VOCAB, comm.size, comm.rank)
    shard = np.empty((rows_here, DIM), np.float32)
    for v in range(VOCAB):
        owner, row = zipfcoll.shard_locate(VOCAB, comm.size, v)
        if owner == comm.rank:
            shard[row] = table[v]
    with zipfcoll.SparsePlan(comm, DIM, VOCAB, algorithm="owner_partitioned") as ref, \
            zipfcoll.SparsePlan(comm, DIM, VOCAB) as plan:
        for step in range(3):
            idx, rows = step_input(comm.rank, step)
            looked = plan.sharded_gather(shard, idx)
            assert np.array_equal(looked.indices, np.unique(idx))
            assert np.array_equal(looked.indices[looked.positions], idx)
            assert np.array_equal(looked.rows, table[looked.indices])
            res = ref.reduce(idx, rows)
            table[res.indices] -= np.float32(0.1) * res.rows
            assert plan.sharded_reduce_apply(idx, rows, shard, update="sgd", alpha=0.1) is False
        everything = plan.sharded_gather(shard, np.arange(VOCAB, dtype=np.int32))
        assert np.array_equal(everything.rows.view(np.uint32), table.view(np.uint32))


def cut_shard(comm, table):
    """This rank's shard of a replicated table."""
    shard = np.empty((zipfcoll.shard_rows(VOCAB, comm.size, comm.rank), DIM), np.float32)
    for v in range(VOCAB):
        owner, row = zipfcoll.shard_locate(VOCAB, comm.size, v)
        if owner == comm.rank:
            shard[row] = table[v]
    return shard


def same_bits(a, b):
    return np.array_equal(np.ascontiguousarray(a).view(np.uint32),
                          np.ascontiguousarray(b).view(np.uint32))


def test_sharded_calls_in_a_group_give_what_they_give_alone(comm):
    tables = [fresh_table(), fresh_table() * np.float32(-2)]
    alone = [cut_shard(comm, t) for t in tables]
    grouped = [cut_shard(comm, t) for t in tables]
    idx, rows = step_input(comm.rank, 0)
    with zipfcoll.SparsePlan(comm, DIM, VOCAB) as a, zipfcoll.SparsePlan(comm, DIM, VOCAB) as b:
        plans = [a, b]
        want = [p.sharded_gather(s, idx) for p, s in zip(plans, alone)]
        want = [(w.indices.copy(), w.rows.copy(), w.positions.copy()) for w in want]
        with comm.group():
            pending = [p.sharded_gather(s, idx) for p, s in zip(plans, grouped)]
            assert not any(x.done for x in pending)
        for x, (indices, looked, positions) in zip(pending, want):
            got = x.wait()
            assert np.array_equal(got.indices, indices)
            assert same_bits(got.rows, looked)
            assert np.array_equal(got.positions, positions)
        for p, s in zip(plans, alone):
            assert p.sharded_reduce_apply(idx, rows, s, update="sgd", alpha=0.1) is False
        before = [s.copy() for s in grouped]
        with comm.group():
            pending = [p.sharded_reduce_apply(idx, rows, s, update="sgd", alpha=0.1)
                       for p, s in zip(plans, grouped)]
            # The owners write their shards when the group ends.
            assert all(same_bits(s, k) for s, k in zip(grouped, before))
        assert [x.wait() for x in pending] == [False, False]
        assert all(same_bits(s, k) for s, k in zip(grouped, alone))
        # A non-finite sum in one call of the group leaves every shard of both as it was.
        bad = rows.copy()
        if comm.rank == comm.size - 1:
            bad[0, 0] = np.inf
        before = [s.copy() for s in grouped]
        with comm.group():
            pending = [a.sharded_reduce_apply(idx, rows, grouped[0], update="sgd", alpha=0.1),
                       b.sharded_reduce_apply(idx, bad, grouped[1], update="sgd", alpha=0.1)]
        assert [x.wait() for x in pending] == [True, True]
        assert all(same_bits(s, k) for s, k in zip(grouped, before))


def test_bad_table_input_raises_everywhere_and_writes_nothing(comm):
    table = fresh_table()
    kept = table.copy()
    with zipfcoll.SparsePlan(comm, DIM, VOCAB) as plan:
        idx = np.array([1, 2, VOCAB if comm.rank == comm.size - 1 else 3], np.int32)
        rows = np.ones((3, DIM), np.float32)
        with pytest.raises(zipfcoll.InvalidArgumentError):
            plan.reduce_apply(idx, rows, table, update="sgd", alpha=0.5)
        with pytest.raises(zipfcoll.InvalidArgumentError, match="update 'momentum'"):
            plan.reduce_apply(idx, rows, table, update="momentum")
        with pytest.raises(zipfcoll.InvalidArgumentError, match="rows is required"):
            plan.sharded_reduce_apply(idx, None, table)
        with pytest.raises(zipfcoll.InvalidArgumentError, match="table must be"):
            plan.reduce_apply(idx, rows, np.zeros((VOCAB, 2), np.float32))
        with pytest.raises(zipfcoll.InvalidUsageError, match="zfcSparseReduceApply"):
            with comm.group():
                plan.reduce_apply(np.array([1], np.int32), np.ones((1, DIM), np.float32),
                                  table)
        # The communicator is still usable.
        assert plan.reduce_apply(np.array([4], np.int32), np.ones((1, DIM), np.float32),
                                 table, update="add", alpha=0.0) is False
    assert np.array_equal(table, kept)  # alpha 0 adds +0 to row 4


def test_reduce_into_the_callers_arrays(comm):
    idx, rows = step_input(comm.rank, 7)
    with zipfcoll.SparsePlan(comm, DIM, VOCAB) as plan:
        plain = plan.reduce(idx, rows)
        want_ids, want_rows = plain.indices.copy(), plain.rows.copy()
        ug = plain.num_unique
        out_ids = np.full(ug + comm.rank, -1, dtype=np.int32)
        out_rows = np.full((ug + comm.rank, DIM), np.nan, dtype=np.float32)
        res = plan.reduce(idx, rows, out=(out_ids, out_rows))
        assert res.num_unique == ug
        assert np.shares_memory(res.rows, out_rows)
        assert np.array_equal(out_ids[:ug], want_ids)
        assert np.array_equal(out_rows[:ug].view(np.uint32), want_rows.view(np.uint32))
        assert np.isnan(out_rows[ug:]).all()
        # Grouped, the arrays are written when the group ends.
        again = np.zeros((ug, DIM), dtype=np.float32)
        with comm.group():
            pending = plan.reduce(idx, rows, out=(np.zeros(ug, np.int32), again))
        assert np.array_equal(again.view(np.uint32), want_rows.view(np.uint32))
        assert np.shares_memory(pending.wait().rows, again)
        # Room for one row fewer than U_g on the last rank: every rank raises, nothing written.
        room = ug - 1 if comm.rank == comm.size - 1 else ug
        short = np.full((room, DIM), 7.0, dtype=np.float32)
        with pytest.raises(zipfcoll.InvalidArgumentError, match="capacity"):
            plan.reduce(idx, rows, out=(np.zeros(room, np.int32), short))
        assert (short == 7.0).all()
        with pytest.raises(zipfcoll.InvalidArgumentError, match="out rows"):
            plan.reduce(idx, rows, out=(out_ids, out_rows[:, :2]))
