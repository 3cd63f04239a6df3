"""The one DDP communication hook of zipfcoll.torch: every bucket DDP hands it, dense or
sparse, reduced by zipfcoll on a worker thread while backward goes on.

DDP calls a communication hook once per bucket, in bucket order, the same order on every rank
(it launches bucket i only after buckets 0..i-1), from the thread that runs backward. A
parameter with a sparse gradient (``nn.Embedding(sparse=True)``, ``nn.EmbeddingBag
(sparse=True)``) is a bucket of its own whose buffer is that sparse gradient, one row per
token; DDP makes the tensor the hook's future returns the parameter's gradient. So the hook
queues each bucket's collective on one worker thread, in the order DDP hands them, and returns
at once: the collectives run in the same order on every rank, one after another, while
autograd computes the earlier layers' gradients, as DDP's own buckets overlap.

Why a thread and not a side stream: on CPU there is no stream, and the library's calls block
until their exchange is done; a thread is the one way to let backward go on. The calls release
the GIL while they communicate. A CUDA bucket's call is queued on the stream backward was
using when DDP handed the bucket over (never run on a GPU yet).
"""

import concurrent.futures

import torch

from ._zipfcoll import Comm, SparsePlan

_ROW_TYPES = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16"}


class CommQueue:
    """How zipfcoll.torch makes a communicator's calls during backward: the hook's buckets
    and ShardedEmbedding's lookups and updates, one at a time, first in first out, on one
    worker thread (or inline, for a HookState made with ``overlap=False``). A communicator
    takes one call at a time, and every rank must make its calls in the same order; autograd
    reaches the buckets and the modules in the same order on every rank, so one queue per
    communicator gives both. The queue also gathers the backward's overflows, whichever call
    saw one: the one place a HookState reads them from."""

    _queues = {}  # id(comm) -> (comm, CommQueue)

    def __init__(self, threaded):
        self.worker = (concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="zipfcoll-comm") if threaded else None)
        self.users = 0
        self.overflow = False  # some call since the backward began summed a value not finite

    @classmethod
    def acquire(cls, comm, threaded):
        """The communicator's queue, made (threaded or not) by its first user."""
        entry = cls._queues.get(id(comm))
        if entry is None or entry[0] is not comm:
            entry = (comm, CommQueue(threaded))
            cls._queues[id(comm)] = entry
        entry[1].users += 1
        return entry[1]

    @classmethod
    def find(cls, comm):
        """The communicator's queue while a HookState uses it, else None."""
        entry = cls._queues.get(id(comm))
        return entry[1] if entry is not None and entry[0] is comm else None

    def release(self, comm):
        """Drops a user; the last one waits for the queued calls and ends the worker."""
        self.users -= 1
        if self.users == 0:
            if self.worker is not None:
                self.worker.shutdown(wait=True)
            del CommQueue._queues[id(comm)]

    def submit(self, task):
        """task() after every call queued before it (at once without a worker)."""
        if self.worker is None:
            task()
        else:
            self.worker.submit(task)

    def run(self, job):
        """job() after every call queued before it; its result, here."""
        return job() if self.worker is None else self.worker.submit(job).result()

    def saw(self, overflowed):
        self.overflow = self.overflow or bool(overflowed)


def as_tensor(view, device):
    """A tensor of its own holding a result view (copied: a plan's next reduce rewrites its
    views). The view is a zipfcoll.DeviceArray or a NumPy array."""
    if hasattr(view, "__dlpack_device__") and view.__dlpack_device__()[0] != 1:
        return torch.from_dlpack(view).clone()
    return torch.tensor(view, device=device)  # a read-only NumPy view: copied


