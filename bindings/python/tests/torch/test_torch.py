"""zipfcoll.torch against torch's own collectives on the same gradients: the communicator
from a process group, the sparse embedding synchroniser (fp32, fp16 and bf16 weights, a rank
without tokens, fp16 on the wire, two tables and the loss in one group), and the DDP hook (fp32 and fp16 on the wire, an agreed
overflow)."""

import numpy as np
import pytest
import torch
import torch.distributed as dist

import zipfcoll.torch as zt

V, D = 1000, 16


def tokens_of(rank, step=0):
    """This rank's skewed token ids: a few frequent words shared by every rank, and some of
    its own."""
    g = torch.Generator().manual_seed(100 * rank + step)
    ids = torch.randint(0, V, (64,), generator=g)
    return ids // (1 + torch.randint(0, 40, (64,), generator=g))


def torch_sparse_mean(grad):
    """The reference: every rank's sparse gradient all-gathered (torch's own sync of sparse
    embeddings), summed and divided by the number of ranks, dense."""
    grad = grad.float().coalesce()  # a rank's repeated rows summed in fp32, as zipfcoll does
    parts = [None] * dist.get_world_size()
    dist.all_gather_object(parts, (grad.indices(), grad.values()))
    dense = torch.zeros(grad.shape, dtype=torch.float32)
    for idx, val in parts:
        dense.index_add_(0, idx[0], val)
    return dense / dist.get_world_size()


def test_comm_from_process_group_has_the_groups_ranks(comm):
    assert comm.size == dist.get_world_size()
    assert comm.rank == dist.get_rank()
    x = torch.full((5,), float(comm.rank + 1))
    comm.allreduce(x, x)
    assert torch.equal(x, torch.full((5,), comm.size * (comm.size + 1) / 2))


def test_each_communicator_of_a_group_meets_at_its_own_key(group):
    a = zt.comm_from_process_group(group, timeout_ms=60000)
    b = zt.comm_from_process_group(group, timeout_ms=60000)
    assert a.size == b.size == dist.get_world_size()
    a.destroy()
    b.destroy()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("bag", [False, True])
def test_sparse_gradient_is_the_mean_torch_gives(comm, dtype, bag):
    torch.manual_seed(0)
    if bag:
        emb = torch.nn.EmbeddingBag(V, D, mode="sum", sparse=True).to(dtype)
    else:
        emb = torch.nn.Embedding(V, D, sparse=True).to(dtype)
    ids = tokens_of(comm.rank)
    out = emb(ids.view(8, 8)) if bag else emb(ids)
    (out.float() * torch.arange(D, dtype=torch.float32)).sum().backward()
    want = torch_sparse_mean(emb.weight.grad)
    sync = zt.SparseEmbeddingSync(comm, [emb])
    assert sync.synchronize()
    got = emb.weight.grad
    assert got.layout == torch.sparse_coo and got.is_coalesced() and got.dtype == dtype
    # The rows zipfcoll sums are those torch sums, in another order: fp32 rounding apart,
    # then both rounded to the weight's type.
    rtol = {torch.float32: 1e-6, torch.float16: 1e-3, torch.bfloat16: 1e-2}[dtype]
    torch.testing.assert_close(got.to_dense().float(), want.to(dtype).float(), rtol=rtol,
                               atol=0)
    sync.destroy()


def test_a_rank_without_tokens_still_gets_the_others_rows(comm):
    torch.manual_seed(0)
    emb = torch.nn.Embedding(V, D, sparse=True)
    if comm.rank != 0:
        emb(tokens_of(comm.rank)).sum().backward()
    sync = zt.SparseEmbeddingSync(comm, [emb])
    assert sync.synchronize()
    if comm.size > 1:
        assert emb.weight.grad is not None and emb.weight.grad._nnz() > 0
    sync.destroy()


def test_sparse_sync_with_fp16_on_the_wire(comm):
    torch.manual_seed(0)
    emb = torch.nn.Embedding(V, D, sparse=True)
    emb(tokens_of(comm.rank)).sum().backward()
    want = torch_sparse_mean(emb.weight.grad)
    sync = zt.SparseEmbeddingSync(comm, [emb], compression="fp16", algorithm="owner_partitioned")
    assert sync.synchronize()
    assert sync.last_algorithms == ["owner_partitioned"]
    torch.testing.assert_close(emb.weight.grad.to_dense(), want, rtol=2e-3, atol=0)
    sync.destroy()


@pytest.mark.parametrize("wire,tolerance", [("int8", 2e-2), ("fp8_e4m3_sr", 0.15)])
def test_sparse_sync_with_eight_bits_on_the_wire(comm, wire, tolerance):
    # A byte per value and a scale per row: within the format's rounding of the mean,
    # relative to each row's largest magnitude.
    torch.manual_seed(0)
    emb = torch.nn.Embedding(V, D, sparse=True)
    emb(tokens_of(comm.rank)).sum().backward()
    want = torch_sparse_mean(emb.weight.grad)
    sync = zt.SparseEmbeddingSync(comm, [emb], compression=wire, algorithm="key_routed")
    assert sync.synchronize()
    got = emb.weight.grad.to_dense()
    row_max = want.abs().amax(dim=1, keepdim=True)
    assert torch.all((got - want).abs() <= tolerance * row_max + 1e-6)
    sync.destroy()


