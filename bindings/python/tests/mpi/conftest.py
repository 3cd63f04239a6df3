"""Fixtures of the tests run under mpirun: every rank runs every test, in the same order.
A communicator bounds its waits, so a test that fails on one rank ends the others' calls
with an error instead of a hang."""

import os

import pytest
from mpi4py import MPI

import zipfcoll

TIMEOUT_MS = 60000


@pytest.fixture(scope="session")
def world():
    return MPI.COMM_WORLD


@pytest.fixture(scope="session")
def comm(world):
    c = zipfcoll.Comm.from_mpi4py(world, timeout_ms=TIMEOUT_MS)
    yield c
    if c.alive:
        c.destroy()


@pytest.fixture
def fresh_comm(world):
    """A communicator of its own, for tests that break or end theirs."""
    c = zipfcoll.Comm.from_mpi4py(world, timeout_ms=TIMEOUT_MS)
    yield c
    if c.alive:
        c.abort()


@pytest.fixture(scope="session")
def reference_dir():
    """Where zfc_py_reference wrote the C API's answers (ctest runs it first)."""
    d = os.environ.get("ZIPFCOLL_PY_REFERENCE", "")
    if not d or not os.path.isdir(d):
        pytest.fail("ZIPFCOLL_PY_REFERENCE must name the folder zfc_py_reference wrote "
                    "(ctest sets it up; by hand: mpirun -np G zfc_py_reference DIR)")
    return d
