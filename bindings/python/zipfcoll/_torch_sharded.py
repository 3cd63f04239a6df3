"""zipfcoll.torch.ShardedEmbedding: an embedding table too large to replicate, each rank
holding about V / G of its rows (the layout of the library's sharded tables,
docs/sharded_tables.md), updated where it lives by a row-wise fused optimizer."""

import torch

from ._torch_hook import CommQueue, as_tensor
from ._zipfcoll import Comm, SparsePlan, shard_locate, shard_rows

_UPDATES = ("sgd", "adagrad", "add")


class _Lookup(torch.autograd.Function):
    """Forward: the rows of the batch's distinct ids from their owners. Backward: each
    token's gradient row to the owners, which sum them and apply the update. The anchor is an
    empty tensor that requires a gradient, so that autograd calls backward although the table
    is no parameter."""

    @staticmethod
    def forward(ctx, anchor, module, ids):
        flat = ids.reshape(-1).to(torch.int64).contiguous()

        def lookup():
            looked = module.plan.sharded_gather(module.shard, flat)
            return (as_tensor(looked.rows, ids.device),
                    as_tensor(looked.positions, ids.device).to(torch.int64))

        rows, positions = module._run(lookup)
        ctx.module, ctx.flat = module, flat
        return rows[positions].view(*ids.shape, module.embedding_dim)

    @staticmethod
    def backward(ctx, grad):
        module = ctx.module
        rows = grad.reshape(-1, module.embedding_dim).to(torch.float32)
        if module.average:
            rows = rows / module.comm.size
        module._apply_gradient(ctx.flat, rows.contiguous())
        return None, None, None


