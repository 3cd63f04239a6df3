"""zipfcoll: sparse-embedding collectives for data-parallel language-model training.

The embedding gradient of a step is K rows of width D per rank, one per token. zipfcoll
exchanges the step's distinct indices (U_g of them, far fewer than G*K by Zipf's law) and
reduces only U_g rows. Arrays pass without copies: anything with the buffer protocol
(NumPy) or ``__dlpack__`` (PyTorch, CuPy, JAX), host or CUDA memory.

    from mpi4py import MPI
    import zipfcoll
    comm = zipfcoll.Comm.from_mpi4py(MPI.COMM_WORLD)
    plan = zipfcoll.SparsePlan(comm, dim=512, vocab_size=100_000)
    res = plan.reduce(token_ids, grad_rows)  # res.indices, res.rows: the summed rows
    plan.reduce_apply(token_ids, grad_rows, table, update="sgd", alpha=lr)  # fused, streamed

    with comm.group():                       # a step's calls under one agreement
        rows = plan.reduce(token_ids, grad_rows)
        loss = comm.allreduce(loss_and_tokens)   # rides on the group's first exchange
    rows.wait().rows, loss.wait().out        # written when the block ends

Every failure raises a subclass of :class:`zipfcoll.Error` carrying the library's message;
an argument of a collective call refused on one rank raises the same error on every rank.
Every wait is bounded by the communicator's ``timeout_ms``: 600000 (10 minutes) unless
given, 0 for no bound.
"""

from ._errors import (
    Error,
    InProgressError,
    InternalError,
    InvalidArgumentError,
    InvalidUsageError,
    MismatchError,
    OutOfMemoryError,
    RemoteError,
    SystemCallError,
    TimeoutError,
    TransportError,
    UnsupportedError,
    error_class,
)
from ._results import (AllReduceResult, BoundedStatus, Samples, ShardedLookup, SparseResult,
                       UniqueMergeResult)
from ._zipfcoll import (
    Comm,
    DeviceArray,
    Group,
    Pending,
    SUM_BLOCK_ROWS,
    SeedGroup,
    SparsePlan,
    __version__,
    algorithm_name,
    apply_rows,
    get_unique_id,
    header_version,
    library_version,
    query_transport,
    sample_log_uniform,
    scatter_to_dense,
    shard_locate,
    shard_rows,
    step_seed,
)

__all__ = [
    "AllReduceResult", "BoundedStatus", "Comm", "DeviceArray", "Error", "Group", "InProgressError",
    "InternalError", "InvalidArgumentError", "InvalidUsageError", "MismatchError",
    "OutOfMemoryError", "Pending", "RemoteError", "SUM_BLOCK_ROWS", "Samples", "SeedGroup",
    "ShardedLookup",
    "SparsePlan", "SparseResult", "SystemCallError",
    "TimeoutError", "TransportError", "UniqueMergeResult", "UnsupportedError",
    "__version__", "algorithm_name", "apply_rows", "error_class", "get_unique_id",
    "header_version", "library_version", "query_transport", "sample_log_uniform",
    "scatter_to_dense", "shard_locate", "shard_rows", "step_seed", "transports",
]


def transports():
    """The transports this installation can run, each with the memory kinds it takes:
    ``{'mpi': ('host',), 'ucx': ('host',)}`` where the NCCL plugin or libnccl is missing.
    ``query_transport(name)`` says why one is not there."""
    found = {}
    for name in ("mpi", "nccl", "ucx"):
        try:
            found[name] = query_transport(name)
        except UnsupportedError:
            pass
    return found
