// zfc_perf sparse: the fused embedding-gradient exchange (zfcSparseReduce) of every requested
// algorithm and compression on the same steps of a workload, interleaved step by step, with
// the frameworks' baseline (allgather, fp32) always measured alongside for the speedup; and,
// named as the algorithm "bounded", zfcSparseReduceBounded with a fixed capacity.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>

#include "perf_common.hpp"
#include "perf_device.hpp"
#include "perf_floor.hpp"
#include "sparse_result_hash.hpp"
#include "sparse_reference.hpp"

namespace {

// The buffers of a bounded variant: the capacity's indices and rows and the status, in host
// memory or (-g 1) on the device.
struct BoundedBuffers {
  size_t capacity = 0;
  std::vector<int32_t> ids;
  std::vector<float> rows;
  zfcBoundedStatus_t status{};
  DeviceCopy d_ids, d_rows, d_status;
};

struct Variant {
  std::string algo;
  std::string wire;
  std::string transport;
  zfcComm_t comm = nullptr;
  zfcSparsePlan_t plan = nullptr;
  std::vector<double> seconds;  // per timed step, this rank (later: max over ranks)
  double bytes = 0;             // this rank's sent + received, summed over timed steps
  double peak = 0;              // this rank's largest workspace
  double local_unique = 0;      // this rank's U_i, summed over timed steps
  double global_unique = 0;     // U_g summed over timed steps
  double formula = 0;           // the byte formula of the algorithm each step ran, summed
  std::vector<int> ran;         // the algorithm each timed step ran
  std::vector<double> ui;       // this rank's U_i per timed step (later: sum over ranks)
  std::vector<double> ug;       // U_g per timed step
  double internode = 0;         // this rank's internode sent + received, summed over steps
  double phase[zfcNumPhases] = {};  // this rank's seconds per phase, summed over timed steps
  double recv_max = 0;          // the busiest rank's received bytes, summed over timed steps
  double recv_sum = 0;          // every rank's received bytes, summed over ranks and steps
  double rounds = 0;            // dependent rounds, summed over timed steps
  int path = zfcPathNone;       // zfcDataPath_t of the last timed step (the call's)
  double host_syncs = 0;        // waits for the caller's stream, summed over timed steps
  double touched = 0;           // this rank's least bytes a step touches (perf_floor.hpp),
                                // summed over timed steps
  zfcSparseResult_t last = ZFC_SPARSE_RESULT_INITIALIZER;     // valid until the plan's next call
  std::unique_ptr<BoundedBuffers> bounded;  // "bounded": its result, which `last` views
};

// The library's number of an algorithm name (zfcGetAlgorithmName's), zfcAlgoAuto for
// "auto" and any name it does not know.
int algorithm_id(const std::string& name) {
  if (name == "bounded") return zfcAlgoUniqueAllReduce;  // the technique it runs
  for (int a = zfcAlgoAuto; a < zfcNumAlgorithms; ++a) {
    if (name == zfcGetAlgorithmName(a)) return a;
  }
  return zfcAlgoAuto;
}

// The fp32 bytes an encode reads (a decode writes) per wire byte: none in fp32, where
// nothing is encoded; 4 over the bytes of a wire value otherwise (a per-row scale left out).
double fp32_per_wire_byte(const std::string& wire) {
  const zfcCompressionKind_t kind = compression_kind(wire);
  return kind == zfcCompressNone ? 0.0
                                 : 4.0 / wire_value_bytes(kind, std::numeric_limits<double>::max());
}

// Indices per rank and step: its K tokens, then (with --candidates) the log-uniform
// candidates of its seed group, the rows of the output embedding that sampled softmax
// touches. Rank r is in group floor(r * S / G), as zfcSeedGroupCreate assigns them.
StepIndices step_indices(const PerfContext& ctx, const zfc::workload::StepSource& source) {
  return [&ctx, &source](int64_t step, int rank) {
    const PerfOptions& opt = ctx.options;
    std::vector<int32_t> idx = source.indices(step, rank);
    if (opt.candidates == 0) return idx;
    const int group =
        static_cast<int>(static_cast<int64_t>(rank) * opt.seed_groups / ctx.ranks);
    const uint64_t seed = zfcStepSeed(opt.seed, group, static_cast<uint64_t>(step));
    std::vector<int64_t> cand(opt.candidates);
    if (zfcSampleLogUniform(seed, opt.vocab, cand.size(), 1, cand.data(), nullptr, nullptr, 0,
                            nullptr, nullptr) != zfcSuccess) {
      perf_fail("zfcSampleLogUniform", zfcInvalidArgument, nullptr);
    }
    idx.insert(idx.end(), cand.begin(), cand.end());
    return idx;
  };
}

size_t tokens_per_rank(const PerfOptions& o) { return o.tokens + o.candidates; }

// The seed groups the candidates use are the library's: a group made with the same
// assignment has this rank's group's seeds.
void check_seed_group(const PerfContext& ctx) {
  const PerfOptions& o = ctx.options;
  const int mine = static_cast<int>(static_cast<int64_t>(ctx.rank) * o.seed_groups / ctx.ranks);
  zfcSeedGroup_t group = nullptr;
  const zfcResult_t r = zfcSeedGroupCreate(ctx.comm, zfcSeedExplicit, 0, mine, o.seed, &group);
  if (r != zfcSuccess) perf_fail("zfcSeedGroupCreate", r, ctx.comm);
  int id = -1;
  zfcSeedGroupInfo(group, &id, nullptr, nullptr);
  uint64_t seed = 0;
  if (zfcSeedGroupStepSeed(group, 0, &seed) != zfcSuccess || seed != zfcStepSeed(o.seed, id, 0) ||
      id != mine) {
    perf_fail("seed group", zfcInternalError, ctx.comm);
  }
  zfcSeedGroupDestroy(group);
}

std::vector<Variant> make_variants(const PerfContext& ctx) {
  const PerfOptions& o = ctx.options;
  std::vector<Variant> vs;
  auto variant = [](const std::string& algo, const std::string& wire, const NamedComm& c) {
    Variant v;
    v.algo = algo;
    v.wire = wire;
    v.transport = c.transport;
    v.comm = c.comm;
    return v;
  };
  for (size_t t = 0; t < ctx.comms.size(); ++t) {
    const NamedComm& c = ctx.comms[t];
    vs.push_back(variant("allgather", "none", c));  // the baseline first (the first's rules)
    for (const std::string& a : o.algorithms) {
      for (const std::string& w : o.compressions) {
        if (a == "allgather" && w == "none") continue;
        vs.push_back(variant(a, w, c));
      }
    }
  }
  for (Variant& v : vs) {
    zfcSparsePlanConfig_t cfg = ZFC_SPARSE_PLAN_CONFIG_INITIALIZER;
    cfg.dim = o.dim;
    cfg.vocab_size = o.vocab;
    cfg.row_type = zfcFloat32;
    cfg.index_type = zfcInt32;
    cfg.algorithm = algorithm_id(v.algo);
    cfg.compression = compression_kind(v.wire);
    cfg.compress_scale = o.scale;
    cfg.overflow_on_device = o.overflow_on_device;
    const zfcResult_t r = zfcSparsePlanCreate(v.comm, &cfg, &v.plan);
    if (r != zfcSuccess) perf_fail("zfcSparsePlanCreate", r, v.comm);
    if (v.algo == "bounded") {
      v.bounded = std::make_unique<BoundedBuffers>();
      const size_t safe = std::min(tokens_per_rank(o) * static_cast<size_t>(ctx.ranks),
                                   static_cast<size_t>(o.vocab));
      v.bounded->capacity = o.capacity > 0 ? o.capacity : safe;
    }
  }
  return vs;
}

// One zfcSparseReduceBounded (on `stream` with -g 1, waited for: the call returns before its
// work ran).
zfcResult_t call_bounded(const PerfContext& ctx, Variant& v, const void* idx, size_t n,
                         const void* rows, DeviceStream* stream) {
  BoundedBuffers& b = *v.bounded;
  const size_t cap = b.capacity, dim = ctx.options.dim;
  void* ids = nullptr;
  float* out = nullptr;
  zfcBoundedStatus_t* status = &b.status;
  if (stream != nullptr) {
    ids = b.d_ids.reserve(cap * sizeof(int32_t));
    out = static_cast<float*>(b.d_rows.reserve(cap * dim * sizeof(float)));
    status = static_cast<zfcBoundedStatus_t*>(b.d_status.reserve(sizeof(zfcBoundedStatus_t)));
  } else {
    b.ids.resize(cap);
    b.rows.resize(cap * dim);
    ids = b.ids.data();
    out = b.rows.data();
  }
  const zfcResult_t r = zfcSparseReduceBounded(v.plan, idx, n, rows, cap, ids, out, status,
                                               stream != nullptr ? stream->get() : nullptr);
  if (stream != nullptr) stream->sync();
  return r;
}

// After a bounded call: its status (a failure ends the run) and its result as `last`.
void view_bounded(const PerfContext& ctx, Variant& v) {
  BoundedBuffers& b = *v.bounded;
  const bool device = ctx.options.gpus > 0;
  if (device) DeviceCopy::download(b.d_status.reserve(0), &b.status, sizeof b.status);
  if (b.status.result != zfcSuccess) {
    // The communicator's query takes the failure with its text (the capacity, U_g).
    zfcResult_t failure = zfcSuccess;
    zfcCommGetAsyncError(v.comm, &failure);
    perf_fail("zfcSparseReduceBounded (its status; raise --capacity)",
              static_cast<zfcResult_t>(b.status.result), v.comm);
  }
  v.last.indices = device ? b.d_ids.reserve(0) : b.ids.data();
  v.last.rows = device ? static_cast<const float*>(b.d_rows.reserve(0)) : b.rows.data();
  v.last.num_unique = static_cast<size_t>(b.status.num_unique);
  v.last.dim = ctx.options.dim;
  v.last.overflowed = b.status.overflowed;
  v.last.algorithm = zfcAlgoUniqueAllReduce;
}

// What a step's algorithm should have moved, from every rank's U_i and the step's U_g.
double step_formula(const PerfContext& ctx, const Variant& v, double local_unique) {
  const PerfOptions& o = ctx.options;
  const ByteInputs in{ctx.ranks,
                      static_cast<double>(tokens_per_rank(o)) * ctx.ranks,
                      sum_over_ranks(local_unique),
                      static_cast<double>(v.last.num_unique),
                      static_cast<double>(o.dim),
                      static_cast<double>(o.vocab),
                      compression_kind(v.wire)};
  if (v.bounded) return bounded_formula_bytes(in, static_cast<double>(v.bounded->capacity));
  return formula_bytes(v.last.algorithm, in);
}

// "unique_allgather", or "unique_allgather 7/10" when `auto` chose differently across steps.
std::string describe_ran(const std::vector<int>& ran) {
  if (ran.empty()) return "-";
  int best = ran[0], best_count = 0;
  for (int a : ran) {
    const int c = static_cast<int>(std::count(ran.begin(), ran.end(), a));
    if (c > best_count) best = a, best_count = c;
  }
  std::string s = zfcGetAlgorithmName(best);
  if (best_count != static_cast<int>(ran.size())) {
    s += " " + std::to_string(best_count) + "/" + std::to_string(ran.size());
  }
  return s;
}

void run_steps(const PerfContext& ctx, const zfc::workload::StepSource& source,
               std::vector<Variant>& vs) {
  const PerfOptions& o = ctx.options;
  const StepIndices indices = step_indices(ctx, source);
  DeviceCopy d_idx, d_rows;  // -g 1: the step's inputs on this rank's GPU, copied untimed
  // -g 1: the calls' stream (not the legacy default stream, which NCCL's does not follow, so
  // that the transfers queue behind the kernels); a timed call ends once the stream ran it.
  std::unique_ptr<DeviceStream> stream;
  if (o.gpus > 0) stream = std::make_unique<DeviceStream>();
  for (int step = -o.warmup; step < o.iters; ++step) {
    const std::vector<int32_t> idx = indices(step, ctx.rank);
    const std::vector<float> rows = source.rows(step, ctx.rank, idx.size(), o.dim);
    const void* idx_in = idx.data();
    const void* rows_in = rows.data();
    if (o.gpus > 0) {
      idx_in = d_idx.upload(idx.data(), idx.size() * sizeof(int32_t));
      rows_in = d_rows.upload(rows.data(), rows.size() * sizeof(float));
    }
    for (Variant& v : vs) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      const zfcResult_t r =
          v.bounded ? call_bounded(ctx, v, idx_in, idx.size(), rows_in, stream.get())
                    : zfcSparseReduce(v.plan, idx_in, idx.size(), rows_in, &v.last,
                                      stream ? stream->get() : nullptr);
      if (stream && !v.bounded) stream->sync();
      const double sec = MPI_Wtime() - t0;
      if (r != zfcSuccess) {
        perf_fail(v.bounded ? "zfcSparseReduceBounded" : "zfcSparseReduce", r, v.comm);
      }
      if (v.bounded) view_bounded(ctx, v);
      if (step < 0) continue;
      zfcStats_t stats = ZFC_STATS_INITIALIZER;
      zfcCommGetStats(v.comm, &stats);
      v.seconds.push_back(sec);
      v.bytes += static_cast<double>(stats.last.bytes_sent + stats.last.bytes_received);
      v.peak = std::max(v.peak, static_cast<double>(stats.last.peak_workspace_bytes));
      v.local_unique += static_cast<double>(stats.last.local_unique);
      v.global_unique += static_cast<double>(v.last.num_unique);
      v.formula += step_formula(ctx, v, static_cast<double>(stats.last.local_unique));
      v.ran.push_back(v.last.algorithm);
      v.ui.push_back(static_cast<double>(stats.last.local_unique));
      // The model's U_g: the rows the allreduce moves (the capacity, for a bounded call).
      v.ug.push_back(static_cast<double>(v.bounded ? v.bounded->capacity : v.last.num_unique));
      v.internode += static_cast<double>(stats.last.internode_bytes_sent +
                                         stats.last.internode_bytes_received);
      for (int p = 0; p < zfcNumPhases; ++p) v.phase[p] += stats.last.seconds[p];
      v.recv_max += static_cast<double>(stats.last.bytes_received_max);
      v.recv_sum += static_cast<double>(stats.last.bytes_received_sum);
      v.rounds += stats.last.rounds;
      v.path = stats.last.path[zfcPhaseTotal];
      v.host_syncs += stats.last.host_syncs;
      v.touched += least_touched_bytes(
          static_cast<double>(stats.last.bytes_sent), static_cast<double>(stats.last.bytes_received),
          static_cast<double>(idx.size()), static_cast<double>(o.dim),
          static_cast<double>(v.last.num_unique), fp32_per_wire_byte(v.wire));
    }
  }
}

