"""Communicators made without MPI (zipfcoll.get_unique_id and Comm.from_unique_id, over
UCX), between this process as rank 0 and a child process as rank 1: a healthy sum, then a
peer that vanishes, which rank 0 sees as zipfcoll.RemoteError instead of a hang."""

import subprocess
import sys

import numpy as np
import pytest

import zipfcoll

CHILD = """
import os, sys
import numpy as np
import zipfcoll
comm = zipfcoll.Comm.from_unique_id(2, bytes.fromhex(sys.argv[1]), 1, timeout_ms=20000)
if sys.argv[2] == "vanish":
    os._exit(0)  # no goodbye: the connection just closes
out = comm.allreduce(np.full(5, 2.0, np.float32)).out
print(out.tolist())
comm.destroy()
"""


def start_child(uid, mode):
    return subprocess.Popen([sys.executable, "-c", CHILD, uid.hex(), mode],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def ucx_available():
    try:
        zipfcoll.get_unique_id()
    except zipfcoll.UnsupportedError:
        return False
    return True


pytestmark = pytest.mark.skipif(not ucx_available(),
                                reason="this build has no UCX transport (libucx-dev)")


def test_two_processes_sum():
    uid = zipfcoll.get_unique_id()
    child = start_child(uid, "sum")
    with zipfcoll.Comm.from_unique_id(2, uid, 0, timeout_ms=20000) as comm:
        assert comm.size == 2 and comm.rank == 0
        out = comm.allreduce(np.full(5, 1.0, np.float32)).out
    stdout, stderr = child.communicate(timeout=60)
    assert child.returncode == 0, stderr
    assert out.tolist() == [3.0] * 5 and stdout.strip() == str([3.0] * 5)


def test_a_vanished_peer_is_a_remote_error():
    uid = zipfcoll.get_unique_id()
    child = start_child(uid, "vanish")
    comm = zipfcoll.Comm.from_unique_id(2, uid, 0, timeout_ms=20000)
    # The child has exited, so the kernel has closed its end of every connection: the
    # allreduce below finds the peer gone whenever the library notices it, before or
    # during the call.
    assert child.wait(timeout=60) == 0
    # A remote error, not the timeout: the library noticed the peer is gone.
    with pytest.raises(zipfcoll.RemoteError, match="rank 1") as e:
        comm.allreduce(np.ones(5, np.float32))
    print(e.value)
    comm.abort()
    with pytest.raises(zipfcoll.InvalidUsageError, match="destroyed or aborted"):
        comm.allreduce(np.ones(5, np.float32))


def test_a_bad_unique_id_is_an_invalid_argument():
    with pytest.raises(zipfcoll.InvalidArgumentError, match="128"):
        zipfcoll.Comm.from_unique_id(2, b"short", 0)
