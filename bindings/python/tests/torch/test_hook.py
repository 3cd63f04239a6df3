"""zipfcoll.torch.hook on unmodified DDP models against DDP's own sync over gloo (its sparse
allreduce gathers every rank's coalesced rows): the same parameters after 20 SGD steps, the
same gradients every step under Adagrad and SparseAdam, and the cases a trainer meets (a rank
without rows, no_sync, padding_idx, AMP's GradScaler, a tied embedding, a table left unused,
an overflow, the README's recipe)."""

import pathlib

import numpy as np
import pytest
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import zipfcoll
import zipfcoll.torch as zt

V, D, H = 500, 16, 24
STEPS = 20
TOL = 1e-6


class Model(torch.nn.Module):
    """A word model in small: a sparse input embedding, a sparse bag of context words, a
    dense layer and an output layer (optionally tied to the input embedding)."""

    def __init__(self, padding_idx=None, tied=False, spare_table=False):
        super().__init__()
        self.emb = torch.nn.Embedding(V, D, sparse=not tied, padding_idx=padding_idx)
        self.bag = torch.nn.EmbeddingBag(V, D, mode="sum", sparse=True)
        self.hidden = torch.nn.Linear(D, D)
        self.out = torch.nn.Linear(D, V, bias=False)
        if tied:
            self.out.weight = self.emb.weight
        self.spare = torch.nn.Embedding(V, D, sparse=True) if spare_table else None

    def forward(self, ids, context):
        x = self.emb(ids) + self.bag(context).unsqueeze(1)
        y = self.out(torch.tanh(self.hidden(x)))
        if self.spare is not None:
            # Looked up with no ids: a defined gradient of no rows (see test_an_unused_table).
            y = y + self.spare(ids[:0]).sum()
        return y


def batch(rank, step, empty=False):
    """This rank's batch at a step: Zipf-like ids (small ids frequent), 4 x 6 tokens, and a
    bag of 3 context ids per row. `empty`: no tokens at all (no row of either table)."""
    g = torch.Generator().manual_seed(1000 * rank + step)
    n = 0 if empty else 4
    ids = torch.randint(0, V, (n, 6), generator=g) // (1 + torch.randint(0, 30, (n, 6), generator=g))
    context = torch.randint(0, V, (n, 3), generator=g) // 7
    target = torch.randint(0, V, (n, 6), generator=g)
    return ids, context, target


def loss_of(model, ids, context, target):
    logits = model(ids, context)
    return torch.nn.functional.cross_entropy(logits.reshape(-1, V), target.reshape(-1),
                                             reduction="sum")


def pair(comm, **kw):
    """Two DDP models of the same parameters: DDP's own sync over gloo, and the hook's. Each
    rank starts from its own random parameters: DDP broadcasts rank 0's to both."""
    torch.manual_seed(1 + dist.get_rank())
    ref = Model(**kw)
    mine = Model(**kw)
    mine.load_state_dict(ref.state_dict())
    ref, mine = DDP(ref), DDP(mine)
    state = zt.HookState(comm)
    mine.register_comm_hook(state, zt.hook)
    return ref, mine, state


def grads(model):
    return {n: p.grad.to_dense() if p.grad.is_sparse else p.grad
            for n, p in model.module.named_parameters() if p.grad is not None}


def assert_close(a, b, what):
    """Every tensor of b within TOL of a's, relative to a's largest element (at least 1): the
    two sum the ranks' values in different orders (gloo's ring, zipfcoll's rank order), which
    moves a sum by an ulp or so of its size."""
    assert a.keys() == b.keys(), what
    for n in a:
        diff = (a[n] - b[n]).abs().max().item()
        size = max(1.0, a[n].abs().max().item())
        assert diff <= TOL * size, f"{what}: {n} differs by {diff} (largest element {size})"


def params(model):
    return {n: p.detach() for n, p in model.module.named_parameters()}