class ShardedEmbedding(torch.nn.Module):
    """An ``nn.Embedding`` whose V x D table is split over the communicator's ranks: rank r
    holds the rows of the ids it owns (``zipfcoll.shard_rows(V, G, r)`` of them, at most one
    more than V / G), in fp32.

    ``forward(ids)`` (collective) gathers the rows of the batch's distinct ids from their
    owners and returns ``ids.shape + (D,)``. Its backward (collective) sends every token's
    gradient row to the id's owner, which sums them over tokens and ranks in fp32, in the
    library's fixed order, and applies `update` at once: a fused optimizer, as FBGEMM's
    table-batched embeddings do, so the table is no parameter and no optimizer sees it.
    Every rank must run the forward and the backward of each step, in the same order.

    `update` is applied per element to the summed gradient g of each row the step touched:
    'sgd': w -= lr g; 'adagrad': s += g g, w -= lr (g / (sqrt(s) + eps)), with an accumulator
    s per element (torch.optim.Adagrad's rule with lr_decay = weight_decay = 0, here only on
    the rows a step touches: no row-wise accumulator); 'add': w += lr g. With ``average``
    (the default) each rank's rows are divided by G before they are sent, so that g is the
    ranks' mean, as DDP gives. `compression` ('none', the default, or any name the plans take:
    'fp16', 'bf16', 'fp8_e4m3', 'fp8_e5m2', 'int8', '..._sr') is the wire
    of the lookup and the update. In fp32 the table after N steps equals, bit for bit, a
    replicated table whose gradient is summed by ``zipfcoll.SparsePlan.reduce`` and updated by
    the same rule (``tests/torch/test_sharded_embedding.py``).

    ``overflowed`` is True when the last backward's sums were not finite on some owner: then
    no row changed on any rank. Beside a HookState on the same communicator, the state's
    ``overflowed`` says so too, so one flag covers the whole step. ``state_dict()`` holds the whole table ('weight', V x D, and
    for Adagrad 'state_sum'), whatever the number of ranks: making it is collective (every
    rank calls it; each receives the table), loading it is local (each rank keeps its rows).
    The initial rows are normal(0, 1) drawn per rank from `seed`, so they depend on G; to
    start from a given table, use :meth:`from_pretrained` or ``load_state_dict``.
    """

    def __init__(self, comm, num_embeddings, embedding_dim, *, update="sgd", lr=0.01,
                 eps=1e-10, average=True, compression="none", seed=0):
        super().__init__()
        if not isinstance(comm, Comm):
            raise TypeError("comm must be a zipfcoll.Comm")
        if update not in _UPDATES:
            raise ValueError(f"update must be one of {', '.join(_UPDATES)}, not {update!r}")
        self.comm = comm
        self.num_embeddings, self.embedding_dim = int(num_embeddings), int(embedding_dim)
        self.update, self.lr, self.eps, self.average = update, float(lr), float(eps), average
        self.overflowed = False
        rows = shard_rows(self.num_embeddings, comm.size, comm.rank)
        g = torch.Generator().manual_seed(int(seed) * 1_000_003 + comm.rank)
        # Plain tensors, not buffers: DDP would broadcast rank 0's buffers to every rank.
        self.shard = torch.randn(rows, self.embedding_dim, generator=g)
        self.state_sum = torch.zeros_like(self.shard) if update == "adagrad" else None
        self.plan = SparsePlan(comm, self.embedding_dim, self.num_embeddings, index_type="int64",
                               compression=compression)
        self._local_ids = None  # the id of each shard row, on first need

    @classmethod
    def from_pretrained(cls, comm, weight, **kw):
        """A table holding `weight` (V x D, the same on every rank): each rank keeps its rows."""
        module = cls(comm, weight.shape[0], weight.shape[1], **kw)
        module.shard.copy_(weight.detach().to(torch.float32)[module.local_ids()])
        return module

    def local_ids(self):
        """The id of each row of this rank's shard, in row order."""
        if self._local_ids is None:
            ids = torch.empty(self.shard.shape[0], dtype=torch.int64)
            g, r = self.comm.size, self.comm.rank
            for v in range(self.num_embeddings):
                owner, row = shard_locate(self.num_embeddings, g, v)
                if owner == r:
                    ids[row] = v
            self._local_ids = ids
        return self._local_ids

    # Under torch.compile the lookup is one graph break: its collectives are calls into the
    # library that dynamo cannot trace, so it is left to run eagerly, forward and backward,
    # and the layers around it are compiled.
    @torch.compiler.disable
    def forward(self, ids):
        anchor = torch.empty(0, requires_grad=torch.is_grad_enabled())
        return _Lookup.apply(anchor, self, ids)

    def _run(self, job):
        """job(), a call on the communicator: through the queue of a HookState on the same
        communicator when there is one (the hook's buckets may be in flight on it during
        backward), else here."""
        queue = CommQueue.find(self.comm)
        return job() if queue is None else queue.run(job)

    def _apply_gradient(self, ids, rows):
        kw = {"update": self.update, "alpha": self.lr}
        if self.update == "adagrad":
            kw.update(epsilon=self.eps, state=self.state_sum)
        queue = CommQueue.find(self.comm)

        def update():
            overflowed = self.plan.sharded_reduce_apply(ids, rows, self.shard, **kw)
            if queue is not None:  # a HookState's overflowed says it too
                queue.saw(overflowed)
            return bool(overflowed)

        self.overflowed = self._run(update)

    def full_table(self, tensor=None):
        """Collective: the whole V x D table (or the whole of another per-row tensor of the
        same layout, such as the Adagrad accumulators) on every rank."""
        everything = torch.arange(self.num_embeddings, dtype=torch.int64)
        source = self.shard if tensor is None else tensor

        def gather():
            # In fp32 whatever the module's wire: a checkpoint keeps the table's bits.
            with SparsePlan(self.comm, self.embedding_dim, self.num_embeddings,
                            index_type="int64", compression="none") as plan:
                looked = plan.sharded_gather(source, everything, positions=False)
                return as_tensor(looked.rows, torch.device("cpu"))

        return self._run(gather)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        destination[prefix + "weight"] = self.full_table()
        if self.state_sum is not None:
            destination[prefix + "state_sum"] = self.full_table(self.state_sum)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        keys = ["weight"] + (["state_sum"] if self.state_sum is not None else [])
        for key in keys:
            full = state_dict.get(prefix + key)
            if full is None:
                missing_keys.append(prefix + key)
                continue
            if tuple(full.shape) != (self.num_embeddings, self.embedding_dim):
                error_msgs.append(f"{prefix + key}: a table of {tuple(full.shape)}, not "
                                  f"{(self.num_embeddings, self.embedding_dim)}")
                continue
            target = self.shard if key == "weight" else self.state_sum
            target.copy_(full.to(torch.float32)[self.local_ids()])

    def extra_repr(self):
        return (f"{self.num_embeddings}, {self.embedding_dim}, {self.shard.shape[0]} rows on "
                f"rank {self.comm.rank} of {self.comm.size}, update={self.update}")

    def close(self):
        """Frees the plan (before the communicator is destroyed). Idempotent."""
        if self.plan is not None:
            self.plan.destroy()
            self.plan = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
