"""Every call through Python returns the same bits as the same call through the C API
(zfc_py_reference, run by ctest on the same ranks and inputs)."""

import os

import numpy as np
import pytest

import zipfcoll
from inputs import DIM, VOCAB, dense_values, indices, rows

ALGORITHMS = ["allgather", "unique_allreduce", "unique_allgather", "owner_partitioned",
              "dense_vocab", "key_routed"]


def expect(reference_dir, name, rank, dtype):
    path = os.path.join(reference_dir, f"{name}.r{rank}.bin")
    return np.fromfile(path, dtype=dtype)


def same_bits(got, want):
    got = np.ascontiguousarray(got).reshape(-1)
    assert got.dtype == want.dtype
    assert got.size == want.size
    assert got.tobytes() == want.tobytes()


def test_unique_merge_and_scatter_to_dense(comm, reference_dir):
    r = comm.rank
    idx = indices(r)
    unique, positions = comm.unique_merge(idx, VOCAB)
    same_bits(unique, expect(reference_dir, "unique_merge_unique", r, np.int32))
    same_bits(positions, expect(reference_dir, "unique_merge_positions", r, np.int32))
    dense = zipfcoll.scatter_to_dense(rows(r, idx.size), positions, unique.size)
    same_bits(dense, expect(reference_dir, "scatter_to_dense", r, np.float32))


@pytest.mark.parametrize("kind,scale", [("none", 1.0), ("fp16", 4.0), ("bf16", 1.0),
                                        ("int8", 1.0), ("fp8_e4m3", 1.0)])
def test_allreduce(comm, reference_dir, kind, scale):
    r = comm.rank
    out, overflowed = comm.allreduce(dense_values(r), compression=kind, scale=scale)
    same_bits(out, expect(reference_dir, f"allreduce_{kind}", r, np.float32))
    flag = expect(reference_dir, f"allreduce_{kind}_overflow", r, np.int32)
    assert overflowed == bool(flag[0]) and not overflowed


def test_allreduce_overflow_flag(comm, reference_dir):
    x = dense_values(comm.rank)
    if comm.rank == comm.size - 1:
        x[3] = 1e30
    _, overflowed = comm.allreduce(x, x, compression="fp16", scale=1.0)
    assert overflowed
    assert expect(reference_dir, "allreduce_overflow_flag", comm.rank, np.int32)[0] == 1


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("compression", ["none", "fp16"])
def test_sparse_reduce(comm, reference_dir, algorithm, compression):
    r = comm.rank
    idx = indices(r)
    name = f"sparse_{algorithm}_{compression}"
    with zipfcoll.SparsePlan(comm, DIM, VOCAB, algorithm=algorithm, compression=compression,
                             scale=2.0) as plan:
        res = plan.reduce(idx, rows(r, idx.size))
        assert res.algorithm == algorithm
        assert not res.overflowed
        same_bits(res.indices, expect(reference_dir, f"{name}_indices", r, np.int32))
        same_bits(res.rows, expect(reference_dir, f"{name}_rows", r, np.float32))
        last = comm.stats()["last"]
        stats = expect(reference_dir, f"{name}_stats", r, np.uint64)
        assert [last["bytes_sent"], last["bytes_received"],
                last["peak_workspace_bytes"]] == stats.tolist()
        if algorithm == "unique_allreduce" and compression == "none":
            table = np.full((VOCAB, DIM), 0.5, dtype=np.float32)
            zipfcoll.apply_rows(table, res.indices, res.rows, alpha=-0.25)
            same_bits(table, expect(reference_dir, "apply_rows_table", r, np.float32))


def test_sampler_and_seed_groups(comm, reference_dir):
    r = comm.rank
    targets = indices(r)[:10].astype(np.int64)
    s = zipfcoll.sample_log_uniform(1234 + r, VOCAB, 50, unique=True, targets=targets)
    same_bits(s.samples, expect(reference_dir, "sampler_samples", r, np.int64))
    same_bits(s.sample_expected, expect(reference_dir, "sampler_expected", r, np.float32))
    same_bits(s.target_expected,
              expect(reference_dir, "sampler_target_expected", r, np.float32))
    assert s.num_draws == expect(reference_dir, "sampler_draws", r, np.uint64)[0]
    with zipfcoll.SeedGroup(comm, "power", 0.64, base_seed=99) as group:
        assert [group.id, group.count] == expect(reference_dir, "seed_group_info", r,
                                                 np.int32).tolist()
        seed = expect(reference_dir, "seed_group_step_seed", r, np.uint64)[0]
        assert group.step_seed(7) == seed
        assert zipfcoll.step_seed(99, group.id, 7) == seed