// #wrong of every variant's last step, on the worst rank; every element counts as wrong
// when the ranks' results differ.
std::vector<double> check_last_step(const PerfContext& ctx,
                                    const zfc::workload::StepSource& source,
                                    const std::vector<Variant>& vs) {
  const PerfOptions& o = ctx.options;
  const SparseReference ref =
      build_reference(source, step_indices(ctx, source), o.iters - 1, ctx.ranks, o.dim,
                      ctx.ranks / node_count(ctx, ctx.comm));
  std::vector<double> wrong;
  for (const Variant& v : vs) {
    // -g 1: the result is on the device (the plan's copy); checked on the host.
    const HostSparseResult host =
        o.gpus > 0 ? copy_to_host(v.last, sizeof(int32_t)) : HostSparseResult{};
    const zfcSparseResult_t& last = o.gpus > 0 ? host.result : v.last;
    double w = count_sparse_wrong(ref, last, compression_kind(v.wire), o.scale, ctx.ranks);
    uint64_t lo = hash_sparse_result(last), hi = lo;
    MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    if (lo != hi) w += static_cast<double>(v.last.num_unique * (o.dim + 1));
    wrong.push_back(max_over_ranks(w));
  }
  return wrong;
}

void print_preamble(const PerfContext& ctx, const zfc::workload::StepSource& source) {
  const PerfOptions& o = ctx.options;
  std::printf("# zfcSparseReduce on %s, %d ranks, K=%zu tokens per rank, D=%zu, %d steps after "
              "%d warm-up\n",
              source.describe().c_str(), ctx.ranks, o.tokens, o.dim, o.iters, o.warmup);
  if (o.candidates > 0) {
    std::printf("# plus %zu log-uniform candidates per rank and step, in %d seed groups (rank r "
                "in group floor(r*S/G)): the K column counts both\n",
                o.candidates, o.seed_groups);
  }
  std::printf("# time: median over steps of the slowest rank; MB: sent + received per rank and "
              "step; x_formula: MB / docs/algorithms.md formula\n# peak_ws: largest workspace on "
              "any rank; speedup and byte_ratio: against allgather/none in this run\n");
}

