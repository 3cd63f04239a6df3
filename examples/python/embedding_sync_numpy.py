# One rank's training steps with an embedding table of V rows: sync its gradient with
# zipfcoll (only the distinct words' rows travel), then apply it. mpirun -np 4 python3 THIS
from mpi4py import MPI
import numpy as np
import zipfcoll

V, D, K = 50_000, 256, 640                 # vocabulary, width, tokens per rank and step
table = np.random.default_rng(0).normal(0, 0.1, (V, D)).astype(np.float32)  # same everywhere

def train(comm, steps, rng):
    with zipfcoll.SparsePlan(comm, D, V, compression="fp16", scale=1024) as plan:
        for step in range(steps):
            tokens = (np.minimum(rng.zipf(1.1, K), V) - 1).astype(np.int32)  # word ids
            grad = rng.standard_normal((K, D), dtype=np.float32)  # d loss / d looked-up rows
            res = plan.reduce(tokens, grad)   # U_g distinct ids + summed rows, every rank
            if not res.overflowed:            # an fp16 overflow skips the step on all ranks
                zipfcoll.apply_rows(table, res.indices, res.rows, alpha=-0.1 / comm.size)
            print(f"rank {comm.rank} step {step}: {res.num_unique} of {K * comm.size} rows, "
                  f"{comm.stats()['last']['bytes_sent']} bytes sent")

with zipfcoll.Comm.from_mpi4py(MPI.COMM_WORLD) as comm:
    train(comm, steps=3, rng=np.random.default_rng(comm.rank))
