"""zipfcoll for PyTorch users: a communicator from a ``torch.distributed`` process group or
store, and one DDP communication hook for sparse and dense gradients. Importable only where
torch is.

    import torch.distributed as dist
    import zipfcoll.torch as zt
    dist.init_process_group("gloo")               # under torchrun
    comm = zt.comm_from_process_group()           # zipfcoll's own transport (UCX or NCCL)
    model = torch.nn.parallel.DistributedDataParallel(model)   # embeddings sparse=True
    state = zt.HookState(comm)                    # fp32 on the wire unless asked
    model.register_comm_hook(state, zt.hook)
    ...
    loss.backward()                               # every gradient: the ranks' mean
    state.step(optimizer)                         # skipped on every rank if a sum overflowed

DDP broadcasts every parameter from rank 0 when it wraps the model, sparse embeddings
included, and hands their sparse gradients to the hook (see ``zipfcoll._torch_hook``).
:class:`ShardedEmbedding` is an embedding table split over the ranks, updated where its
rows live. :class:`SparseEmbeddingSync` and :func:`allreduce_hook` are the earlier two-part form (the
embeddings hidden from DDP and synchronised by hand); they remain for code that uses them.
"""

import collections
import hashlib

import numpy as np
import torch
import torch.distributed as dist

from ._torch_hook import _ROW_TYPES, HookState, as_tensor as _as_tensor, hook
from ._torch_sharded import ShardedEmbedding
from ._zipfcoll import Comm, SparsePlan, get_unique_id

__all__ = [
    "AllReduceHookState", "HookState", "ShardedEmbedding", "SparseEmbeddingSync", "allreduce_hook",
    "comm_from_process_group", "comm_from_store", "hook",
]

# How many communicators this process has made under each key prefix: every member of a
# group makes its communicators in the same order, so the n-th of one member meets the n-th
# of the others at the same key.
_made = collections.Counter()


def comm_from_store(store, rank, size, *, prefix="zipfcoll", **config):
    """Collective over the `size` processes that share `store` (any ``torch.distributed``
    store: TCPStore, FileStore, PrefixStore). Rank 0 makes a unique id and sets it under a key
    of `prefix`; the others get it from the store (waiting as the store's ``get`` does), as
    torch passes NCCL's id. `config` is that of :meth:`zipfcoll.Comm.from_unique_id`
    (transport, device, timeout_ms, algorithm, compression, ...)."""
    key = f"{prefix}/comm{_made[prefix]}"
    _made[prefix] += 1
    if rank == 0:
        unique_id = get_unique_id()
        store.set(key, unique_id)
    else:
        unique_id = bytes(store.get(key))
    return Comm.from_unique_id(size, unique_id, rank, **config)


def comm_from_process_group(group=None, **config):
    """Collective over the members of `group` (default: the world), which must have been made
    with ``torch.distributed``: a zipfcoll communicator of the same ranks, in the same order,
    meeting through the default store of ``init_process_group``. For CUDA tensors pass
    ``transport="nccl", device=torch.cuda.current_device()``."""
    group = dist.group.WORLD if group is None else group
    ranks = dist.get_process_group_ranks(group)
    # A key per group, the same on every member: the hash of its global ranks.
    digest = hashlib.sha1(",".join(map(str, ranks)).encode()).hexdigest()[:16]
    store = dist.distributed_c10d._get_default_store()
    return comm_from_store(store, dist.get_rank(group), len(ranks),
                           prefix=f"zipfcoll/group-{digest}", **config)


