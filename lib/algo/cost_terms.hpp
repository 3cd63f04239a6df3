// The terms the cost model (algo/cost_model.hpp) prices a step with -- a collective's
// latencies and bytes at one level of the machine, a local pass over memory, the scratch --
// and the parts several algorithms share. Each algorithm's own formula lives in its file,
// beside its exchange, and is read through the algorithm table (algo/algorithms.hpp).
#pragma once

#include <algorithm>

#include "algo/cost_model.hpp"
#include "transport/block_gather.hpp"
#include "transport/transport.hpp"

namespace zfc {
namespace cost {

// Bytes each local pass touches (reads plus writes), per element or per key. The
// deduplication and merge sort keys in a few passes; scatters read a row and read and
// write the target; encodes and decodes read one format and write the other.
inline constexpr double kDedupeBytesPerToken = 24.0;
inline constexpr double kMergeBytesPerKey = 24.0;
inline constexpr double kLocateBytesPerKey = 8.0;
inline constexpr double kHeaderBytes = 96.0;
// Rows a pass sums into that fit in one core's L2 cache (1 MiB on current x86 server cores)
// are read and written there, not in memory: only the pass's input is priced.
inline constexpr double kCachedRowBytes = 1024.0 * 1024.0;

// Which ranks a collective spans: all G, the L of a node, or the N of a rail.
enum class Level { kFlat, kNode, kRail };

struct Cost {
  const CostInputs& in;
  const MachineModel& m;
  Prediction p;

  double g() const { return in.ranks; }
  double per_node() const { return g() / std::max(in.nodes, 1); }
  double ranks(Level l) const {
    return l == Level::kFlat ? g() : l == Level::kNode ? per_node() : in.nodes;
  }
  // A collective step of `steps` latencies of its link, in which the busiest rank sends
  // `each_way` bytes; `avg` is the ranks' mean of sent + received. A flat collective runs at
  // the speed of the links between nodes when there are several.
  void collective(Level l, double steps, double each_way, double avg) {
    if (ranks(l) <= 1) return;
    const bool across = l == Level::kRail || (l == Level::kFlat && in.nodes > 1);
    const LinkParams& link = across ? m.inter : m.intra;
    p.seconds += link.latency_s * steps;
    if (link.bytes_per_s > 0) p.seconds += each_way * m.ranks_per_core / link.bytes_per_s;
    p.bytes += avg;
    if (l == Level::kRail) p.internode_bytes += avg;
    if (l == Level::kFlat) p.internode_bytes += avg * (g() - per_node()) / (g() - 1);
  }
  // An alltoallv over the level in which a rank sends to and receives from at most
  // `messages` peers: each is a latency (empty messages are not sent).
  void alltoallv(Level l, double messages, double each_way, double avg) {
    collective(l, std::min(ranks(l) - 1, std::max(messages, 1.0)), each_way, avg);
  }
  // An alltoallv over all ranks, routed as choose_route decides from `decide` (the most a
  // rank sends, which the runtime knows before it): directly, G - 1 messages; or forwarded,
  // in which every block moves forwarded_relays(G) times on average. A rank then also relays
  // (relays - 1) x (`decide` + `framing`) of others' blocks, `framing` being what a rank
  // sends whatever its rows (the per-peer counts, a block each that is relayed like the
  // rows), which it receives and packs and unpacks; `each_way` (the busiest rank's) grows by
  // that, `avg` (the ranks' mean, framing included) by the relays, so the bytes count the
  // relays the time prices. The transport keeps every step's message until the exchange ends.
  void routed_alltoallv(double decide, double framing, double each_way, double avg) {
    if (choose_route(m, in.ranks, in.nodes, decide) == Route::kDirect) {
      alltoallv(Level::kFlat, g(), each_way, avg);
      return;
    }
    const double relays = forwarded_relays(in.ranks);
    const double moved = each_way + (relays - 1.0) * (decide + framing);
    collective(Level::kFlat, forwarded_steps(in.ranks), moved, relays * avg);
    local(2.0 * moved);
    scratch(relays * (decide + framing));  // a rank's messages, relayed blocks and its own
  }
  // An allgather(v) of `total` bytes over the level's ranks, `largest` from one rank: in
  // log depth or a ring, as the transports choose (transport.hpp).
  void gather(Level l, double total, double largest) {
    const double n = ranks(l);
    collective(l, gather_steps(static_cast<int>(n), total),
               std::max(total - largest, largest * (n - 1)), 2 * total * frac(n));
  }
  // An allgather of blocks whose sizes only their senders know (Transport::allgather_blocks).
  // MPI and UCX (transport/block_gather.hpp): up to kDirectBlockGatherRanks ranks, every
  // block goes to each peer at once and lands in place, gather()'s bytes in n - 1 messages,
  // a rank's own block copied to be kept for its sends and into place; past that, Bruck's
  // ceil(log2 n) steps whatever the size, never gather()'s ring of n - 1 latencies for
  // blocks over 16 KiB, copying what a rank sends and receives, then the blocks into rank
  // order. Elsewhere (NCCL) the sizes are gathered first (a round the statistics do not
  // count), then the blocks as gather() prices.
  void gather_blocks(Level l, double total, double largest) {
    const double n = ranks(l);
    if (n <= 1) return;
    if (!m.probed_block_gathers) {
      collective(l, gather_steps(static_cast<int>(n), 8.0 * n), 8.0 * (n - 1), 0.0);
      gather(l, total, largest);
      return;
    }
    const bool direct = n <= kDirectBlockGatherRanks;
    collective(l, direct ? n - 1 : forwarded_steps(static_cast<int>(n)),
               std::max(total - largest, largest * (n - 1)), 2 * total * frac(n));
    local(direct ? 4.0 * largest : 2.0 * (2.0 * total * frac(n) + total));
  }
  void local(double bytes) {
    if (m.local_bytes_per_s > 0) p.seconds += bytes * m.ranks_per_core / m.local_bytes_per_s;
  }
  // A sum of `values` wire values of `w` bytes each into fp32 targets of `target_bytes`,
  // `first` of the adds writing their target from +0 (no fill): the reads, and the targets'
  // reads and writes unless the targets stay in a core's cache (kCachedRowBytes).
  void sum_into(double values, double w, double first, double target_bytes) {
    const double rmw = target_bytes <= kCachedRowBytes ? 0.0 : 8.0 * values - 4.0 * first;
    local(values * w + rmw);
  }
  void scratch(double bytes) { p.workspace_bytes += bytes; }
  static double frac(double parts) { return parts > 0 ? (parts - 1) / parts : 0.0; }
};

// ---- parts several algorithms share (algo/cost_terms.cpp) ----------------------------------
void common(Cost& c, bool keys_ride);
void index_merge(Cost& c);
void scatter(Cost& c, double rows);
double encode_bytes(const Cost& c, double n);
void allreduce(Cost& c, double n);
double balanced_busiest(const Cost& c, Level l, double mean_rows);
void owner_reduce(Cost& c, Level l, double out_rows, double in_rows, double owned);
void owner_share(Cost& c, Level l, double rows);
double routed_busiest(const Cost& c, double mean_rows);
void apply_pass(Cost& c);
void streamed_share(Cost& c);
void route_to_owners(Cost& c);
bool can_run_hierarchical(const CostInputs& in);

}  // namespace cost
}  // namespace zfc
