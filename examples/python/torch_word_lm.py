"""A small word-level language model in PyTorch, trained data-parallel under torchrun with
DDP, its input embedding an nn.Embedding(sparse=True). `--sync zipfcoll` (the default) adds
one line to plain DDP: zipfcoll's communication hook, which reduces the embedding's sparse
gradient and the dense buckets (the LSTM and the full softmax) alike.

    torchrun --standalone --nproc-per-node=4 examples/python/torch_word_lm.py --corpus DIR

`--sync torch` trains the same model with DDP's own sync over gloo, as one would without
zipfcoll: its allreduce of the dense buckets, and its sparse allreduce, which gathers every
rank's coalesced rows. Both print the median step time and the bytes the busiest rank received
per step (all traffic), and `--save FILE` writes the parameters, so that two runs can be
compared (examples/python/compare_torch_sync.py).
"""

import argparse
import collections
import os
import re
import statistics
import sys
import time

import torch
import torch.distributed as dist


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", required=True, help="a directory of .txt files")
    p.add_argument("--sync", choices=["zipfcoll", "torch"], default="zipfcoll")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--vocab", type=int, default=10000, help="the V-1 most frequent words, <unk>")
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--batch", type=int, default=32, help="windows per rank and step")
    p.add_argument("--bptt", type=int, default=20, help="words per window")
    p.add_argument("--lr", type=float, default=0.5)
    p.add_argument("--compression", default="none", help="zipfcoll's wire: none, fp16, bf16")
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
    def __init__(self, vocab, dim):
        super().__init__()
        self.embedding = torch.nn.Embedding(vocab, dim, sparse=True)
        self.lstm = torch.nn.LSTM(dim, dim, batch_first=True)
        self.softmax = torch.nn.Linear(dim, vocab)

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


def gloo_bytes_received(model, x, size):
    """What a rank receives in one step of DDP's sync over gloo: the ring allreduce of the
    dense buckets (2 (G-1)/G of their bytes) and, for the sparse embedding, every other
    rank's coalesced rows with their int64 ids (gloo's sparse allreduce gathers them), the
    busiest rank's count of distinct ids standing for each rank's."""
    dense = sum(p.numel() * 4 for n, p in model.named_parameters() if n != "embedding.weight")
    distinct = torch.tensor([x.unique().numel()])
    dist.all_reduce(distinct, op=dist.ReduceOp.MAX)
    dim = model.embedding.weight.shape[1]
    return 2 * (size - 1) / size * dense + (size - 1) * int(distinct) * (8 + 4 * dim)


def main():
    args = parse_args()
    dist.init_process_group("gloo")
    rank, size = dist.get_rank(), dist.get_world_size()
    corpus = read_corpus(args.corpus, args.vocab, args.max_words)
    torch.manual_seed(0)  # the same initial parameters on every rank and in both syncs
    model = WordLM(args.vocab, args.dim)
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    if args.sync == "zipfcoll":
        import zipfcoll.torch as zt
        comm = zt.comm_from_process_group(timeout_ms=60000)
        state = zt.HookState(comm, compression=args.compression, algorithm=args.algorithm)
        ddp.register_comm_hook(state, zt.hook)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    received, seconds = [], []
    if rank == 0:
        print(f"torch_word_lm: {size} ranks, sync {args.sync}, V={args.vocab} D={args.dim} "
              f"K={args.batch * args.bptt} tokens per rank and step, {len(corpus)} words")
    for step in range(args.steps):
        x, y = batch_of(corpus, step, rank, size, args.batch, args.bptt)
        dist.barrier()  # every rank starts the step together: its time is the step's
        start = time.perf_counter()
        if args.sync == "zipfcoll":
            comm.reset_stats()
        optimizer.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(ddp(x).reshape(-1, args.vocab), y.reshape(-1))
        loss.backward()
        if args.sync == "zipfcoll":
            stepped = state.step(optimizer)
        else:
            optimizer.step()
            stepped = True
        seconds.append(time.perf_counter() - start)
        if not stepped:
            raise SystemExit("an overflow on the wire: lower --compression's range")
        received.append(comm.stats()["total"]["bytes_received"] if args.sync == "zipfcoll"
                        else gloo_bytes_received(model, x, size))
        loss_sum = torch.tensor([loss.item()])  # summed over the ranks for the log
        dist.all_reduce(loss_sum)
        if rank == 0 and (step + 1) % 5 == 0:
            print(f"step {step + 1}: loss {loss_sum.item() / size:.4f} (mean of the ranks)")
    mean = sum(received) / len(received)
    busiest = torch.tensor([mean])
    dist.all_reduce(busiest, op=dist.ReduceOp.MAX)
    slowest = torch.tensor([statistics.median(seconds[1:] or seconds)])
    dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
    if rank == 0:
        detail = (f" ({', '.join(state.last_algorithms)} for the embedding)"
                  if args.sync == "zipfcoll" else "")
        print(f"sync {args.sync}{detail}: {busiest.item() / 1e6:.4f} MB received per step by "
              f"the busiest rank; median step {slowest.item() * 1e3:.1f} ms (slowest rank, "
              f"steps 2..{args.steps})")
        if args.save:
            torch.save({k: v.detach().clone() for k, v in model.state_dict().items()}, args.save)
    if args.sync == "zipfcoll":
        state.close()
        comm.destroy()
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