class SparseEmbeddingSync:
    """Replaces the sparse gradient of every wrapped ``nn.Embedding(sparse=True)`` or
    ``nn.EmbeddingBag(sparse=True)`` by the reduced gradient of all ranks: the sum from
    ``zfcSparseReduce`` divided by the number of ranks (``average=True``, what DDP gives), or
    the sum. One plan per module, made here: `algorithm`, `compression` ('none', 'fp16',
    'bf16', 'fp8_e4m3', 'fp8_e5m2', 'int8', each but 'none' also '..._sr'; None: the
    communicator's) and `scale` are the plan's. Indices are int64 and rows
    keep the weight's dtype (float32, float16 or bfloat16) on the wire's way in; the sums are
    fp32, cast back to the weight's dtype."""

    def __init__(self, comm, modules, *, algorithm="default", compression=None, scale=1.0,
                 average=True):
        if not isinstance(comm, Comm):
            raise TypeError("comm must be a zipfcoll.Comm")
        self.comm = comm
        self.average = average
        self.modules = list(modules)
        self.plans = []
        for m in self.modules:
            weight = getattr(m, "weight", None)
            if weight is None or weight.dim() != 2 or not getattr(m, "sparse", False):
                raise ValueError(f"{type(m).__name__} is not an embedding with sparse=True")
            if weight.dtype not in _ROW_TYPES:
                raise ValueError(f"{type(m).__name__}'s weight is {weight.dtype}; zipfcoll "
                                 "takes float32, float16 or bfloat16 rows")
            vocab, dim = weight.shape
            self.plans.append(SparsePlan(comm, dim, vocab, row_type=_ROW_TYPES[weight.dtype],
                                         index_type="int64", algorithm=algorithm,
                                         compression=compression, scale=scale))
        self.last_algorithms = []

    def synchronize(self, values=None):
        """Collective: call on every rank after ``backward()``, before the optimizer's step.
        All modules' gradients are reduced in one group (one agreement for the step). A
        module without a gradient on this rank (no tokens) still takes part, with no rows.
        `values`, a float32 tensor (a step's loss and token counts), is summed over the
        ranks in place in the same group: on CPU and of at most 64 values it rides on the
        group's first exchange and costs no round of its own. Returns False (on every rank
        alike) when a sum overflowed; the gradients are then not finite and the step should
        be skipped."""
        self.last_algorithms = []
        inputs = [self._local_gradient(m) for m in self.modules]
        with self.comm.group():
            pending = [plan.reduce(idx, rows, stream=self._stream(m))
                       for m, plan, (idx, rows) in zip(self.modules, self.plans, inputs)]
            summed = None if values is None else self.comm.allreduce(values, values)
        finite = summed is None or not summed.wait().overflowed
        for m, call in zip(self.modules, pending):
            weight = m.weight
            res = call.wait()
            finite = finite and not res.overflowed
            self.last_algorithms.append(res.algorithm)
            indices = _as_tensor(res.indices, weight.device)
            rows = _as_tensor(res.rows, weight.device)
            if self.average:
                rows.div_(self.comm.size)
            # The indices are sorted and distinct by construction: no check is needed.
            weight.grad = torch.sparse_coo_tensor(indices.unsqueeze(0), rows.to(weight.dtype),
                                                  weight.shape, is_coalesced=True,
                                                  check_invariants=False)
        return finite

    @staticmethod
    def _stream(m):
        """The stream a module's reduce runs on: for CUDA weights the current stream, where
        backward() left the gradient, so the library's kernels and (over NCCL) transfers
        queue behind it; on the legacy default stream they would be waited for before every
        transfer. None (no stream) for CPU weights."""
        weight = m.weight
        return torch.cuda.current_stream(weight.device) if weight.is_cuda else None

    @staticmethod
    def _local_gradient(m):
        """This rank's (indices, rows) of module m's sparse gradient, one row per token as
        backward() leaves them (the plan merges repeated indices itself, in fp32): none
        without a gradient."""
        weight = m.weight
        grad = weight.grad
        if grad is None:
            idx = torch.empty(0, dtype=torch.int64, device=weight.device)
            rows = torch.empty((0, weight.shape[1]), dtype=weight.dtype, device=weight.device)
            return idx, rows
        if grad.layout != torch.sparse_coo:
            raise ValueError(f"{type(m).__name__}'s gradient is {grad.layout}, not sparse: "
                             "make the module with sparse=True")
        return grad._indices()[0].contiguous(), grad._values().contiguous()

    def destroy(self):
        for plan in self.plans:
            plan.destroy()
        self.plans = []


class AllReduceHookState:
    """The state of :func:`allreduce_hook`: the communicator, the wire ('none', the default,
    'fp16', 'bf16', 'fp8_e4m3', 'fp8_e5m2', 'int8' or their stochastic '..._sr', with
    `scale`), and ``overflowed``, set on every rank alike when a bucket's
    compressed sum was not finite. :meth:`step` runs the optimizer's step unless it was, and
    clears it. With ``error_feedback=True`` each bucket keeps a residual (4 bytes per
    gradient value, on the host) that carries what its encode left out into the next step
    (``zfcAllReduceWithResidual``)."""

    def __init__(self, comm, compression="none", scale=1.0, error_feedback=False):
        self.comm = comm
        self.compression = compression
        self.scale = scale
        self.overflowed = False
        self.residuals = {} if error_feedback else None  # bucket index -> float32 array

    def residual_for(self, bucket, count):
        """The residual of a bucket (zeros at first), or None without error feedback."""
        if self.residuals is None:
            return None
        r = self.residuals.get(bucket.index())
        if r is None or r.size != count:
            r = self.residuals[bucket.index()] = np.zeros(count, dtype=np.float32)
        return r

    def step(self, optimizer):
        """optimizer.step() unless a bucket overflowed since the last call (then the step is
        skipped on every rank). Returns whether it stepped."""
        skipped = self.overflowed
        self.overflowed = False
        if not skipped:
            optimizer.step()
        return not skipped


def allreduce_hook(state, bucket):
    """A DDP communication hook (``model.register_comm_hook(state, allreduce_hook)``): the
    bucket's gradients summed by zipfcoll's deterministic allreduce (fp32 sums in rank order,
    the same bits on every rank; fp16 or bf16 on the wire with the state's scale) and divided
    by the number of ranks, as DDP's own allreduce gives them."""
    buffer = bucket.buffer()
    work = buffer if buffer.dtype == torch.float32 else buffer.float()
    residual = state.residual_for(bucket, work.numel())
    if residual is not None and work.is_cuda:
        # Error feedback takes host buffers: the bucket goes through host memory.
        host = work.cpu()
        result = state.comm.allreduce(host, host, compression=state.compression,
                                      scale=state.scale, residual=residual)
        work.copy_(host)
    else:
        result = state.comm.allreduce(work, work, compression=state.compression,
                                      scale=state.scale, residual=residual)
    if result.overflowed:
        state.overflowed = True
    work.div_(state.comm.size)
    if work is not buffer:
        buffer.copy_(work)
    future = torch.futures.Future()
    future.set_result(buffer)
    return future
