"""The tuples zipfcoll's calls return."""

from typing import Any, NamedTuple, Optional


class UniqueMergeResult(NamedTuple):
    """Comm.unique_merge: the U_g sorted distinct indices of all ranks, and the position of
    each of this rank's indices among them (None when not asked for)."""
    unique: Any
    positions: Optional[Any]


class AllReduceResult(NamedTuple):
    """Comm.allreduce: the summed array, and whether some value of it is not finite (the
    same on every rank)."""
    out: Any
    overflowed: bool


class SparseResult(NamedTuple):
    """SparsePlan.reduce: views of the plan's buffers, valid until its next reduce.
    `overflowed` is None, and `overflow_flag` a DeviceArray of one int32, when the call
    returned with its step queued (a plan made with overflow_on_device=True): the flag's
    stream sets it to 1 when some sum overflowed on any rank, else 0. The flag is valid
    until the plan's next call of any kind (reduce_bounded and reduce_apply too), which
    resets it."""
    indices: Any
    rows: Any
    num_unique: int
    overflowed: Optional[bool]
    algorithm: str
    overflow_flag: Optional[Any] = None


class BoundedStatus(NamedTuple):
    """SparsePlan.reduce_bounded on host arrays: U_g, the text of the step's result code (as
    zfcGetErrorString gives it: "no error" on success), whether it succeeded (the buffers
    are written only then), and whether some value overflowed."""
    num_unique: int
    result: str
    ok: bool
    overflowed: bool


class ShardedLookup(NamedTuple):
    """SparsePlan.sharded_gather: this rank's distinct indices and their rows (views of the
    plan's buffers, valid until its next call), and each index's place among them."""
    indices: Any
    rows: Any
    positions: Optional[Any]


class Samples(NamedTuple):
    """sample_log_uniform: the ids, their expected counts, the targets' expected counts
    (None without targets) and the number of draws made."""
    samples: Any
    sample_expected: Any
    target_expected: Optional[Any]
    num_draws: int
