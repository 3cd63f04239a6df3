// zfc_perf allreduce: zfcAllReduce of fp32 data for each compression against a plain
// MPI_Allreduce of the same data, timed in the same run, size by size.
//
// Every rank's element i is a multiple of 1/1024 in [-1000/1024, 1000/1024] that any rank can
// compute, so the exact sum is known (it is representable in fp32 for up to 16k ranks) and an
// uncompressed result must match it bit for bit; compressed results must lie within the
// wire format's rounding bound.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "perf_common.hpp"
#include "perf_device.hpp"

namespace {

inline float element(int rank, size_t i) {
  uint32_t h = static_cast<uint32_t>(i) * 0x9e3779b1u ^ static_cast<uint32_t>(rank) * 0x85ebca77u ^
               static_cast<uint32_t>(i >> 32);
  h ^= h >> 15;
  h *= 0x2c1b3c6du;
  h ^= h >> 12;
  return static_cast<float>(static_cast<int>(h % 2001u) - 1000) / 1024.0f;
}

// One operation measured at every size.
struct Op {
  std::string name;  // "mpi", "none", "fp16", "bf16"
  bool mpi;
  zfcCompression_t how;
};

// The host arrays, and with -g 1 their device copies, which the zfc calls take.
struct Buffers {
  std::vector<float> send, recv;
  DeviceCopy d_send, d_recv;
  const float* zfc_send = nullptr;
  float* zfc_recv = nullptr;
};

void run_once(const PerfContext& ctx, const Op& op, Buffers& b, size_t count, int* overflowed) {
  if (op.mpi) {
    MPI_Allreduce(b.send.data(), b.recv.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM,
                  MPI_COMM_WORLD);
    *overflowed = 0;
    return;
  }
  const zfcResult_t r = zfcAllReduce(ctx.comm, b.zfc_send, b.zfc_recv, count,
                                     zfcFloat32, &op.how, overflowed, nullptr);
  if (r != zfcSuccess) perf_fail("zfcAllReduce", r, ctx.comm);
}

// Unit roundoff of the wire format.
double unit_roundoff(const Op& op) {
  if (op.mpi || op.how.kind == zfcCompressNone) return 0.0;
  return op.how.kind == zfcCompressFp16 ? std::ldexp(1.0, -11) : std::ldexp(1.0, -8);
}

// Elements outside the bound, plus every element when ranks' results differ.
double count_wrong(const PerfContext& ctx, const Op& op, const Buffers& b, size_t count,
                   int overflowed) {
  const double u = unit_roundoff(op);
  const float scale = op.mpi || op.how.kind == zfcCompressNone ? 1.0f : op.how.scale;
  // Each term and the result are rounded once to the wire format; subnormals of the scaled
  // values lose at most 2^-25 each.
  const double tiny = (ctx.ranks + 1) * std::ldexp(1.0, -24) / scale;
  double wrong = overflowed ? 1 : 0;
  uint64_t hash = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < count; ++i) {
    double exact = 0, magnitude = 0;
    for (int r = 0; r < ctx.ranks; ++r) {
      const double x = element(r, i);
      exact += x;
      magnitude += std::fabs(x);
    }
    const double got = b.recv[i];
    const bool ok = u == 0 ? got == exact
                           : std::fabs(got - exact) <= u * (magnitude + std::fabs(exact)) + tiny;
    if (!ok) wrong += 1;
    uint32_t bits;
    std::memcpy(&bits, &b.recv[i], sizeof bits);
    hash = (hash ^ bits) * 0x100000001b3ull;
  }
  uint64_t lo = hash, hi = hash;
  MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  if (lo != hi && !op.mpi) wrong += static_cast<double>(count);
  return max_over_ranks(wrong);
}

std::vector<size_t> sweep(const PerfOptions& o) {
  std::vector<size_t> sizes;
  for (size_t b = o.min_bytes; b <= o.max_bytes;) {
    sizes.push_back(b);
    const size_t next = o.step_bytes > 0 ? b + o.step_bytes
                                         : static_cast<size_t>(static_cast<double>(b) * o.factor);
    if (next <= b) break;
    b = next;
  }
  return sizes;
}