def test_sgd_parameters_equal_ddps_after_20_steps(comm):
    ref, mine, state = pair(comm)
    with state:
        # The wrapped models hold rank 0's parameters on every rank.
        first = torch.cat([p.flatten() for p in params(mine).values()])
        seen = [torch.empty_like(first) for _ in range(dist.get_world_size())]
        dist.all_gather(seen, first)
        assert all(torch.equal(s, seen[0]) for s in seen)
        opts = [torch.optim.SGD(m.parameters(), lr=0.05) for m in (ref, mine)]
        for step in range(STEPS):
            for m, opt in zip((ref, mine), opts):
                opt.zero_grad()
                loss_of(m, *batch(dist.get_rank(), step)).backward()
            assert_close(grads(ref), grads(mine), f"step {step} gradients")
            assert not state.overflowed
            for m, opt in zip((ref, mine), opts):
                opt.step()
        assert_close(params(ref), params(mine), "parameters after 20 steps")
        assert mine.module.emb.weight.grad.is_sparse
        assert len(state.last_algorithms) == 2  # the two sparse tables


@pytest.mark.parametrize("optimizer", ["adagrad", "sparse_adam"])
def test_gradients_handed_to_the_optimizer_equal_ddps(comm, optimizer):
    ref, mine, state = pair(comm)

    def make(model):
        sparse = [model.module.emb.weight, model.module.bag.weight]
        dense = [p for p in model.parameters() if all(p is not s for s in sparse)]
        if optimizer == "adagrad":
            return [torch.optim.Adagrad(model.parameters(), lr=0.1)]
        return [torch.optim.SparseAdam(sparse, lr=0.01), torch.optim.Adam(dense, lr=0.01)]

    with state:
        opts = {id(m): make(m) for m in (ref, mine)}
        for step in range(5):
            # The same parameters in both, so that the gradients are comparable every step.
            mine.module.load_state_dict(ref.module.state_dict())
            for m in (ref, mine):
                for opt in opts[id(m)]:
                    opt.zero_grad()
                loss_of(m, *batch(dist.get_rank(), step)).backward()
            assert_close(grads(ref), grads(mine), f"{optimizer} step {step}")
            for m in (ref, mine):
                for opt in opts[id(m)]:
                    opt.step()


def one_step(ref, mine, rank_batch, accumulate=0):
    """A step of both models (after `accumulate` steps under no_sync); their gradients."""
    for m in (ref, mine):
        m.zero_grad()
        for a in range(accumulate):
            with m.no_sync():
                loss_of(m, *rank_batch(100 + a)).backward()
        loss_of(m, *rank_batch(0)).backward()
    return grads(ref), grads(mine)


def test_a_rank_without_tokens_gets_the_others_mean(comm):
    ref, mine, state = pair(comm)
    with state:
        rank = dist.get_rank()
        a, b = one_step(ref, mine, lambda s: batch(rank, s, empty=rank == 0))
        assert_close(a, b, "a rank without tokens")
        if dist.get_world_size() > 1:
            assert b["emb.weight"].abs().sum() > 0  # the others' rows reached rank 0


def test_no_sync_accumulation(comm):
    ref, mine, state = pair(comm)
    with state:
        rank = dist.get_rank()
        a, b = one_step(ref, mine, lambda s: batch(rank, s), accumulate=2)
        assert_close(a, b, "two steps under no_sync, then a synced one")


def test_padding_idx_rows_stay_zero(comm):
    ref, mine, state = pair(comm, padding_idx=0)
    with state:
        rank = dist.get_rank()
        a, b = one_step(ref, mine, lambda s: batch(rank, s))
        assert_close(a, b, "padding_idx")
        assert b["emb.weight"][0].abs().sum() == 0


def test_amp_grad_scaler(comm):
    ref, mine, state = pair(comm)
    with state:
        rank = dist.get_rank()
        opts = [torch.optim.SGD(m.parameters(), lr=0.05) for m in (ref, mine)]
        scalers = [torch.amp.GradScaler("cpu", init_scale=1024.0) for _ in (ref, mine)]
        for step in range(3):
            for m, opt, scaler in zip((ref, mine), opts, scalers):
                opt.zero_grad()
                scaler.scale(loss_of(m, *batch(rank, step))).backward()
                scaler.step(opt)
                scaler.update()
        assert_close(params(ref), params(mine), "GradScaler")


def test_a_tied_embedding_is_a_dense_bucket(comm):
    # Tied to the output layer, the input embedding's gradient is dense: it is made with
    # sparse=False (DDP itself refuses a sparse=True weight whose gradient comes out dense,
    # before any hook runs), and the hook reduces it with the dense buckets.
    ref, mine, state = pair(comm, tied=True)
    with state:
        rank = dist.get_rank()
        a, b = one_step(ref, mine, lambda s: batch(rank, s))
        assert_close(a, b, "tied embedding")
        assert not mine.module.emb.weight.grad.is_sparse
        assert len(state.last_algorithms) == 1  # the bag only


