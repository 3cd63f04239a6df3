"""Each error a caller can cause raises its own zipfcoll.Error subclass, with the
library's message naming the bad value and the rank, on every rank that took part."""

import socket

import numpy as np
import pytest

import zipfcoll


def test_every_result_code_has_its_class():
    codes = range(1, 12)
    classes = [zipfcoll.error_class(c) for c in codes]
    assert len(set(classes)) == len(classes)
    for code, cls in zip(codes, classes):
        assert issubclass(cls, zipfcoll.Error) and cls.code == code
        assert cls.result == zipfcoll._zipfcoll.error_string(code)
    assert zipfcoll.error_class(99) is zipfcoll.Error


def test_invalid_argument_names_the_index_and_rank(comm):
    idx = np.array([1, 2, 3], dtype=np.int32)
    if comm.rank == comm.size - 1:
        idx[1] = 5000
    with pytest.raises(zipfcoll.InvalidArgumentError) as e:
        comm.unique_merge(idx, 1000)
    assert isinstance(e.value, ValueError)
    assert "5000" in str(e.value) and f"rank {comm.size - 1}" in str(e.value)
    # The communicator works on after an argument error.
    assert comm.allreduce(np.ones(2, np.float32)).out[0] == comm.size


def test_invalid_argument_before_the_library(comm):
    with pytest.raises(zipfcoll.InvalidArgumentError, match="int32 or int64"):
        comm.unique_merge(np.zeros(3, np.float64), 10)
    with pytest.raises(zipfcoll.InvalidArgumentError, match="read-only"):
        x = np.ones(3, np.float32)
        x.flags.writeable = False
        comm.allreduce(np.ones(3, np.float32), x)
    with pytest.raises(zipfcoll.InvalidArgumentError, match="C-contiguous"):
        comm.allreduce(np.ones((4, 4), np.float32)[:, 1])
    with pytest.raises(zipfcoll.InvalidArgumentError, match="compression 'fp8'"):
        comm.allreduce(np.ones(3, np.float32), compression="fp8")
    with pytest.raises(zipfcoll.InvalidArgumentError, match="buffer protocol nor __dlpack__"):
        comm.allreduce([1.0, 2.0])


def test_invalid_usage(fresh_comm):
    plan = zipfcoll.SparsePlan(fresh_comm, 4, 100)
    result = plan.reduce(np.array([1], np.int32), np.ones((1, 4), np.float32))
    with pytest.raises(zipfcoll.InvalidUsageError, match="plans is still referenced"):
        fresh_comm.destroy()  # the result's arrays point into a plan on it
    del result
    fresh_comm.destroy()  # and the plan with it
    plan.destroy()  # already freed: nothing to do
    with pytest.raises(zipfcoll.InvalidUsageError, match="destroyed"):
        fresh_comm.allreduce(np.ones(2, np.float32))


def test_mismatch_when_ranks_disagree(comm):
    dim = 4 + comm.rank  # every rank a different width
    with zipfcoll.SparsePlan(comm, dim, 100) as plan:
        idx = np.array([1, 2], dtype=np.int32)
        if comm.size == 1:
            pytest.skip("one rank cannot disagree with another")
        with pytest.raises(zipfcoll.MismatchError, match="dim"):
            plan.reduce(idx, np.ones((2, dim), np.float32))


def test_unsupported(comm):
    # One node of ranks cannot run the two-level exchange.
    with zipfcoll.SparsePlan(comm, 4, 100, algorithm="hierarchical") as plan:
        with pytest.raises(zipfcoll.UnsupportedError, match="hierarchical"):
            plan.reduce(np.array([1], np.int32), np.ones((1, 4), np.float32))


def test_out_of_memory(comm):
    # dense_vocab sums into a V x (D + 1) matrix: 2^31 x 2^20 floats cannot be allocated,
    # on any rank alike.
    vocab, dim = 2**31 - 1, 2**20
    with zipfcoll.SparsePlan(comm, dim, vocab, algorithm="dense_vocab") as plan:
        with pytest.raises(zipfcoll.OutOfMemoryError) as e:
            plan.reduce(np.zeros(0, np.int32), np.zeros((0, dim), np.float32))
        assert isinstance(e.value, MemoryError)
    assert comm.allreduce(np.ones(1, np.float32)).out[0] == comm.size


def _one_process_only():
    # These tests each stand up their own rendezvous on a port drawn free by bind(0) and
    # closed again; the pytest processes of one run share the host, so two of them could
    # draw the same port and meet each other's server. One process runs them.
    from mpi4py import MPI
    if MPI.COMM_WORLD.rank != 0:
        pytest.skip("runs in the first process only (a port drawn free is not reserved)")


def _set_rendezvous(monkeypatch, rank, size, port):
    for name, value in [("RANK", rank), ("WORLD_SIZE", size), ("MASTER_ADDR", "127.0.0.1"),
                        ("MASTER_PORT", port), ("LOCAL_RANK", rank)]:
        monkeypatch.setenv("ZIPFCOLL_" + name, str(value))


def test_system_error_for_a_port_in_use(monkeypatch):
    _one_process_only()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        _set_rendezvous(monkeypatch, 0, 2, s.getsockname()[1])
        with pytest.raises(zipfcoll.SystemCallError, match="port") as e:
            zipfcoll.Comm.from_env(timeout_ms=300)
    assert isinstance(e.value, OSError)


def test_timeout_when_no_peer_arrives(monkeypatch):
    _one_process_only()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    _set_rendezvous(monkeypatch, 0, 2, port)
    with pytest.raises(zipfcoll.TimeoutError, match="1 of 2 ranks arrived") as e:
        zipfcoll.Comm.from_env(timeout_ms=300)
    assert isinstance(e.value, TimeoutError)  # the built-in, too


def test_invalid_usage_for_a_missing_variable(monkeypatch):
    for name in ["ZIPFCOLL_RANK", "RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID"]:
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(zipfcoll.InvalidUsageError, match="RANK"):
        zipfcoll.Comm.from_env(timeout_ms=300)