// One variant's row, its figures gathered over ranks (collective). The baseline (first)
// sets the time and bytes the others are compared with.
Row result_row(const PerfContext& ctx, const FloorRates& rates, Variant& v, double wrong,
               bool baseline, double* base_seconds, double* base_bytes) {
  const PerfOptions& o = ctx.options;
  const double steps = o.iters;
  const double gk = static_cast<double>(tokens_per_rank(o)) * ctx.ranks;
  max_over_ranks(&v.seconds);
  const double sec = median(v.seconds);
  const double bytes = sum_over_ranks(v.bytes) / ctx.ranks / steps;
  const double peak = max_over_ranks(v.peak);
  const double ug = v.global_unique / steps;
  const double formula = v.formula / steps;
  const double internode = sum_over_ranks(v.internode) / ctx.ranks / steps;
  const ModelRun run = predicted_seconds(ctx, v.comm, v.ran, v.ui, v.ug, tokens_per_rank(o),
                                         compression_kind(v.wire));
  const double model = run.seconds;
  if (baseline) *base_seconds = sec, *base_bytes = bytes;
  const double floor = floor_seconds(rates, max_over_ranks(v.touched) / steps, v.rounds / steps);
  Row row;
  row.text("algo", v.algo, 16)
      .text("wire", v.wire, 4)
      .text("net", v.transport, 4)
      .count("G", ctx.ranks, 3)
      .count("K", static_cast<double>(tokens_per_rank(o)), 6)
      .count("D", static_cast<double>(o.dim), 5)
      .num("U_g", ug, 8, 1)
      .num("U_g/GK", ug / gk, 6, 3)
      .num("time_us", sec * 1e6, 10, 1)
      .num("MB", bytes / 1e6, 9, 3)
      .num("xnode_MB", internode / 1e6, 8, 3)
      .num("x_formula", formula > 0 ? bytes / formula : (bytes == 0 ? 1.0 : NAN), 9, 4)
      .num("peak_ws_MB", peak / 1e6, 10, 3)
      .count("wrong", wrong, 6)
      .num("speedup", *base_seconds / sec, 7, 2)
      .num("byte_ratio", bytes > 0 ? *base_bytes / bytes : NAN, 10, 2)
      .text("ran", describe_ran(v.ran), 17)
      .num("model_us", model * 1e6, 9, 1)
      .num("model_err", model / sec - 1.0, 9, 3)
      .num("recv_skew", v.recv_sum > 0 ? v.recv_max * ctx.ranks / v.recv_sum : 1.0, 9, 3)
      .count("rounds", v.rounds / steps, 6)
      .num("x_floor", sec / floor, 7, 2);
  // The floor (perf_floor.hpp) the step time is judged against, and how much of the byte
  // ratio against allgather the speedup turns into.
  row.quiet("floor_us", floor * 1e6);
  if (rates.exchange_bytes_per_s > 0) {
    // The same floor with the wire bytes priced at the rate the transport itself reaches:
    // what is left above it is the library's own work.
    const double x = rates.copy_bytes_per_s / rates.exchange_bytes_per_s;
    const double busiest = max_over_ranks(v.touched + (x - 1.0) * v.bytes) / steps;
    const double bound = floor_seconds(rates, busiest, v.rounds / steps);
    row.quiet("exchange_x", x);
    row.quiet("transport_floor_us", bound * 1e6);
    row.quiet("x_transport_floor", sec / bound);
  }
  row.quiet("speedup_per_byte_ratio", bytes > 0 ? (*base_seconds / sec) / (*base_bytes / bytes)
                                                : NAN);
  // Where the step ran (host, staged through the host, or on the device) and its waits for
  // the device per step, on the rank that waited most.
  static const char* const kPaths[] = {"-", "host", "staged", "device"};
  row.text("path", kPaths[v.path >= 0 && v.path < 4 ? v.path : 0], 6);
  row.quiet("host_syncs", max_over_ranks(v.host_syncs) / steps);
  // The busiest rank's received bytes and the mean over ranks, per step (the library's
  // ledger, the same on every rank).
  row.quiet("recv_max_MB", v.recv_max / steps / 1e6);
  row.quiet("recv_mean_MB", v.recv_sum / ctx.ranks / steps / 1e6);
  // The cost model's inputs beyond the columns, so that a model can be refitted from the
  // rows alone (bench/fit_model.py).
  row.quiet("U_i_sum", run.unique_sum);
  row.quiet("U_i_max", run.unique_max);
  row.quiet("ranks_per_core", run.ranks_per_core);
  // Where the time goes: each phase's mean per step on the slowest rank, JSON only.
  for (int p = 0; p < zfcNumPhases; ++p) {
    const std::string key = std::string("phase_us_") + zfcGetPhaseName(p);
    row.quiet(key.c_str(), max_over_ranks(v.phase[p]) / steps * 1e6);
  }
  return row;
}

}  // namespace

