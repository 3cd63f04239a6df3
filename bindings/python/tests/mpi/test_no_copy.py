"""Arrays pass without copies: outputs are the caller's arrays, written in place, inputs
are read where they lie (buffer protocol or DLPack), and a plan's results are views of its
own buffers."""

import tracemalloc

import numpy as np

import zipfcoll
from inputs import DIM, VOCAB, indices, rows


class DLPackOnly:
    """An array reachable only through __dlpack__, as a PyTorch CPU tensor is."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, stream=None):
        return self.array.__dlpack__()

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def test_allreduce_writes_the_given_output(comm):
    x = np.full(1000, comm.rank + 1, dtype=np.float32)
    out = np.empty_like(x)
    res = comm.allreduce(x, out)
    assert res.out is out
    assert np.all(out == sum(range(1, comm.size + 1)))
    # In place: send and out the same array.
    res = comm.allreduce(x, x)
    assert res.out is x and np.all(x == sum(range(1, comm.size + 1)))


def test_allreduce_through_dlpack_writes_the_producers_memory(comm):
    backing = np.full(257, 2.0, dtype=np.float32)
    wrapped = DLPackOnly(backing)
    res = comm.allreduce(wrapped, wrapped, compression="bf16")
    assert res.out is wrapped
    assert np.all(backing == 2.0 * comm.size)


def test_no_copy_of_a_large_buffer(comm):
    # NumPy reports its allocations to tracemalloc: a copy of the 64 MB input or output
    # would show in the peak.
    x = np.ones(16 << 20, dtype=np.float32)
    out = np.empty_like(x)
    tracemalloc.start()
    try:
        comm.allreduce(x, out)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, f"{peak} bytes allocated by Python during the call"
    assert out[0] == comm.size


def test_unique_merge_fills_the_given_arrays(comm):
    idx = indices(comm.rank)
    out = np.full(VOCAB, -1, dtype=np.int32)
    positions = np.empty(idx.size, dtype=np.int32)
    unique, pos = comm.unique_merge(idx, VOCAB, out=out, positions=positions)
    assert pos is positions
    assert np.shares_memory(unique, out) and unique.ctypes.data == out.ctypes.data
    assert np.all(out[unique.size:] == -1)  # nothing written past U_g
    assert np.array_equal(unique[positions], idx)
    none = comm.unique_merge(idx, VOCAB, out=out, positions=False)
    assert none.positions is None


def test_scatter_to_dense_and_apply_rows_write_in_place(comm):
    r = rows(comm.rank, 8)
    positions = np.array([0, 1, 2, 0, 1, 2, 3, 3], dtype=np.int32)
    dense = np.full((4, DIM), 7.0, dtype=np.float32)
    got = zipfcoll.scatter_to_dense(DLPackOnly(r), positions, 4, out=dense)
    assert got is dense
    assert np.array_equal(dense[0], r[0] + r[3])
    table = np.zeros((10, DIM), dtype=np.float32)
    zipfcoll.apply_rows(table, np.array([2, 5], dtype=np.int64), dense[:2].copy(), alpha=2.0)
    assert np.array_equal(table[2], 2.0 * dense[0]) and np.all(table[0] == 0)


def test_plan_results_are_read_only_views_of_the_plan(comm):
    idx = indices(comm.rank)
    with zipfcoll.SparsePlan(comm, DIM, VOCAB, algorithm="unique_allreduce") as plan:
        first = plan.reduce(idx, rows(comm.rank, idx.size))
        assert not first.rows.flags.writeable and not first.indices.flags.writeable
        assert not first.rows.flags.owndata
        address = first.rows.ctypes.data
        second = plan.reduce(idx, rows(comm.rank, idx.size))
        assert second.rows.ctypes.data == address  # the plan's buffer, reused
        assert first.rows.base is not None


def test_bfloat16_rows_as_uint16_bits(comm):
    idx = indices(comm.rank)
    r = rows(comm.rank, idx.size)
    bits = (r.view(np.uint32) >> 16).astype(np.uint16)  # exact: these values fit bf16
    with zipfcoll.SparsePlan(comm, DIM, VOCAB, row_type="bfloat16",
                             algorithm="unique_allreduce") as plan16, \
            zipfcoll.SparsePlan(comm, DIM, VOCAB, algorithm="unique_allreduce") as plan32:
        a = plan16.reduce(idx, bits)
        rows16 = a.rows.copy()
        b = plan32.reduce(idx, r)
        assert np.array_equal(rows16, b.rows)


def test_views_keep_a_destroyed_plans_buffers(comm):
    idx = indices(comm.rank)
    plan = zipfcoll.SparsePlan(comm, DIM, VOCAB, algorithm="unique_allgather")
    res = plan.reduce(idx, rows(comm.rank, idx.size))
    want = res.rows.copy()
    plan.destroy()
    with np.testing.assert_raises(zipfcoll.InvalidUsageError):
        plan.reduce(idx, rows(comm.rank, idx.size))
    # The buffers stay until the last view goes; then the plan is freed for real.
    scratch = [np.ones(1 << 16, np.float32) for _ in range(16)]
    assert np.array_equal(res.rows, want)
    del res, scratch
    comm.allreduce(np.zeros(1, np.float32))  # the communicator works on
