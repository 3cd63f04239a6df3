// A step of an embedding table trained with SGD, on the same steps of a workload, interleaved
// step by step, in two modes of zfc_perf:
//   sharded         the table replicated on every rank (zfcSparseReduce, then zfcApplyUpdate
//                   on the whole table) or sharded by rows (zfcShardedGather for the forward
//                   lookup, then zfcShardedReduceApply);
//   sparse --apply  replicated tables only: zfcSparseReduce then zfcApplyUpdate per
//                   algorithm, against the fused, streamed zfcSparseReduceApply.
// The replicated allgather/none variant is the baseline of speedup and byte_ratio; table_MB is
// the table each rank holds, apart from the library's workspace (peak_ws_MB). #wrong compares
// every variant's table, after the last step, with the baseline's: bit for bit in fp32, within
// a bound on the wire's rounding otherwise (count_wrong).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "perf_common.hpp"
#include "workload/step_source.hpp"

namespace {

constexpr float kLearningRate = 0.01f;

enum class Step { kReduceThenApply, kFused, kSharded };

struct Variant {
  std::string algo;  // the label: an algorithm, "fused_key_routed" or "sharded"
  Step step = Step::kReduceThenApply;
  zfcAlgorithm_t algorithm = zfcAlgoAllGather;
  std::string wire;
  std::string transport;
  zfcComm_t comm = nullptr;
  zfcSparsePlan_t plan = nullptr;
  std::vector<float> table;     // the whole table, or this rank's shard
  size_t rows = 0;              // rows of `table`
  std::vector<double> seconds;  // per timed step, this rank (later: max over ranks)
  double bytes = 0, peak = 0, recv_max = 0, recv_sum = 0, rounds = 0, local_unique = 0;
  bool sharded() const { return step == Step::kSharded; }
};

float initial_value(int64_t v, size_t k) {
  return static_cast<float>((v * 131 + static_cast<int64_t>(k) * 17) % 1000) / 1000.0f - 0.5f;
}

std::vector<Variant> make_variants(const PerfContext& ctx) {
  const PerfOptions& o = ctx.options;
  std::vector<Variant> vs;
  for (const NamedComm& c : ctx.comms) {
    auto add = [&](Step step, zfcAlgorithm_t algorithm, const std::string& wire) {
      Variant v;
      v.step = step;
      v.algorithm = algorithm;
      v.algo = step == Step::kSharded ? "sharded"
               : step == Step::kFused ? std::string("fused_") + zfcGetAlgorithmName(algorithm)
                                      : zfcGetAlgorithmName(algorithm);
      v.wire = wire;
      v.transport = c.transport;
      v.comm = c.comm;
      vs.push_back(std::move(v));
    };
    add(Step::kReduceThenApply, zfcAlgoAllGather, "none");
    for (const std::string& w : o.compressions) {
      add(Step::kReduceThenApply, zfcAlgoOwnerPartitioned, w);
    }
    if (o.mode == "sharded") {
      for (const std::string& w : o.compressions) add(Step::kSharded, zfcAlgoKeyRouted, w);
      continue;
    }
    for (const std::string& w : o.compressions) add(Step::kReduceThenApply, zfcAlgoKeyRouted, w);
    for (const std::string& w : o.compressions) add(Step::kFused, zfcAlgoKeyRouted, w);
  }
  for (Variant& v : vs) {
    zfcSparsePlanConfig_t cfg = ZFC_SPARSE_PLAN_CONFIG_INITIALIZER;
    cfg.dim = o.dim;
    cfg.vocab_size = o.vocab;
    cfg.index_type = zfcInt32;
    cfg.algorithm = v.algorithm;
    cfg.stream_chunk_bytes = o.stream_chunk;
    cfg.compression = compression_kind(v.wire);
    cfg.compress_scale = o.scale;
    zfcResult_t r = zfcSparsePlanCreate(v.comm, &cfg, &v.plan);
    if (r != zfcSuccess) perf_fail("zfcSparsePlanCreate", r, v.comm);
    v.rows = static_cast<size_t>(o.vocab);
    if (v.sharded()) {
      r = zfcShardRows(o.vocab, ctx.ranks, ctx.rank, &v.rows);
      if (r != zfcSuccess) perf_fail("zfcShardRows", r, nullptr);
    }
    v.table.resize(v.rows * o.dim);
    for (int64_t id = 0; id < o.vocab; ++id) {
      int owner = ctx.rank;
      size_t row = static_cast<size_t>(id);
      if (v.sharded()) zfcShardLocate(o.vocab, ctx.ranks, id, &owner, &row);
      if (owner != ctx.rank) continue;
      for (size_t k = 0; k < o.dim; ++k) v.table[row * o.dim + k] = initial_value(id, k);
    }
  }
  return vs;
}

// Adds the figures of one step's calls (one or two), counted from zero since the step began
// (the variants of a transport share its communicator).
void add_step(Variant& v) {
  zfcStats_t stats = ZFC_STATS_INITIALIZER;
  zfcCommGetStats(v.comm, &stats);
  const zfcOpStats_t& s = stats.total;
  v.bytes += static_cast<double>(s.bytes_sent + s.bytes_received);
  v.peak = std::max(v.peak, static_cast<double>(s.peak_workspace_bytes));
  v.recv_max += static_cast<double>(s.bytes_received_max);
  v.recv_sum += static_cast<double>(s.bytes_received_sum);
  v.rounds += s.rounds;
  // U_i, which each call of the step counts.
  v.local_unique += static_cast<double>(s.local_unique) / static_cast<double>(s.calls);
}

// One step of one variant; with `record`, its figures are added.
void run_step(const PerfContext& ctx, Variant& v, const std::vector<int32_t>& idx,
              const std::vector<float>& grad, bool record) {
  const PerfOptions& o = ctx.options;
  zfcRowUpdate_t sgd = ZFC_ROW_UPDATE_INITIALIZER;
  sgd.kind = zfcUpdateSgd;
  sgd.alpha = kLearningRate;
  zfcCommResetStats(v.comm);
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  zfcSparseResult_t out = ZFC_SPARSE_RESULT_INITIALIZER;
  zfcResult_t r = zfcSuccess;
  if (v.sharded()) {
    r = zfcShardedGather(v.plan, v.table.data(), v.rows, idx.data(), idx.size(), &out, nullptr,
                         nullptr);
    if (r != zfcSuccess) perf_fail("zfcShardedGather", r, v.comm);
    r = zfcShardedReduceApply(v.plan, idx.data(), idx.size(), grad.data(), &sgd,
                              v.table.data(), nullptr, v.rows, nullptr, nullptr);
    if (r != zfcSuccess) perf_fail("zfcShardedReduceApply", r, v.comm);
  } else if (v.step == Step::kFused) {
    r = zfcSparseReduceApply(v.plan, idx.data(), idx.size(), grad.data(), &sgd, v.table.data(),
                             nullptr, nullptr, nullptr);
    if (r != zfcSuccess) perf_fail("zfcSparseReduceApply", r, v.comm);
  } else {
    r = zfcSparseReduce(v.plan, idx.data(), idx.size(), grad.data(), &out, nullptr);
    if (r != zfcSuccess) perf_fail("zfcSparseReduce", r, v.comm);
    r = zfcApplyUpdate(v.table.data(), nullptr, o.vocab, o.dim, out.indices, zfcInt32, out.rows,
                       out.num_unique, &sgd, nullptr);
    if (r != zfcSuccess) perf_fail("zfcApplyUpdate", r, v.comm);
  }
  const double sec = MPI_Wtime() - t0;
  if (!record) return;
  add_step(v);
  v.seconds.push_back(sec);
}

// How often each id was a token, over every rank and step so far, and the steps: what the
// bound of count_wrong is made of.
struct TokenTally {
  std::vector<double> tokens;
  double steps = 0;
};

void tally_step(const PerfContext& ctx, const zfc::workload::StepSource& source, int step,
                TokenTally* tally) {
  for (int r = 0; r < ctx.ranks; ++r) {
    for (int32_t id : source.indices(step, r)) tally->tokens[static_cast<size_t>(id)] += 1;
  }
  tally->steps += 1;
}

// Elements of v's table that differ from the baseline's, on the worst rank: any bit in fp32;
// with a compressed wire, beyond a bound on its rounding. Each step every rank rounds its
// sum of n_r rows (|g| < 1, so |sum| <= n_r) once and an owner-partitioned exchange rounds
// the total once more: at most alpha (2 u n + 2 G s) per element and step, n the id's tokens
// over ranks, u the wire's unit roundoff, s its smallest subnormal; and each table rounds its
// own fp32 update, half an ulp of |w| <= |w0| + alpha n per step.
double count_wrong(const PerfContext& ctx, const Variant& base, const Variant& v,
                   const TokenTally& tally) {
  const PerfOptions& o = ctx.options;
  const zfcCompressionKind_t kind = compression_kind(v.wire);
  const double u = kind == zfcCompressFp16 ? 0x1p-11 : 0x1p-8;
  const double tiny = kind == zfcCompressFp16 ? 0x1p-24 : 0x1p-133;
  double wrong = 0;
  for (int64_t id = 0; id < o.vocab; ++id) {
    int owner = ctx.rank;
    size_t row = static_cast<size_t>(id);
    if (v.sharded()) zfcShardLocate(o.vocab, ctx.ranks, id, &owner, &row);
    if (owner != ctx.rank) continue;
    const float* got = &v.table[row * o.dim];
    const float* want = &base.table[static_cast<size_t>(id) * o.dim];
    const double n = tally.tokens[static_cast<size_t>(id)];
    const double wire = kLearningRate * (2 * u * n + 2 * ctx.ranks * tiny * tally.steps);
    for (size_t k = 0; k < o.dim; ++k) {
      bool same = std::memcmp(&got[k], &want[k], sizeof(float)) == 0;
      if (!same && kind != zfcCompressNone) {
        const double w = std::fabs(initial_value(id, k)) + kLearningRate * n;
        same = std::fabs(double(got[k]) - want[k]) <= wire + tally.steps * 0x1p-23 * w;
      }
      wrong += same ? 0 : 1;
    }
  }
  return max_over_ranks(wrong);
}

// The median step time of the slowest rank (collective).
double slowest_median(const Variant& v) {
  std::vector<double> seconds = v.seconds;
  max_over_ranks(&seconds);
  return median(seconds);
}

// Sent + received per rank and step, the mean over ranks (collective).
double mean_bytes(const PerfContext& ctx, const Variant& v) {
  return sum_over_ranks(v.bytes) / ctx.ranks / ctx.options.iters;
}

// The row of v, whose time and bytes are `sec` and `bytes`, the baseline's base_*.
Row result_row(const PerfContext& ctx, const Variant& v, double wrong, double sec, double bytes,
               double base_seconds, double base_bytes) {
  const PerfOptions& o = ctx.options;
  const double steps = o.iters;
  const double table = max_over_ranks(static_cast<double>(v.table.size() * sizeof(float)));
  Row row;
  row.text("algo", v.algo, 17)
      .text("wire", v.wire, 4)
      .text("net", v.transport, 4)
      .count("G", ctx.ranks, 3)
      .count("K", static_cast<double>(o.tokens), 6)
      .count("D", static_cast<double>(o.dim), 5)
      .num("time_us", sec * 1e6, 10, 1)
      .num("MB", bytes / 1e6, 9, 3)
      .num("peak_ws_MB", max_over_ranks(v.peak) / 1e6, 10, 3)
      .num("table_MB", table / 1e6, 9, 2)
      .count("wrong", wrong, 6)
      .num("speedup", base_seconds / sec, 7, 2)
      .num("byte_ratio", bytes > 0 ? base_bytes / bytes : NAN, 10, 2)
      .num("recv_skew", v.recv_sum > 0 ? v.recv_max * ctx.ranks / v.recv_sum : 1.0, 9, 3)
      .count("rounds", v.rounds / steps, 6);
  row.quiet("recv_max_MB", v.recv_max / steps / 1e6);
  row.quiet("recv_mean_MB", v.recv_sum / ctx.ranks / steps / 1e6);
  row.quiet("U_i_sum", sum_over_ranks(v.local_unique) / steps);
  return row;
}

}  // namespace

