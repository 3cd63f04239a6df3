"""A small word-level language model in PyTorch, trained data-parallel under torchrun with
DDP, its input embedding an nn.Embedding(sparse=True). `--sync zipfcoll` (the default) adds
one line to plain DDP: zipfcoll's communication hook, which reduces the embedding's sparse
gradient and the dense buckets (the LSTM and the full softmax) alike.

    torchrun --standalone --nproc-per-node=4 examples/python/torch_word_lm.py --corpus DIR

`--sync torch` trains the same model with DDP's own sync over gloo, as one would without
zipfcoll: its allreduce of the dense buckets, and its sparse allreduce, which gathers every
rank's coalesced rows (`--compression fp16`: torch's fp16_compress_hook). `--sync sharded`
keeps the embedding in a zipfcoll.torch.ShardedEmbedding (each rank V/G rows, updated by
their owners with the same SGD rule) and the dense buckets under the hook. Each prints the
median step time, the bytes the busiest rank received per step (all traffic), the peak memory
and the embedding table of a rank, and `--save FILE` writes the parameters (the whole table
too), so that two runs can be compared (examples/python/compare_torch_sync.py).
"""

import argparse
import collections
import os
import re
import resource
import statistics
import sys
import time

import torch
import torch.distributed as dist


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", required=True, help="a directory of .txt files")
    p.add_argument("--sync", choices=["zipfcoll", "sharded", "torch"], default="zipfcoll")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--vocab", type=int, default=10000, help="the V-1 most frequent words, <unk>")
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--shortlist", type=int, default=0,
                   help="a softmax over this many most frequent words (0: the whole vocabulary)")
    p.add_argument("--batch", type=int, default=32, help="windows per rank and step")
    p.add_argument("--bptt", type=int, default=20, help="words per window")
    p.add_argument("--lr", type=float, default=0.5)
    p.add_argument("--compression", default="none",
                   help="the wire: none, fp16, bf16, fp8_e4m3, fp8_e5m2, int8, or one of them "
                        "with _sr (stochastic rounding) (torch: none or fp16_compress_hook)")
    p.add_argument("--algorithm", default="auto", help="zipfcoll's sparse algorithm")
    p.add_argument("--max-words", type=int, default=2_000_000)
    p.add_argument("--save", help="write the parameters here (rank 0)")
    return p.parse_args()


def read_corpus(directory, vocab_size, max_words):
    """The corpus's words as ids: the vocab_size-1 most frequent words, the rest <unk> (id
    vocab_size-1). Every rank reads the same files in the same order."""
    words = []
    for name in sorted(os.listdir(directory)):
        if name.endswith(".txt"):
            with open(os.path.join(directory, name), encoding="utf-8", errors="replace") as f:
                words += re.findall(r"[a-z']+", f.read().lower())
        if len(words) >= max_words:
            break
    words = words[:max_words]
    common = [w for w, _ in collections.Counter(words).most_common(vocab_size - 1)]
    ids = {w: i for i, w in enumerate(common)}
    unk = vocab_size - 1
    return torch.tensor([ids.get(w, unk) for w in words], dtype=torch.int64)


class WordLM(torch.nn.Module):
    """An embedding of the whole vocabulary, an LSTM, and a softmax over the `outputs` most
    frequent words (all of them by default; fewer: a short-list softmax, in which the rest
    are one class)."""

    def __init__(self, vocab, dim, outputs):
        super().__init__()
        self.embedding = torch.nn.Embedding(vocab, dim, sparse=True)
        self.lstm = torch.nn.LSTM(dim, dim, batch_first=True)
        self.softmax = torch.nn.Linear(dim, outputs)

    def forward(self, x):
        h, _ = self.lstm(self.embedding(x))
        return self.softmax(h)


def batch_of(corpus, step, rank, size, batch, bptt):
    """Rank `rank`'s windows of step `step`: its own stretch of the corpus."""
    stride = len(corpus) // (size * batch) - bptt - 1
    starts = [(rank * batch + b) * (stride + bptt + 1) + (step * bptt) % stride
              for b in range(batch)]
    windows = torch.stack([corpus[s:s + bptt + 1] for s in starts])
    return windows[:, :-1], windows[:, 1:]


def wire_width(compression):
    """Bytes per dense value on zipfcoll's wire: fp32, 16 bits, or a byte and an fp32 scale
    per block of 256 values (ZFC_ALLREDUCE_BLOCK_VALUES)."""
    name = compression.removesuffix("_sr")
    return {"none": 4, "fp16": 2, "bf16": 2}.get(name, 1 + 4 / 256)


def gloo_bytes_received(model, x, size, compression):
    """What a rank receives in one step of DDP's sync over gloo: the ring allreduce of the
    dense buckets (2 (G-1)/G of their bytes, fp16 under fp16_compress_hook) and, for the
    sparse embedding, every other rank's coalesced fp32 rows with their int64 ids (gloo's
    sparse allreduce gathers them), the busiest rank's count of distinct ids standing for
    each rank's."""
    width = 2 if compression == "fp16" else 4
    dense = sum(p.numel() * width for n, p in model.named_parameters()
                if n != "embedding.weight")
    distinct = torch.tensor([x.unique().numel()])
    dist.all_reduce(distinct, op=dist.ReduceOp.MAX)
    dim = model.embedding.weight.shape[1]
    return 2 * (size - 1) / size * dense + (size - 1) * int(distinct) * (8 + 4 * dim)