def test_an_unused_table_with_find_unused_parameters(comm):
    # A sparse table the forward does not reach fails inside DDP itself with
    # find_unused_parameters=True ("Expected sparse gradient to be defined", DDP's reducer,
    # before the hook). Looked up with no ids it has a defined gradient of no rows, which the
    # hook reduces like any other.
    torch.manual_seed(1)
    model = DDP(Model(spare_table=True), find_unused_parameters=True)
    with zt.HookState(comm) as state:
        model.register_comm_hook(state, zt.hook)
        loss_of(model, *batch(dist.get_rank(), 0)).backward()
        grad = model.module.spare.weight.grad
        assert grad.is_sparse and grad._nnz() == 0
        assert len(state.last_algorithms) == 3


def test_an_overflow_is_seen_on_every_rank_and_skips_the_step(comm):
    torch.manual_seed(1)
    model = DDP(Model())
    with zt.HookState(comm, compression="fp16") as state:
        model.register_comm_hook(state, zt.hook)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        before = params(model)["hidden.weight"].clone()
        # One rank's loss is huge: its gradients overflow fp16 on the wire.
        scale = 1e9 if dist.get_rank() == dist.get_world_size() - 1 else 1.0
        (scale * loss_of(model, *batch(dist.get_rank(), 0))).backward()
        assert state.overflowed
        assert not state.step(opt)
        assert torch.equal(params(model)["hidden.weight"], before)
        model.zero_grad()
        loss_of(model, *batch(dist.get_rank(), 1)).backward()
        assert not state.overflowed  # the next backward is judged on its own
        assert state.step(opt)


def readme_recipe():
    """The README's PyTorch snippet, as written there."""
    readme = pathlib.Path(__file__).resolve().parents[4] / "README.md"
    text = readme.read_text()
    start = text.index("```python", text.index("PyTorch users under torchrun"))
    return text[start + len("```python"):text.index("```", start + 3)]


class OneInput(Model):
    """The model called as ddp(x), x being the pair (ids, context)."""

    def forward(self, x):
        return super().forward(*x)


def test_the_readme_recipe_runs_as_written(group):
    # The names the snippet takes from its reader's program: a model, its batches, a loss.
    torch.manual_seed(3 + dist.get_rank())
    rank = dist.get_rank()
    scope = {
        "torch": torch, "model": OneInput(),
        "batches": [((ids, context), target)
                    for ids, context, target in (batch(rank, s) for s in range(2))],
        "loss_fn": lambda logits, target: torch.nn.functional.cross_entropy(
            logits.reshape(-1, V), target.reshape(-1)),
    }
    exec(readme_recipe(), scope)
    ddp, state = scope["ddp"], scope["state"]
    assert state._queue is None and not state._plans  # the with block closed it
    assert ddp.module.emb.weight.grad.is_sparse
    flat = torch.cat([p.detach().flatten() for p in ddp.parameters()])
    seen = [torch.empty_like(flat) for _ in range(dist.get_world_size())]
    dist.all_gather(seen, flat)
    assert all(torch.equal(s, seen[0]) for s in seen)
    scope["comm"].destroy()


def test_objects_go_in_any_order(group):
    # The communicator first, with a hook state, a sharded table and a plan of its own alive.
    comm = zt.comm_from_process_group(group, timeout_ms=60000)
    model = DDP(Model())
    state = zt.HookState(comm)
    model.register_comm_hook(state, zt.hook)
    loss_of(model, *batch(dist.get_rank(), 0)).backward()
    table = zt.ShardedEmbedding(comm, V, D)
    plan = zipfcoll.SparsePlan(comm, D, V)
    result = plan.reduce(np.arange(3, dtype=np.int32), np.ones((3, D), np.float32))
    with pytest.raises(zipfcoll.InvalidUsageError, match="still referenced"):
        comm.destroy()  # the result's arrays point into the plan: nothing is freed
    del result
    comm.destroy()
    state.close()
    table.close()
    plan.destroy()
    with pytest.raises(zipfcoll.InvalidUsageError, match="freed with its communicator"):
        plan.reduce(np.arange(3, dtype=np.int32), np.ones((3, D), np.float32))
