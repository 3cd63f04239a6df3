"""python -m zipfcoll.demo: zfc_demo from Python, through the bindings.

The embedding-gradient exchange of a data-parallel language model, step by step: the
frameworks' allgather baseline against the unique + allreduce exchange (fp32 and fp16), on
real text windows (--corpus DIR) or a seeded Zipf stream. Runs the same steps as zfc_demo
and prints the same table: bytes each rank moved, peak workspace, median step time, and
whether every fp32 variant returned the same bits.

    mpirun -np 4 python3 -m zipfcoll.demo --corpus DIR
"""

import argparse
import hashlib
import os
import statistics
import sys

from mpi4py import MPI

import zipfcoll
from zipfcoll._zipfcoll import _StepSource

VARIANTS = [
    ("allgather        fp32", "allgather", "none"),
    ("unique_allreduce fp32", "unique_allreduce", "none"),
    ("unique_allreduce fp16", "unique_allreduce", "fp16"),
    ("auto             fp32", "auto", "none"),
]


def parse(argv):
    p = argparse.ArgumentParser(prog="python -m zipfcoll.demo",
                                description=__doc__.split("\n\n")[1])
    p.add_argument("--corpus", default="",
                   help="real text: every .txt file in DIR (default: seeded Zipf stream)")
    p.add_argument("--vocab", type=int, default=100000,
                   help="vocabulary size, most frequent words; the rest map to <unk>")
    p.add_argument("--zipf", type=float, default=1.1, help="exponent of the synthetic stream")
    p.add_argument("--windows", type=int, default=32, help="windows per rank per step")
    # The names zfc_demo takes (nccl-tests' -n/-w where the meaning is the same).
    p.add_argument("-L", "--window-len", type=int, default=20, help="words per window")
    p.add_argument("-D", "--dim", type=int, default=512, help="embedding width")
    p.add_argument("-n", "--iters", dest="steps", type=int, default=10, help="measured steps")
    p.add_argument("-w", "--warmup_iters", dest="warmup", type=int, default=2,
                   help="unmeasured steps first")
    p.add_argument("--scale", type=float, default=1.0, help="fp16 compression scale")
    p.add_argument("--seed", type=int, default=1, help="workload seed")
    o = p.parse_args(argv)
    if (o.vocab < 2 or o.windows < 0 or o.window_len <= 0 or o.dim <= 0 or o.steps <= 0
            or o.warmup < 0 or not o.scale > 0):
        p.error("an option is out of range")
    return o


def run_variant(comm, variant, o, source, rank, hashes):
    _, algorithm, compression = variant
    plan = zipfcoll.SparsePlan(comm, o.dim, o.vocab, algorithm=algorithm,
                               compression=compression, scale=o.scale)
    t = {"bytes": 0.0, "peak": 0, "seconds": [], "global_unique": 0, "local_unique": 0,
         "algorithm": None}
    world = MPI.COMM_WORLD
    for step in range(-o.warmup, o.steps):
        idx = source.indices(step, rank)
        rows = source.rows(step, rank, idx.size, o.dim)
        world.Barrier()
        t0 = MPI.Wtime()
        res = plan.reduce(idx, rows)
        seconds = MPI.Wtime() - t0
        if step < 0:
            continue
        t["seconds"].append(world.allreduce(seconds, op=MPI.MAX))
        last = comm.stats()["last"]
        t["bytes"] += last["bytes_sent"] + last["bytes_received"]
        t["peak"] = max(t["peak"], last["peak_workspace_bytes"])
        t["global_unique"] += last["global_unique"]
        t["local_unique"] += last["local_unique"]
        t["algorithm"] = res.algorithm
        if hashes is not None:
            hashes.append(hashlib.blake2b(res.indices.tobytes() + res.rows.tobytes()).digest())
    plan.destroy()
    return t