def torch_fp16_hook(state, bucket):
    """What torch offers for a 16-bit wire: its fp16_compress_hook for the dense buckets, and
    DDP's default allreduce for the sparse embedding (fp16_compress_hook fails on a sparse
    bucket: torch 2.15 has no sparse add for float16, "cadd_sparse not implemented")."""
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
    if bucket.buffer().is_sparse:
        return default_hooks.allreduce_hook(None, bucket)
    return default_hooks.fp16_compress_hook(None, bucket)


def report(args, rank, received, seconds, model, state):
    """Rank 0 prints the busiest rank's bytes per step, the slowest rank's median step
    (steps 2..N), the largest peak memory of a rank, and a rank's embedding table."""
    busiest = torch.tensor([sum(received) / len(received)])
    dist.all_reduce(busiest, op=dist.ReduceOp.MAX)
    slowest = torch.tensor([statistics.median(seconds[1:] or seconds)])
    dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
    peak = torch.tensor([resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0])
    dist.all_reduce(peak, op=dist.ReduceOp.MAX)  # MiB (Linux counts KiB)
    emb = model.embedding
    table = (emb.shard.numel() if hasattr(emb, "shard") else emb.weight.numel()) * 4
    # What every sync receives for the dense buckets alike (2 (G-1)/G of them, ring or
    # reduce-scatter and allgather), the rest being the embedding's.
    width = wire_width(args.compression)
    size = dist.get_world_size()
    dense = 2 * (size - 1) / size * width * sum(
        p.numel() for n, p in model.named_parameters() if not n.startswith("embedding."))
    held = torch.tensor([float(table)])
    dist.all_reduce(held, op=dist.ReduceOp.MAX)
    if rank == 0:
        detail = (f" ({', '.join(state.last_algorithms)} for the embedding)"
                  if state is not None and state.last_algorithms else "")
        print(f"sync {args.sync} wire {args.compression}{detail}: {busiest.item() / 1e6:.4f} MB "
              f"received per step by the busiest rank ({dense / 1e6:.4f} MB of it the dense "
              f"buckets'); median step "
              f"{slowest.item() * 1e3:.1f} ms (slowest rank, steps 2..{args.steps}); peak "
              f"memory {peak.item():.1f} MiB (largest rank); embedding table "
              f"{held.item() / 2**20:.2f} MiB per rank")


def main():
    args = parse_args()
    dist.init_process_group("gloo")
    rank, size = dist.get_rank(), dist.get_world_size()
    corpus = read_corpus(args.corpus, args.vocab, args.max_words)
    torch.manual_seed(0)  # the same initial parameters on every rank and in every sync
    outputs = args.shortlist or args.vocab
    model = WordLM(args.vocab, args.dim, outputs)
    comm = state = None
    if args.sync != "torch":
        import zipfcoll.torch as zt
        comm = zt.comm_from_process_group(timeout_ms=60000)
        if args.sync == "sharded":
            # The table split over the ranks, starting from the same rows, updated by its
            # owners with the same SGD rule in backward.
            model.embedding = zt.ShardedEmbedding.from_pretrained(
                comm, model.embedding.weight, update="sgd", lr=args.lr,
                compression=args.compression)
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    if comm is not None:
        state = zt.HookState(comm, compression=args.compression, algorithm=args.algorithm)
        ddp.register_comm_hook(state, zt.hook)
    elif args.compression == "fp16":
        ddp.register_comm_hook(None, torch_fp16_hook)
    elif args.compression != "none":
        raise SystemExit(f"--sync torch takes --compression none or fp16, not {args.compression}")
    optimizer = torch.optim.SGD(ddp.parameters(), lr=args.lr)
    received, seconds = [], []
    if rank == 0:
        print(f"torch_word_lm: {size} ranks, sync {args.sync}, wire {args.compression}, "
              f"V={args.vocab} D={args.dim} softmax over {outputs} K={args.batch * args.bptt} "
              f"tokens per rank and step, {len(corpus)} words")
    for step in range(args.steps):
        x, y = batch_of(corpus, step, rank, size, args.batch, args.bptt)
        dist.barrier()  # every rank starts the step together: its time is the step's
        start = time.perf_counter()
        if comm is not None:
            comm.reset_stats()
        optimizer.zero_grad(set_to_none=True)
        # Ids are frequency ranks: a short list's last class stands for every rarer word.
        y = y.clamp(max=outputs - 1)
        loss = torch.nn.functional.cross_entropy(ddp(x).reshape(-1, outputs), y.reshape(-1))
        loss.backward()
        stepped = state.step(optimizer) if state is not None else optimizer.step() or True
        seconds.append(time.perf_counter() - start)
        if not stepped:
            raise SystemExit("an overflow on the wire: lower --compression's range")
        received.append(comm.stats()["total"]["bytes_received"] if comm is not None
                        else gloo_bytes_received(model, x, size, args.compression))
        loss_sum = torch.tensor([loss.item()])  # summed over the ranks for the log
        dist.all_reduce(loss_sum)
        if rank == 0 and (step + 1) % 5 == 0:
            print(f"step {step + 1}: loss {loss_sum.item() / size:.4f} (mean of the ranks)")
    report(args, rank, received, seconds, model, state)
    if args.save:
        weights = {k: v.detach().clone() for k, v in model.state_dict().items()}  # collective
        if rank == 0:
            torch.save(weights, args.save)
    if comm is not None:
        state.close()
        comm.destroy()  # and the sharded table's plan with it
    # DDP's reducer goes before its process group, and no rank leaves while another still
    # talks to it.
    del ddp
    dist.barrier()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    status = main()
    # Everything is written and every group destroyed; leave without the interpreter's
    # teardown, where gloo's threads sometimes end a process with "terminate called without
    # an active exception" (seen with --sync torch, torch 2.15, about one run in ten).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