// Both modes (see the top of this file).
int run_table_steps(PerfContext& ctx) {
  const PerfOptions& o = ctx.options;
  const std::unique_ptr<zfc::workload::StepSource> source = make_step_source(o);
  if (ctx.rank == 0) {
    std::printf("# a table of V=%lld rows trained with SGD on %s, %d ranks, K=%zu tokens per "
                "rank, D=%zu, %d steps after %d warm-up\n# replicated: zfcSparseReduce + "
                "zfcApplyUpdate; %s\n# time: median over steps of the slowest rank; MB: sent "
                "+ received per rank and step; table_MB: the table one rank holds (the largest "
                "shard)\n",
                static_cast<long long>(o.vocab), source->describe().c_str(), ctx.ranks,
                o.tokens, o.dim, o.iters, o.warmup,
                o.mode == "sharded" ? "sharded: zfcShardedGather + zfcShardedReduceApply"
                                    : "fused: zfcSparseReduceApply, streamed");
  }
  std::vector<Variant> vs = make_variants(ctx);
  TokenTally tally;
  tally.tokens.assign(static_cast<size_t>(o.vocab), 0.0);
  for (int step = -o.warmup; step < o.iters; ++step) {
    const std::vector<int32_t> idx = source->indices(step, ctx.rank);
    const std::vector<float> grad = source->rows(step, ctx.rank, idx.size(), o.dim);
    for (Variant& v : vs) run_step(ctx, v, idx, grad, step >= 0);
    if (o.check) tally_step(ctx, *source, step, &tally);
  }
  // Each transport's variants follow its baseline (allgather/none), as made.
  const size_t per_transport = vs.size() / ctx.comms.size();
  double total_wrong = 0, base_seconds = 0, base_bytes = 0;
  for (size_t k = 0; k < vs.size(); ++k) {
    const Variant& base = vs[k - k % per_transport];
    const double sec = slowest_median(vs[k]), bytes = mean_bytes(ctx, vs[k]);
    if (k % per_transport == 0) base_seconds = sec, base_bytes = bytes;
    const double wrong = o.check ? count_wrong(ctx, base, vs[k], tally) : NAN;
    if (o.check) total_wrong += wrong;
    ctx.report.add(result_row(ctx, vs[k], wrong, sec, bytes, base_seconds, base_bytes),
                   ctx.rank == 0);
  }
  for (Variant& v : vs) zfcSparsePlanDestroy(v.plan);
  if (ctx.rank == 0 && o.check) {
    std::printf("# Out of bounds values : %.0f %s\n", total_wrong,
                total_wrong == 0 ? "OK" : "FAILED");
  }
  return total_wrong == 0 ? 0 : 1;
}
