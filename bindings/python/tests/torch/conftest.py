"""Fixtures of the zipfcoll.torch tests, run under a real torchrun: every rank runs every
test in the same order, in a gloo process group (torch's own reference) beside a zipfcoll
communicator made from it."""

import pytest
import torch.distributed as dist

import zipfcoll.torch as zt

TIMEOUT_MS = 60000


@pytest.fixture(scope="session")
def group():
    dist.init_process_group("gloo")
    yield dist.group.WORLD
    dist.destroy_process_group()


@pytest.fixture(scope="session")
def comm(group):
    c = zt.comm_from_process_group(group, timeout_ms=TIMEOUT_MS)
    yield c
    c.destroy()
