"""zipfcoll.torch.ShardedEmbedding against a replicated table trained by the same rule: the
same lookups and, in fp32, the same table bit for bit after every step (SGD, Adagrad, add);
the state dict of the whole table, loaded at another number of ranks; a rank's memory; and
the module inside DDP beside the hook."""

import pytest
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import zipfcoll
import zipfcoll.torch as zt

V, D = 301, 8
LR, EPS = 0.1, 1e-10


def table(seed=5):
    return torch.randn(V, D, generator=torch.Generator().manual_seed(seed))


def ids_of(rank, step, empty=False):
    g = torch.Generator().manual_seed(50 * rank + step)
    if empty:
        return torch.empty(0, 5, dtype=torch.int64)
    return torch.randint(0, V, (3, 5), generator=g) // (1 + torch.randint(0, 9, (3, 5), generator=g))


def coefficients(shape, step):
    """The loss's weight of every token's row: its gradient row."""
    g = torch.Generator().manual_seed(7 + step)
    return torch.randn(*shape, D, generator=g)


def same_bits(a, b):
    return torch.equal(a.view(torch.int32), b.view(torch.int32))


def reference_update(w, s, plan, ids, rows, update):
    """The replicated twin: the gradient summed by zipfcoll's replicated plan, the rule
    applied with torch's elementwise fp32 operations."""
    res = plan.reduce(ids, rows)
    idx = torch.tensor(res.indices, dtype=torch.int64)  # copied: the view is read-only
    g = torch.tensor(res.rows)
    if update == "sgd":
        w[idx] = w[idx] - LR * g
    elif update == "add":
        w[idx] = w[idx] + LR * g
    else:
        s[idx] = s[idx] + g * g
        # The square root correctly rounded, as the library's (std::sqrt): torch.sqrt of a
        # float32 CPU tensor is not always (its vectorised kernel), so torch.optim.Adagrad
        # can differ from this rule in the last bit.
        root = torch.sqrt(s[idx].double()).float()
        w[idx] = w[idx] - LR * (g / (root + EPS))


@pytest.mark.parametrize("update", ["sgd", "adagrad", "add"])
def test_bit_identical_to_a_replicated_table(comm, update):
    rank, size = dist.get_rank(), dist.get_world_size()
    w = table()
    s = torch.zeros_like(w)
    with zt.ShardedEmbedding.from_pretrained(comm, w, update=update, lr=LR, eps=EPS) as emb, \
            zipfcoll.SparsePlan(comm, D, V, index_type="int64") as plan:
        # A rank's memory: its shard, at most one row above V / G.
        assert emb.shard.shape[0] <= V // size + 1
        for step in range(4):
            ids = ids_of(rank, step, empty=(rank == 1 and step == 2))
            out = emb(ids)
            assert same_bits(out, w[ids])
            coef = coefficients(ids.shape, step)
            (out * coef).sum().backward()
            assert not emb.overflowed
            reference_update(w, s, plan, ids.reshape(-1), (coef / size).reshape(-1, D),
                             update)
            assert same_bits(emb.full_table(), w), f"{update} step {step}"
            if update == "adagrad":
                assert same_bits(emb.full_table(emb.state_sum), s)


def test_state_dict_holds_the_whole_table_at_any_rank_count(comm):
    rank, size = dist.get_rank(), dist.get_world_size()
    with zt.ShardedEmbedding(comm, V, D, update="adagrad", lr=LR, seed=3) as emb:
        emb(ids_of(rank, 0)).sum().backward()
        saved = emb.state_dict()  # collective: every rank gets the whole table
        assert saved["weight"].shape == (V, D) and saved["state_sum"].shape == (V, D)
    # Loaded on a communicator of another size: half the ranks (or the one).
    half = comm.split(rank % 2 if size > 1 else 0)
    with zt.ShardedEmbedding(half, V, D, update="adagrad", lr=LR, seed=9) as other:
        assert other.shard.shape[0] == zipfcoll.shard_rows(V, half.size, half.rank)
        other.load_state_dict(saved)
        assert same_bits(other.full_table(), saved["weight"])
        assert same_bits(other.full_table(other.state_sum), saved["state_sum"])
        with pytest.raises(RuntimeError, match="a table of"):
            other.load_state_dict({"weight": torch.zeros(V - 1, D),
                                   "state_sum": torch.zeros(V, D)})
    half.destroy()


class Tagger(torch.nn.Module):
    """A sharded input table and a dense layer on top."""

    def __init__(self, comm):
        super().__init__()
        self.emb = zt.ShardedEmbedding(comm, V, D, update="sgd", lr=LR, seed=1)
        self.out = torch.nn.Linear(D, 4)

    def forward(self, ids):
        return self.out(self.emb(ids))


def test_inside_ddp_with_the_hook(comm):
    rank = dist.get_rank()
    torch.manual_seed(2 + rank)
    model = Tagger(comm)
    shard = model.emb.shard.clone()
    ddp = DDP(model)  # the shard is no parameter or buffer: DDP leaves it as it is
    assert torch.equal(model.emb.shard, shard)
    with zt.HookState(comm) as state:
        ddp.register_comm_hook(state, zt.hook)
        opt = torch.optim.SGD(ddp.parameters(), lr=LR)
        for step in range(3):
            opt.zero_grad()
            ddp(ids_of(rank, step)).square().sum().backward()
            assert state.step(opt)
    weights = [torch.empty_like(model.out.weight) for _ in range(dist.get_world_size())]
    dist.all_gather(weights, model.out.weight.detach())
    assert all(torch.equal(x, weights[0]) for x in weights)
    assert not torch.equal(model.emb.shard, shard)  # the fused update ran in backward
    model.emb.close()


def test_bad_arguments_are_named(comm):
    with pytest.raises(ValueError, match="update must be one of"):
        zt.ShardedEmbedding(comm, V, D, update="adam")
    with pytest.raises(TypeError, match="zipfcoll.Comm"):
        zt.ShardedEmbedding(None, V, D)


def test_an_overflow_in_the_table_is_the_hook_states_too(comm):
    rank = dist.get_rank()
    torch.manual_seed(2)
    model = Tagger(comm)
    model.emb.close()
    model.emb = zt.ShardedEmbedding(comm, V, D, update="sgd", lr=LR, seed=1,
                                    compression="fp16")
    ddp = DDP(model)
    with zt.HookState(comm) as state:
        ddp.register_comm_hook(state, zt.hook)
        opt = torch.optim.SGD(ddp.parameters(), lr=LR)
        shard = model.emb.shard.clone()
        # The table's gradient overflows fp16 on the wire; the dense layer's does not.
        out = model.emb(ids_of(rank, 0))
        ddp_loss = ddp(ids_of(rank, 0)).sum() * 0 + (out * 1e30).sum()
        ddp_loss.backward()
        assert model.emb.overflowed and state.overflowed
        assert not state.step(opt)
        assert torch.equal(model.emb.shard, shard)  # no row changed on any rank
        opt.zero_grad()
        ddp(ids_of(rank, 1)).sum().backward()
        assert not state.overflowed  # the next backward is judged on its own
    model.emb.close()