def report(o, source, ranks, totals, bytes_sum, peaks, local_unique, identical):
    print(f"zipfcoll {zipfcoll.__version__} demo: sparse embedding-gradient exchange")
    if not o.corpus:
        print(f"workload: seeded {source.describe()} stream")
    else:
        print(f"workload: {source.describe()}, {o.windows} windows x {o.window_len} "
              "words per rank")
    k = o.windows * o.window_len
    print(f"G={ranks} ranks, K={k} tokens per rank (G*K={k * ranks}), D={o.dim}, "
          f"{o.steps} steps after {o.warmup} warm-up")
    gk = float(k * ranks)
    ug = totals[1]["global_unique"] / o.steps
    ui = local_unique / o.steps / ranks
    print(f"per step: G*K={gk:.0f}  U_i(mean)={ui:.1f}  U_g={ug:.1f}  U_g/(G*K)={ug / gk:.3f}")
    print(f"ideal byte ratio G*K/(2*U_g): {gk / (2 * ug):.2f}x in fp32, "
          f"{gk / ug:.2f}x with fp16\n")
    print(f"{'variant':<22} {'bytes/rank':>14} {'vs base':>10} {'peak workspace':>16} "
          f"{'median step':>14} {'speedup':>9}")
    base_bytes = bytes_sum[0] / ranks
    base_time = statistics.median(totals[0]["seconds"])
    for v, variant in enumerate(VARIANTS):
        b = bytes_sum[v] / ranks
        t = statistics.median(totals[v]["seconds"])
        line = (f"{variant[0]:<22} {b / 1e6:11.3f} MB {base_bytes / b:9.2f}x "
                f"{peaks[v] / 1e6:13.3f} MB {t * 1e3:11.3f} ms {base_time / t:8.2f}x")
        if variant[1] == "auto":
            line += f"  (ran {totals[v]['algorithm']})"
        print(line)
    print("\nbytes/rank: sent + received per step, averaged over ranks; peak workspace: "
          "largest on any rank;\nmedian step: the slowest rank's time per step")
    print(f"results identical across algorithms: {'yes' if identical else 'NO'}")


def _announced_world_size():
    """The world size a launcher other than mpirun announced (torchrun's WORLD_SIZE), or 0."""
    for name in ("ZIPFCOLL_WORLD_SIZE", "WORLD_SIZE"):
        value = os.environ.get(name, "")
        if value:
            try:
                return int(value)
            except ValueError:
                return 0
    return 0


def main(argv=None):
    o = parse(sys.argv[1:] if argv is None else argv)
    world = MPI.COMM_WORLD
    rank, ranks = world.Get_rank(), world.Get_size()
    announced = _announced_world_size()
    if ranks == 1 and announced > 1:
        # Started by torchrun or the like: alone in MPI's world, this process would run a
        # one-rank job of its own. The demo runs over MPI, so it refuses instead.
        # One write, newline included: the ranks share the launcher's stream, and print()'s
        # separate write of the newline lets another rank's line land in between.
        sys.stderr.write(f"zipfcoll.demo: started as one of {announced} ranks "
                         f"(WORLD_SIZE={announced}, RANK={os.environ.get('RANK', 'unset')}) by "
                         f"a launcher other than mpirun, but MPI sees this process alone: the "
                         f"demo runs over MPI; start it with mpirun -np {announced} python3 -m "
                         f"zipfcoll.demo\n")
        sys.stderr.flush()
        return 2
    try:
        source = _StepSource(o.corpus, o.vocab, o.zipf, o.windows * o.window_len,
                             o.window_len, o.seed)
    except (RuntimeError, ValueError) as e:
        print(f"zipfcoll.demo: {e}", file=sys.stderr)
        world.Abort(1)
    with zipfcoll.Comm.from_mpi4py(world) as comm:
        totals, hashes = [], []
        for variant in VARIANTS:
            h = [] if variant[2] == "none" else None
            totals.append(run_variant(comm, variant, o, source, rank, h))
            hashes.append(h)
    # Every fp32 variant must agree with the baseline bit for bit, on every rank.
    identical = all(h is None or h == hashes[0] for h in hashes[1:])
    identical = world.allreduce(identical, op=MPI.LAND)
    bytes_sum = [world.allreduce(t["bytes"] / o.steps, op=MPI.SUM) for t in totals]
    peaks = [world.allreduce(t["peak"], op=MPI.MAX) for t in totals]
    local_unique = world.allreduce(totals[1]["local_unique"], op=MPI.SUM)
    if rank == 0:
        report(o, source, ranks, totals, bytes_sum, peaks, local_unique, identical)
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())