def test_two_tables_and_the_loss_in_one_synchronize(comm):
    torch.manual_seed(0)
    inp = torch.nn.Embedding(V, D, sparse=True)
    out = torch.nn.Embedding(V // 2, 2 * D, sparse=True)
    ids = tokens_of(comm.rank)
    (inp(ids).sum() + out(ids % (V // 2)).pow(2).sum()).backward()
    want = [torch_sparse_mean(m.weight.grad) for m in (inp, out)]
    loss = torch.tensor([1.5 * (comm.rank + 1), 64.0])
    sync = zt.SparseEmbeddingSync(comm, [inp, out], algorithm="owner_partitioned")
    comm.reset_stats()
    assert sync.synchronize(values=loss)
    last = comm.stats()["last"]
    assert last["calls"] == 3
    if comm.size > 1:
        # One agreement carries the loss and both tables' keys; each table then makes its
        # two exchanges.
        assert last["rounds"] == 5
    assert torch.equal(loss, torch.tensor([1.5 * comm.size * (comm.size + 1) / 2,
                                           64.0 * comm.size]))
    for m, w in zip((inp, out), want):
        torch.testing.assert_close(m.weight.grad.to_dense(), w, rtol=1e-6, atol=0)
    sync.destroy()


def test_a_dense_gradient_is_refused(comm):
    emb = torch.nn.Embedding(V, D, sparse=False)
    with pytest.raises(ValueError, match="sparse=True"):
        zt.SparseEmbeddingSync(comm, [emb])


class TwoLayers(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(D, 32)
        self.b = torch.nn.Linear(32, 4)

    def forward(self, x):
        return self.b(torch.tanh(self.a(x)))


def ddp_grads(comm, state, loss_scale=1.0):
    """A DDP step's gradients with zipfcoll's hook (state None: DDP's own allreduce)."""
    torch.manual_seed(0)
    model = torch.nn.parallel.DistributedDataParallel(TwoLayers(), bucket_cap_mb=0.001)
    if state is not None:
        model.register_comm_hook(state, zt.allreduce_hook)
    x = torch.randn(16, D, generator=torch.Generator().manual_seed(comm.rank))
    (model(x).square().sum() * loss_scale).backward()
    return [p.grad.clone() for p in model.parameters()]


def test_ddp_hook_gives_ddps_mean(comm):
    want = ddp_grads(comm, None)
    got = ddp_grads(comm, zt.AllReduceHookState(comm, compression="none"))
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-6, atol=1e-7)
    state = zt.AllReduceHookState(comm, compression="fp16", scale=64.0)
    got = ddp_grads(comm, state)
    assert not state.overflowed
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=2e-3, atol=1e-3)
    state = zt.AllReduceHookState(comm, compression="int8_sr")
    got = ddp_grads(comm, state)
    assert not state.overflowed
    # Two stochastic roundings of a byte, each within a step (1/127) of the largest magnitude
    # of its 256 values, which may hold several parameters of a bucket: every rank's own
    # gradient's (each at most `most`, the largest of the sum over ranks of |g_r|), then the
    # sum's; the mean divides their sum by G.
    torch.manual_seed(0)
    local = TwoLayers()
    x = torch.randn(16, D, generator=torch.Generator().manual_seed(comm.rank))
    local(x).square().sum().backward()
    flat = torch.cat([p.grad.abs().reshape(-1) for p in local.parameters()]).numpy()
    most = float(comm.allreduce(flat)[0].max())
    for g, w in zip(got, want):
        assert torch.all((g - w).abs() <= (1 + 1 / comm.size) * most / 127 + 1e-6)
    # With error feedback: the first step as without (its residuals start at zero, and hop 0
    # to nearest is int8's half step), and every bucket keeps what its encode left out.
    state = zt.AllReduceHookState(comm, compression="int8", error_feedback=True)
    got = ddp_grads(comm, state)
    assert state.residuals and all(np.any(r != 0) for r in state.residuals.values())
    for g, w in zip(got, want):
        assert torch.all((g - w).abs() <= (1 + 1 / comm.size) * most / 127 + 1e-6)


def test_ddp_hook_overflow_skips_the_step_everywhere(comm):
    state = zt.AllReduceHookState(comm, compression="fp16", scale=1.0)
    # Rank 0's gradients are beyond fp16's range; every rank must see the overflow.
    ddp_grads(comm, state, loss_scale=1e7 if comm.rank == 0 else 1.0)
    assert state.overflowed
    opt = torch.optim.SGD(TwoLayers().parameters(), lr=0.1)
    assert not state.step(opt)
    assert not state.overflowed
