"""A small word-level language model in PyTorch, trained data-parallel under torchrun and
synchronised with zipfcoll: its input embedding is an nn.Embedding(sparse=True) whose
gradient zipfcoll.torch.SparseEmbeddingSync reduces, and the dense parameters (the LSTM and
the full softmax) go through DDP with zipfcoll's allreduce hook.

    torchrun --standalone --nproc-per-node=4 examples/python/torch_word_lm.py --corpus DIR

`--sync torch` trains the same model synced by torch alone, as one would without zipfcoll:
DDP's own allreduce, and the embedding's sparse gradient all-gathered (each rank's K
uncoalesced rows, as backward() leaves them) and summed. Both print the bytes each rank
received per step for the embedding, and `--save FILE` writes the parameters, so that two
runs can be compared (examples/python/compare_torch_sync.py).
"""

import argparse
import collections
import os
import re
import sys

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


def torch_sparse_sync(weight):
    """torch's own sync of a sparse gradient: every rank's rows all-gathered (padded to the
    longest), summed, divided by the ranks. Returns the bytes this rank received."""
    g = weight.grad
    idx, val = g._indices()[0], g._values()
    size = dist.get_world_size()
    counts = [torch.zeros(1, dtype=torch.int64) for _ in range(size)]
    dist.all_gather(counts, torch.tensor([idx.numel()]))
    longest = int(max(c.item() for c in counts))
    pad = longest - idx.numel()
    idx_all = [torch.empty(longest, dtype=torch.int64) for _ in range(size)]
    val_all = [torch.empty(longest, val.shape[1]) for _ in range(size)]
    dist.all_gather(idx_all, torch.nn.functional.pad(idx, (0, pad)))
    dist.all_gather(val_all, torch.nn.functional.pad(val, (0, 0, 0, pad)))
    rows = [(i[:int(c.item())], v[:int(c.item())]) for i, v, c in zip(idx_all, val_all, counts)]
    summed = torch.sparse_coo_tensor(torch.cat([i for i, _ in rows]).unsqueeze(0),
                                     torch.cat([v for _, v in rows]), weight.shape,
                                     check_invariants=True).coalesce()
    weight.grad = torch.sparse_coo_tensor(summed.indices(), summed.values() / size,
                                          weight.shape, is_coalesced=True,
                                          check_invariants=False)  # coalesced just above
    row_bytes = 8 + 4 * val.shape[1]
    return (size - 1) * (8 + longest * row_bytes)


def main():
    args = parse_args()
    dist.init_process_group("gloo")
    rank, size = dist.get_rank(), dist.get_world_size()
    corpus = read_corpus(args.corpus, args.vocab, args.max_words)
    torch.manual_seed(0)  # the same initial parameters on every rank and in both syncs
    model = WordLM(args.vocab, args.dim)
    # DDP reduces the dense parameters; the embedding's sparse gradient is synced apart.
    torch.nn.parallel.DistributedDataParallel._set_params_and_buffers_to_ignore_for_model(
        model, ["embedding.weight"])
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    if args.sync == "zipfcoll":
        import zipfcoll.torch as zt
        comm = zt.comm_from_process_group(timeout_ms=60000)
        sparse = zt.SparseEmbeddingSync(comm, [model.embedding], algorithm=args.algorithm,
                                        compression=args.compression)
        ddp.register_comm_hook(zt.AllReduceHookState(comm, compression=args.compression),
                               zt.allreduce_hook)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    received = []
    if rank == 0:
        print(f"torch_word_lm: {size} ranks, sync {args.sync}, V={args.vocab} D={args.dim} "
              f"K={args.batch * args.bptt} tokens per rank and step, {len(corpus)} words")
    for step in range(args.steps):
        x, y = batch_of(corpus, step, rank, size, args.batch, args.bptt)
        optimizer.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(ddp(x).reshape(-1, args.vocab), y.reshape(-1))
        loss.backward()
        loss_sum = torch.tensor([loss.item()])  # summed over the ranks for the log
        if args.sync == "zipfcoll":
            comm.reset_stats()
            # The loss rides on the embedding's exchange: one agreement, no round of its own.
            if not sparse.synchronize(values=loss_sum):
                raise SystemExit("an overflow on the wire: lower --compression's range")
            received.append(comm.stats()["total"]["bytes_received"])
        else:
            received.append(torch_sparse_sync(model.embedding.weight))
            dist.all_reduce(loss_sum)
        optimizer.step()
        if rank == 0 and (step + 1) % 5 == 0:
            print(f"step {step + 1}: loss {loss_sum.item() / size:.4f} (mean of the ranks)")
    mean = sum(received) / len(received)
    busiest = torch.tensor([mean])
    dist.all_reduce(busiest, op=dist.ReduceOp.MAX)
    if rank == 0:
        # zipfcoll's figure also counts the loss riding on the embedding's exchange.
        detail = (f" ({', '.join(sparse.last_algorithms)}, with the loss)"
                  if args.sync == "zipfcoll" else "")
        print(f"embedding sync{detail}: {busiest.item() / 1e6:.4f} MB received per step by "
              f"the busiest rank")
        if args.save:
            torch.save({k: v.detach().clone() for k, v in model.state_dict().items()}, args.save)
    if args.sync == "zipfcoll":
        sparse.destroy()
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
