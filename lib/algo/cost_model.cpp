#include "algo/cost_model.hpp"

#include <algorithm>
#include <climits>
#include <cmath>

#include "algo/algorithms.hpp"
#include "algo/cost_terms.hpp"
#include "transport/transport.hpp"

namespace zfc {
namespace {

using namespace cost;

// One step of a sharded table (docs/sharded_tables.md): the gather, whose ids go to their
// owners and whose rows come back (the owners' 8-byte heads ahead of the ids), and the
// update, whose (id, row) pairs go to the owners, which sum and apply them and allgather
// 16-byte reports. Each call has its header round and deduplicates the rank's tokens. The
// owners are as key_routed's (the same key function): the busiest sets the time.
void sharded_step(Cost& c) {
  const CostInputs& in = c.in;
  const double d = static_cast<double>(in.dim), w = in.row_bytes;
  const double kb = static_cast<double>(in.key_bytes);
  const double ui = in.max_local_unique, f = Cost::frac(c.g());
  const double routed = in.local_unique / c.g(), busiest = routed_busiest(c, routed);
  const double most = std::max(ui, busiest), heads = 8.0 * (c.g() - 1);
  const double owned = static_cast<double>(in.global_unique) / c.g();
  // The gather (its header round and deduplication are common()'s).
  c.local(kLocateBytesPerKey * ui);
  c.routed_alltoallv(ui * kb, heads, most * kb * f + heads, (ui + routed) * kb * f + 2 * heads);
  c.local(busiest * d * (4.0 + w) + ui * d * (w + 4.0));  // owners encode, ranks decode
  c.routed_alltoallv(ui * d * w, 0.0, most * d * w * f, (ui + routed) * d * w * f);
  // The update: its own header round and deduplication, then the routing.
  c.gather_blocks(Level::kFlat, kHeaderBytes * c.g(), kHeaderBytes);
  c.local(kDedupeBytesPerToken * in.max_tokens);
  route_to_owners(c);
  c.gather(Level::kFlat, 16.0 * c.g(), 16.0);
  c.local(12.0 * owned * d);  // the owner's update of its rows
  c.scratch(ui * d * 4.0);  // and the rows the gather returns
}

}  // namespace

Route choose_route(const MachineModel& m, int ranks, int nodes, double bytes) {
  if (!forwarding_applies(ranks) || m.route == RoutePolicy::kDirect) return Route::kDirect;
  if (m.route == RoutePolicy::kForwarded) return Route::kForwarded;
  const LinkParams& link = nodes > 1 ? m.inter : m.intra;
  const double relays = forwarded_relays(ranks);
  // Each byte a rank sends costs its link's time, and, forwarded, a pack and an unpack at
  // every relay; the latencies do not scale with ranks per core.
  double direct = link.latency_s * (ranks - 1), forwarded = link.latency_s * forwarded_steps(ranks);
  if (link.bytes_per_s > 0) {
    direct += bytes * m.ranks_per_core / link.bytes_per_s;
    forwarded += relays * bytes * m.ranks_per_core / link.bytes_per_s;
  }
  if (m.local_bytes_per_s > 0) {
    forwarded += 2.0 * relays * bytes * m.ranks_per_core / m.local_bytes_per_s;
  }
  return forwarded < direct ? Route::kForwarded : Route::kDirect;
}

double node_unique(const CostInputs& in, int ranks_per_node) {
  const double g = in.ranks, ug = static_cast<double>(in.global_unique);
  const double mean = static_cast<double>(in.local_unique) / std::max(g, 1.0);
  if (g <= 1 || mean <= 0 || ug <= mean) return std::min(ug, mean * ranks_per_node);
  const double beta = std::log(ug / mean) / std::log(g);
  return std::min(ug, mean * std::pow(static_cast<double>(ranks_per_node), beta));
}

Prediction predict_sharded(const CostInputs& in, const MachineModel& m) {
  Cost c{in, m, {}};
  common(c, false);
  sharded_step(c);
  return c.p;
}

Prediction predict(zfcAlgorithm_t algorithm, const CostInputs& in, const MachineModel& m) {
  // An algorithm the table does not know is priced as owner_partitioned.
  const AlgorithmInfo* a = find_algorithm(algorithm);
  if (a == nullptr) a = find_algorithm(zfcAlgoOwnerPartitioned);
  Cost c{in, m, {}};
  common(c, a->merges_first);
  if (a->merges_first) index_merge(c);
  a->price(c);
  // Fused, the others return their whole result, which is then applied.
  if (in.stream_chunk > 0 && !a->streams_apply) apply_pass(c);
  return c.p;
}

// Whether auto may weigh `a` at `stage` for these inputs.
bool weighed(const AlgorithmInfo& a, AutoStage stage, const CostInputs& in, bool hierarchical) {
  if (a.auto_stage != stage) return false;
  if (a.needs_int32_positions && in.vocab > INT32_MAX) return false;
  return !a.needs_node_map || hierarchical;
}

zfcAlgorithm_t choose_before_index_exchange(const CostInputs& in, const MachineModel& m) {
  CostInputs best_case = in;
  best_case.global_unique = in.max_local_unique;
  // The algorithms that merge first, at the smallest U_g they could see (hierarchical among
  // them: it prices as owner_partitioned where it cannot run).
  double best = 1e300;
  for (const AlgorithmInfo& a : algorithm_table()) {
    if (a.auto_stage == AutoStage::kAfterIndexExchange) {
      best = std::min(best, predict(a.id, best_case, m).seconds);
    }
  }
  // Those that need no index exchange are chosen here, in the table's order, against the
  // others' best case at the same U_g (the baseline's cost does not depend on U_g beyond
  // its final pass).
  zfcAlgorithm_t choice = zfcAlgoAuto;
  for (const AlgorithmInfo& a : algorithm_table()) {
    if (!weighed(a, AutoStage::kBeforeIndexExchange, in, false)) continue;
    const double t = predict(a.id, best_case, m).seconds;
    if (t < best) {
      choice = a.id;
      best = t;
    }
  }
  return choice;
}

zfcAlgorithm_t choose_after_index_exchange(const CostInputs& in, const MachineModel& m,
                                           bool hierarchical) {
  zfcAlgorithm_t choice = zfcAlgoAuto;
  double best = 0.0;
  for (const AlgorithmInfo& a : algorithm_table()) {
    if (!weighed(a, AutoStage::kAfterIndexExchange, in, hierarchical)) continue;
    const double t = predict(a.id, in, m).seconds;
    if (choice == zfcAlgoAuto || t < best) {
      choice = a.id;
      best = t;
    }
  }
  return choice;
}

}  // namespace zfc