class HookState:
    """The state of :func:`hook`, and the one place to learn of an overflow.

    ``model.register_comm_hook(HookState(comm), zipfcoll.torch.hook)`` on a DDP model: dense
    buckets go through zipfcoll's deterministic allreduce, sparse embedding gradients through
    a sparse plan per parameter (made on first use), and every result is the ranks' mean, as
    DDP's. `compression` ('none', 'fp16', 'bf16', 'fp8_e4m3', 'fp8_e5m2', 'int8', and the
    stochastic '..._sr'; `scale` for the 16-bit ones) is the wire of both; the
    default is fp32. `algorithm` is the sparse plans'. With ``overlap=False`` each bucket is
    reduced inside the hook, before backward goes on.

    ``overflowed`` is True when a sum since the last :meth:`step` was not finite (on every
    rank alike; the gradients then hold inf or NaN, which AMP's GradScaler also sees);
    :meth:`step` runs the optimizer unless it is, and forgets it. Use the state as a context manager, or call
    :meth:`close`: it frees the plans and ends the worker (before or after the communicator's
    destroy, which frees the plans itself).
    """

    def __init__(self, comm, *, compression="none", scale=1.0, algorithm="default",
                 overlap=True):
        if not isinstance(comm, Comm):
            raise TypeError("comm must be a zipfcoll.Comm")
        self.comm = comm
        self.compression = compression
        self.scale = scale
        self.algorithm = algorithm
        self.last_algorithms = []  # the sparse buckets' algorithms in the last backward
        self._plans = {}  # id(parameter) -> (parameter, SparsePlan)
        self._queue = CommQueue.acquire(comm, overlap)
        self._overflowed = False  # kept when the state closes
        self._algorithms_now = []  # the worker's alone until the last bucket publishes them

    @property
    def overflowed(self):
        """Whether a sum since the last :meth:`step` or :meth:`clear` (a bucket's, or a
        ShardedEmbedding update's on the same communicator) was not finite: over the
        backward passes of a step, those under ``no_sync()`` included. Read it once
        backward() has returned."""
        return self._queue.overflow if self._queue is not None else self._overflowed

    def clear(self):
        """Forgets the overflows seen so far (step() does it itself)."""
        if self._queue is not None:
            self._queue.run(lambda: setattr(self._queue, "overflow", False))
        self._overflowed = False

    def step(self, optimizer):
        """optimizer.step() unless a sum overflowed since the last step (then every rank skips
        it), and forgets the overflow. Returns whether it stepped."""
        skipped = self.overflowed
        self.clear()
        if skipped:
            return False
        optimizer.step()
        return True

    def close(self):
        """Frees the plans and leaves the communicator's queue (its last user waits for the
        queued calls and ends the worker). Idempotent."""
        if self._queue is not None:
            self._queue.run(lambda: None)  # this state's queued buckets are done
            self._overflowed = self._queue.overflow
            self._queue.release(self.comm)
            self._queue = None
        for _, plan in self._plans.values():
            plan.destroy()
        self._plans = {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ---- the hook's work --------------------------------------------------------------------

    def _plan(self, param):
        entry = self._plans.get(id(param))
        if entry is None or entry[0] is not param:
            if param.dtype not in _ROW_TYPES:
                raise ValueError(f"a sparse gradient of {param.dtype}: zipfcoll takes float32, "
                                 "float16 or bfloat16 rows")
            vocab, dim = param.shape
            plan = SparsePlan(self.comm, dim, vocab, row_type=_ROW_TYPES[param.dtype],
                              index_type="int64", algorithm=self.algorithm,
                              compression=self.compression, scale=self.scale)
            entry = (param, plan)
            self._plans[id(param)] = entry
        return entry[1]

    def _submit(self, job, last, stream):
        """A future of job(), run in bucket order on the queue (on `stream`, for CUDA)."""
        future = torch.futures.Future()

        def task():
            try:
                if stream is None:
                    value = job()
                else:
                    with torch.cuda.stream(stream):
                        value = job()
            except BaseException as e:  # the failure reaches backward() through the future
                self._publish(last)
                future.set_exception(e)
                return
            self._publish(last)
            future.set_result(value)

        self._queue.submit(task)
        return future

    def _publish(self, last):
        if last:
            self.last_algorithms, self._algorithms_now = self._algorithms_now, []

    def _dense(self, buffer, stream):
        work = buffer if buffer.dtype == torch.float32 else buffer.float()
        res = self.comm.allreduce(work, work, compression=self.compression, scale=self.scale,
                                  stream=stream)
        self._queue.saw(res.overflowed)
        work.div_(self.comm.size)
        if work is not buffer:
            buffer.copy_(work)
        return buffer

    def _sparse(self, grad, plan, stream):
        # The rows as backward left them, one per token: the plan sums repeated ids itself, in
        # fp32 and in rank order, so the result has the same bits on every rank.
        idx = grad._indices()[0].contiguous()
        rows = grad._values().contiguous()
        res = plan.reduce(idx, rows, stream=stream)
        self._queue.saw(res.overflowed)
        self._algorithms_now.append(res.algorithm)
        indices = as_tensor(res.indices, grad.device)
        summed = as_tensor(res.rows, grad.device).div_(self.comm.size)
        # Sorted and distinct by construction: no check is needed.
        return torch.sparse_coo_tensor(indices.unsqueeze(0), summed.to(grad.dtype), grad.shape,
                                       is_coalesced=True, check_invariants=False)


def hook(state, bucket):
    """DDP's communication hook for sparse and dense gradients alike
    (``model.register_comm_hook(zipfcoll.torch.HookState(comm), zipfcoll.torch.hook)``):
    returns at once a ``torch.futures.Future`` that the state's worker completes with the
    ranks' mean of the bucket (see :class:`HookState`)."""
    buffer = bucket.buffer()
    last = bucket.is_last()
    stream = torch.cuda.current_stream(buffer.device) if buffer.is_cuda else None
    if buffer.layout == torch.sparse_coo:
        params = bucket.parameters()
        if len(params) != 1:
            raise RuntimeError(f"a sparse bucket of {len(params)} parameters: DDP gives each "
                               "sparse parameter a bucket of its own")
        param = params[0]
        # The plan is made on the queue too: making one counts it on the communicator, which
        # the worker may be using.
        return state._submit(lambda: state._sparse(buffer, state._plan(param), stream), last,
                             stream)
    if buffer.layout != torch.strided:
        raise RuntimeError(f"a bucket of layout {buffer.layout}: zipfcoll.torch.hook reduces "
                           "dense and sparse COO gradients")
    return state._submit(lambda: state._dense(buffer, stream), last, stream)