// Every operation's per-iteration times, slowest rank, operation-major.
std::vector<double> time_ops(const PerfContext& ctx, const std::vector<Op>& ops, Buffers& b,
                             size_t count) {
  const PerfOptions& o = ctx.options;
  int overflowed = 0;
  for (int it = 0; it < o.warmup; ++it) {
    for (const Op& op : ops) run_once(ctx, op, b, count, &overflowed);
  }
  // Operations alternate inside each iteration so that a noisy moment hits all of them.
  std::vector<double> t(ops.size() * static_cast<size_t>(o.iters));
  for (int it = 0; it < o.iters; ++it) {
    for (size_t k = 0; k < ops.size(); ++k) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      run_once(ctx, ops[k], b, count, &overflowed);
      t[k * o.iters + it] = MPI_Wtime() - t0;
    }
  }
  max_over_ranks(&t);
  return t;
}

Row result_row(const PerfContext& ctx, const Op& op, size_t count, double sec,
               double mpi_seconds, double wrong) {
  zfcStats_t stats = ZFC_STATS_INITIALIZER;
  zfcCommGetStats(ctx.comm, &stats);
  const double algbw = static_cast<double>(count * sizeof(float)) / sec / 1e9;
  const double factor = ctx.ranks > 1 ? 2.0 * (ctx.ranks - 1) / ctx.ranks : 0.0;
  const double peak = op.mpi ? 0.0 : static_cast<double>(stats.last.peak_workspace_bytes);
  Row row;
  row.count("size", static_cast<double>(count * sizeof(float)), 12)
      .count("count", static_cast<double>(count), 10)
      .text("type", "float", 6)
      .text("wire", op.mpi ? "MPI_Allreduce" : op.name, 13)
      .num("time_us", sec * 1e6, 10, 1)
      .num("algbw", algbw, 7, 2)
      .num("busbw", algbw * factor, 7, 2)
      .count("wrong", wrong, 6)
      .num("x_mpi", sec / mpi_seconds, 6, 2)
      .count("peak_ws", peak, 10);
  return row;
}

}  // namespace

int run_allreduce(PerfContext& ctx) {
  const PerfOptions& o = ctx.options;
  std::vector<Op> ops{{"mpi", true, {zfcCompressNone, 1.0f}}};
  for (const std::string& c : o.compressions) {
    ops.push_back({c, false, {compression_kind(c), o.scale}});
  }
  if (ctx.rank == 0) {
    std::printf("# zfcAllReduce of fp32 data against MPI_Allreduce, %d ranks; time: median over "
                "%d iterations of the slowest rank\n# busbw = algbw * 2(G-1)/G; x_mpi = time / "
                "MPI_Allreduce time at the same size\n",
                ctx.ranks, o.iters);
  }
  double total_wrong = 0;
  for (size_t bytes : sweep(o)) {
    const size_t count = bytes / sizeof(float);
    if (count == 0) continue;
    Buffers b;
    b.send.resize(count);
    b.recv.assign(count, 0.0f);
    for (size_t i = 0; i < count; ++i) b.send[i] = element(ctx.rank, i);
    b.zfc_send = b.send.data();
    b.zfc_recv = b.recv.data();
    if (o.gpus > 0) {
      b.zfc_send = static_cast<const float*>(b.d_send.upload(b.send.data(), count * 4));
      b.zfc_recv = static_cast<float*>(b.d_recv.reserve(count * 4));
    }
    const std::vector<double> t = time_ops(ctx, ops, b, count);
    double mpi_seconds = 0;
    for (size_t k = 0; k < ops.size(); ++k) {
      const double sec = median(std::vector<double>(t.begin() + k * o.iters,
                                                    t.begin() + (k + 1) * o.iters));
      if (ops[k].mpi) mpi_seconds = sec;
      double wrong = NAN;
      if (o.check) {
        int overflowed = 0;
        run_once(ctx, ops[k], b, count, &overflowed);
        if (o.gpus > 0 && !ops[k].mpi) DeviceCopy::download(b.zfc_recv, b.recv.data(), count * 4);
        wrong = count_wrong(ctx, ops[k], b, count, overflowed);
        total_wrong += wrong;
      }
      ctx.report.add(result_row(ctx, ops[k], count, sec, mpi_seconds, wrong), ctx.rank == 0);
    }
  }
  if (ctx.rank == 0 && o.check) {
    std::printf("# Out of bounds values : %.0f %s\n", total_wrong,
                total_wrong == 0 ? "OK" : "FAILED");
  }
  return total_wrong == 0 ? 0 : 1;
}
