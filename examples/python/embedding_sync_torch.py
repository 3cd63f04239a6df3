# The same with PyTorch: a sparse nn.Embedding's gradient goes to zipfcoll through DLPack
# (no copies), and the summed rows are applied to the weights in place.
from mpi4py import MPI
import torch
import zipfcoll

V, D, K = 50_000, 256, 640
torch.manual_seed(0)
emb = torch.nn.Embedding(V, D, sparse=True)            # same initial weights on every rank
with zipfcoll.Comm.from_mpi4py(MPI.COMM_WORLD) as comm:
    plan = zipfcoll.SparsePlan(comm, D, V, index_type="int64")
    for step in range(3):
        tokens = torch.randint(0, V, (K,)) // (1 + torch.randint(0, 50, (K,)))  # skewed ids
        emb(tokens).pow(2).sum().backward()
        g = emb.weight.grad.coalesce()                 # this rank's distinct rows
        res = plan.reduce(g.indices()[0].contiguous(), g.values().contiguous())
        zipfcoll.apply_rows(emb.weight.detach(), res.indices, res.rows, alpha=-0.1 / comm.size)
        emb.weight.grad = None
        print(f"rank {comm.rank} step {step}: {res.num_unique} rows summed")
    del res
    plan.destroy()