int run_sparse(PerfContext& ctx) {
  const PerfOptions& o = ctx.options;
  const std::unique_ptr<zfc::workload::StepSource> source = make_step_source(o);
  if (ctx.rank == 0) print_preamble(ctx, *source);
  if (o.candidates > 0) check_seed_group(ctx);
  std::vector<Variant> vs = make_variants(ctx);
  const FloorRates rates = measure_floor_rates(ctx);
  if (ctx.rank == 0) {
    std::printf("# floor: %.2f GB/s copied per rank with %d ranks copying at once, %.1f us a "
                "round of small messages; x_floor: time / floor\n",
                rates.copy_bytes_per_s / 1e9, ctx.ranks, rates.round_seconds * 1e6);
    if (rates.exchange_bytes_per_s > 0) {
      std::printf("# wire: MPI point-to-point between every pair at once moves %.2f GB/s sent + "
                  "received per rank, so a step's wire bytes alone take %.2f x their floor "
                  "(exchange_x; x_transport_floor: time / the floor with its wire bytes at "
                  "that rate)\n",
                  rates.exchange_bytes_per_s / 1e9,
                  rates.copy_bytes_per_s / rates.exchange_bytes_per_s);
    }
  }
  run_steps(ctx, *source, vs);
  std::vector<double> wrong(vs.size(), NAN);
  if (o.check) wrong = check_last_step(ctx, *source, vs);

  double base_seconds = 0, base_bytes = 0, total_wrong = 0;
  for (size_t k = 0; k < vs.size(); ++k) {
    if (o.check) total_wrong += wrong[k];
    ctx.report.add(result_row(ctx, rates, vs[k], wrong[k], k == 0, &base_seconds, &base_bytes),
                   ctx.rank == 0);
    zfcSparsePlanDestroy(vs[k].plan);
  }
  if (ctx.rank == 0 && o.check) {
    std::printf("# Out of bounds values : %.0f %s\n", total_wrong,
                total_wrong == 0 ? "OK" : "FAILED");
  }
  return total_wrong == 0 ? 0 : 1;
}
