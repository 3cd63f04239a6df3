#include "algo/cost_model.hpp"

#include <algorithm>
#include <climits>
#include <cmath>

#include "transport/transport.hpp"

namespace zfc {
namespace {

// Bytes each local pass touches (reads plus writes), per element or per key. The
// deduplication and merge sort keys in a few passes; scatters read a row and read and
// write the target; encodes and decodes read one format and write the other.
constexpr double kDedupeBytesPerToken = 24.0;
constexpr double kMergeBytesPerKey = 24.0;
constexpr double kLocateBytesPerKey = 8.0;
constexpr double kHeaderBytes = 96.0;


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
  // MPI and UCX run it in Bruck's ceil(log2 n) steps whatever the size, never gather()'s
  // ring of n - 1 latencies for blocks over 16 KiB (priced so, key_routed's shared pairs
  // cost G - 1 latencies until U_g / G fell under 16 KiB, and its time fell as G grew).
  // Bruck copies what a rank sends and receives, then the blocks into rank order
  // (transport/block_gather.hpp). Elsewhere (NCCL) the sizes are gathered first (a round the
  // statistics do not count), then the blocks as gather() prices.
  void gather_blocks(Level l, double total, double largest) {
    const double n = ranks(l);
    if (n <= 1) return;
    if (!m.log_depth_block_gathers) {
      collective(l, gather_steps(static_cast<int>(n), 8.0 * n), 8.0 * (n - 1), 0.0);
      gather(l, total, largest);
      return;
    }
    collective(l, forwarded_steps(static_cast<int>(n)),
               std::max(total - largest, largest * (n - 1)), 2 * total * frac(n));
    local(2.0 * (2.0 * total * frac(n) + total));
  }
  void local(double bytes) {
    if (m.local_bytes_per_s > 0) p.seconds += bytes * m.ranks_per_core / m.local_bytes_per_s;
  }
  void scratch(double bytes) { p.workspace_bytes += bytes; }
  static double frac(double parts) { return parts > 0 ? (parts - 1) / parts : 0.0; }
};

// What every algorithm pays: the rank's deduplication and the first allgather, of the
// headers and, for the algorithms that merge the global set first, every rank's distinct
// keys riding with them (algo/agreement.hpp).
void common(Cost& c, bool keys_ride) {
  const CostInputs& in = c.in;
  const double kb = keys_ride ? static_cast<double>(in.key_bytes) : 0.0;
  c.gather_blocks(Level::kFlat, kHeaderBytes * c.g() + in.local_unique * kb,
                  kHeaderBytes + in.max_local_unique * kb);
  c.local(kDedupeBytesPerToken * in.max_tokens);
  c.scratch(16.0 * in.max_tokens + kHeaderBytes * c.g() + in.local_unique * kb);
}

// The merge of the gathered distinct keys (which rode with the headers).
void index_merge(Cost& c) {
  const CostInputs& in = c.in;
  const double kb = static_cast<double>(in.key_bytes);
  c.local(kMergeBytesPerKey * in.local_unique + 8.0 * in.max_tokens);
  c.scratch(2.0 * in.local_unique * kb + 8.0 * in.local_unique + 4.0 * in.global_unique);
}

// Sums of this rank's tokens' rows into `rows` rows of fp32, the rows zeroed first.
void scatter(Cost& c, double rows) {
  const double d = static_cast<double>(c.in.dim);
  c.local(4.0 * rows * d + (c.in.input_bytes + 8.0) * c.in.max_tokens * d);
}

// Encoding n fp32 values for a compressed wire (nothing for fp32).
double encode_bytes(const Cost& c, double n) {
  return c.in.row_bytes < 4 ? n * (4.0 + c.in.row_bytes) : 0.0;
}

void allgather(Cost& c) {
  const CostInputs& in = c.in;
  const double d = static_cast<double>(in.dim), w = in.row_bytes, ug = in.global_unique;
  const double row = in.key_bytes + d * w;
  c.gather(Level::kFlat, in.tokens * row, in.max_tokens * row);
  c.local(kDedupeBytesPerToken * in.tokens + (w + 8.0) * in.tokens * d +
          16.0 * in.local_unique * d + 12.0 * ug * d);
  c.scratch(in.tokens * row + 4.0 * in.max_tokens * d + 4.0 * ug * d);
}

// The deterministic allreduce of n values: reduce-scatter by alltoallv, then allgather.
void allreduce(Cost& c, double n) {
  const double w = c.in.row_bytes;
  c.alltoallv(Level::kFlat, c.g(), n * w * Cost::frac(c.g()), 2 * n * w * Cost::frac(c.g()));
  c.gather(Level::kFlat, n * w, n * w / c.g());
  // Encode, the owners' sums, decode (compressed) or the finiteness check (fp32).
  c.local(encode_bytes(c, n) + n * (w + 8.0) + (w < 4 ? n * (w + 4.0) : 4.0 * n));
  c.scratch(4.0 * n + (w < 4 ? 2.0 * n * w : n * w));
}

void dense_vocab(Cost& c) {
  const CostInputs& in = c.in;
  scatter(c, static_cast<double>(in.vocab));
  allreduce(c, static_cast<double>(in.vocab) * (in.dim + 1.0));
  c.local(8.0 * in.global_unique * in.dim + 4.0 * in.vocab);
}

void unique_allreduce(Cost& c) {
  scatter(c, static_cast<double>(c.in.global_unique));
  allreduce(c, static_cast<double>(c.in.global_unique) * c.in.dim);
}

void unique_allgather(Cost& c) {
  const CostInputs& in = c.in;
  const double d = static_cast<double>(in.dim), w = in.row_bytes;
  const double all = static_cast<double>(in.local_unique) * d;
  scatter(c, static_cast<double>(in.max_local_unique));
  c.local(encode_bytes(c, in.max_local_unique * d));
  c.gather(Level::kFlat, all * w, in.max_local_unique * d * w);
  c.local(kLocateBytesPerKey * in.local_unique + all * (w + 8.0) + 12.0 * in.global_unique * d);
  c.scratch(all * w + 4.0 * in.max_local_unique * d + 4.0 * in.global_unique * d);
}

// The rows the busiest owner receives when owners are balanced over the level's ranks
// (owner_map.hpp): the heaviest-first placement leaves no owner more than one row's holders
// above the mean, and a row has at most ranks - 1 holders besides its owner.
double balanced_busiest(const Cost& c, Level l, double mean_rows) {
  return mean_rows + std::max(c.ranks(l) - 1.0, 0.0);
}

// Balanced owners over the level's ranks: the alltoallv of each rank's `out_rows` rows,
// `in_rows` in the mean, and the sums of the busiest owner's rows, which set the time.
void owner_reduce(Cost& c, Level l, double out_rows, double in_rows) {
  const double d = static_cast<double>(c.in.dim), w = c.in.row_bytes;
  const double f = Cost::frac(c.ranks(l));
  const double busiest_in = balanced_busiest(c, l, in_rows);
  const double most = std::max(out_rows, busiest_in);
  c.alltoallv(l, most, most * d * w * f, (out_rows + in_rows) * d * w * f);
  c.local(busiest_in * d * (w + 8.0));
}

// The owners' rows back to every rank: an allgatherv of `rows` rows over the level.
void owner_share(Cost& c, Level l, double rows) {
  const double bytes = rows * c.in.dim * c.in.row_bytes;
  c.gather(l, bytes, bytes / c.ranks(l));
}

void owner_partitioned(Cost& c) {
  const CostInputs& in = c.in;
  const double d = static_cast<double>(in.dim), w = in.row_bytes;
  const double ug = in.global_unique, ui = in.max_local_unique;
  scatter(c, ui);
  c.local(kLocateBytesPerKey * in.local_unique + encode_bytes(c, ui * d));
  owner_reduce(c, Level::kFlat, ui, in.local_unique / c.g());
  // The owners' gather lands in scratch; one pass puts each row at its position (decoding a
  // compressed wire) and tests it.
  c.local(encode_bytes(c, ug / c.g() * d) + ug * d * (w + 4.0));
  owner_share(c, Level::kFlat, ug);
  c.scratch(ui * d * (4.0 + w) + in.local_unique / c.g() * d * w + 4.0 * ug * d + ug * d * w);
}

void hierarchical(Cost& c) {
  const CostInputs& in = c.in;
  const double d = static_cast<double>(in.dim), w = in.row_bytes;
  const double ug = in.global_unique, ui = in.max_local_unique;
  const double L = c.per_node();
  const double un = node_unique(in, static_cast<int>(L));
  scatter(c, ui);
  c.local(kLocateBytesPerKey * in.local_unique + encode_bytes(c, ui * d));
  owner_reduce(c, Level::kNode, ui, in.local_unique / c.g());
  c.local(encode_bytes(c, un / L * d) + un / L * d * 4.0);
  owner_reduce(c, Level::kRail, un / L, un / L);
  owner_share(c, Level::kRail, ug / L);
  owner_share(c, Level::kNode, ug);
  c.local(encode_bytes(c, ug / c.g() * d) + ug * d * (w + 4.0));
  c.scratch(ui * d * (4.0 + w) + 2.0 * un / L * d * (w + 4.0) + 4.0 * ug * d + ug * d * w +
            16.0 * ug / L);
}

// The pairs the busiest key_routed owner receives. The key function places keys on owners
// as if at random, so an owner's load is a sum over the keys it draws of their holder counts
// h: the mean plus about sqrt(2 ln G) standard deviations, the variance being
// sum h^2 (1/G)(1 - 1/G), with sum h^2 taken as (sum U_i)^2 / U_g (every key held by the
// mean number of ranks). At least G - 1: the most frequent word is held by every rank, and
// its owner receives the others' pairs.
double routed_busiest(const Cost& c, double mean_rows) {
  const double g = c.g(), ug = std::max(static_cast<double>(c.in.global_unique), 1.0);
  if (g <= 1) return mean_rows;
  const double sum = static_cast<double>(c.in.local_unique);
  const double var = sum * sum / ug * (1.0 / g) * (1.0 - 1.0 / g);
  return std::max(mean_rows + std::sqrt(2.0 * std::log(g) * var), g - 1.0);
}

// Applying U_g reduced rows to the table: reading each, and reading and writing its table
// row (the optimizer's state, when it has one, is not priced).
void apply_pass(Cost& c) { c.local(12.0 * c.in.global_unique * c.in.dim); }

// The fused key-routed exchange's share (algo/streamed_apply.cpp): rounds in which every
// owner sends b of its U_g / G pairs (b = chunk / (G pair)), or, when the chunk holds fewer
// than G pairs, in which the owners of one of q = ceil(G / floor(chunk / pair)) groups send
// one each;
// each block is led by 8 bytes (the first by a 24-byte report), and the rows are decoded and
// applied as they arrive. One round's pairs are what a rank holds, not U_g x D.
void streamed_share(Cost& c) {
  const CostInputs& in = c.in;
  const double d = static_cast<double>(in.dim), w = in.row_bytes;
  const double pair = static_cast<double>(in.key_bytes) + d * w;
  const double ug = static_cast<double>(in.global_unique), owned = ug / c.g();
  const double room = std::max(1.0, std::floor(static_cast<double>(in.stream_chunk) / pair));
  const double b = room >= c.g() ? std::floor(room / c.g()) : 1.0;
  const double q = room >= c.g() ? 1.0 : std::ceil(c.g() / room);
  const double rounds = std::max(1.0, q * std::ceil(owned / b));
  // A round's pairs: b from every owner, or one from each of G / q.
  const double pairs = std::min(b * c.g() / q, ug);
  const double largest = std::min(b, owned) * pair + 8.0;
  c.gather_blocks(Level::kFlat, pairs * pair + 24.0 * c.g(), largest + 16.0);
  // The later rounds alike: one priced, times their number.
  const Prediction before = c.p;
  c.gather_blocks(Level::kFlat, pairs * pair + 8.0 * c.g(), largest);
  const double more = rounds - 2.0;
  if (more > 0) {
    c.p.seconds += more * (c.p.seconds - before.seconds);
    c.p.bytes += more * (c.p.bytes - before.bytes);
    c.p.internode_bytes += more * (c.p.internode_bytes - before.internode_bytes);
  } else if (more < 0) {
    c.p = before;  // one round only
  }
  c.local(w < 4 ? ug * d * (w + 4.0) : 4.0 * ug * d);  // decode
  apply_pass(c);
  c.scratch(pairs * pair + 24.0 * c.g() + d * (w + 8.0));
}

// The routing a key-routed exchange and a sharded update begin with: this rank's sums of its
// U_i distinct keys, encoded and packed, to their owners in one alltoallv (each message led
// by its 8-byte count), then the owners' merge and sums, the busiest owner setting the time.
// Scratch: the local sums and their wire copy, and the pairs an owner receives and sums.
void route_to_owners(Cost& c) {
  const CostInputs& in = c.in;
  const double d = static_cast<double>(in.dim), w = in.row_bytes;
  const double kb = static_cast<double>(in.key_bytes);
  const double ui = in.max_local_unique;
  const double f = Cost::frac(c.g()), routed = in.local_unique / c.g();
  const double busiest = routed_busiest(c, routed);
  scatter(c, ui);
  c.local(encode_bytes(c, ui * d) + 2.0 * ui * (kb + d * w));  // encode, pack
  const double counts = 8.0 * (c.g() - 1);
  c.routed_alltoallv(ui * (kb + d * w), counts,
                     std::max(ui, busiest) * (kb + d * w) * f + counts,
                     (ui + routed) * (kb + d * w) * f + 2.0 * counts);
  c.local(kMergeBytesPerKey * busiest + kLocateBytesPerKey * busiest +
          busiest * d * (w + 8.0));
  c.scratch(ui * d * (4.0 + w) + ui * kb + routed * (kb + d * (w + 4.0)));
}

// No index exchange: the routing above, then the summed pairs to every rank (each owner's
// block led by its 16-byte report), which merges them into key order; the shared blocks are
// U_g / G each on average.
void key_routed(Cost& c) {
  const CostInputs& in = c.in;
  const double d = static_cast<double>(in.dim), w = in.row_bytes;
  const double kb = static_cast<double>(in.key_bytes);
  const double ug = in.global_unique;
  route_to_owners(c);
  c.local(encode_bytes(c, ug / c.g() * d));
  if (in.stream_chunk > 0) {
    streamed_share(c);
    return;
  }
  c.gather_blocks(Level::kFlat, ug * (kb + d * w) + 16.0 * c.g(),
                  ug / c.g() * (kb + d * w) + 16.0);
  c.local(kMergeBytesPerKey * ug + kLocateBytesPerKey * ug +
          (w < 4 ? ug * d * (w + 4.0) : 8.0 * ug * d));
  c.scratch(ug * (2.0 * kb + d * w) + 4.0 * ug * d);
}

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

bool can_run_hierarchical(const CostInputs& in) {
  return in.nodes > 1 && in.nodes < in.ranks && in.ranks % in.nodes == 0;
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
  Cost c{in, m, {}};
  // Every algorithm but these merges the global set first (the default prices
  // owner_partitioned).
  const bool merged_first = algorithm != zfcAlgoAllGather && algorithm != zfcAlgoDenseVocab &&
                            algorithm != zfcAlgoKeyRouted;
  common(c, merged_first);
  if (merged_first) index_merge(c);
  switch (algorithm) {
    case zfcAlgoAllGather: allgather(c); break;
    case zfcAlgoDenseVocab: dense_vocab(c); break;
    case zfcAlgoUniqueAllReduce: unique_allreduce(c); break;
    case zfcAlgoUniqueAllGather: unique_allgather(c); break;
    case zfcAlgoKeyRouted: key_routed(c); break;
    case zfcAlgoHierarchical:
      if (can_run_hierarchical(in)) {
        hierarchical(c);
      } else {
        owner_partitioned(c);
      }
      break;
    default: owner_partitioned(c); break;
  }
  // Fused, the others return their whole result, which is then applied.
  if (in.stream_chunk > 0 && algorithm != zfcAlgoKeyRouted) apply_pass(c);
  return c.p;
}

zfcAlgorithm_t choose_before_index_exchange(const CostInputs& in, const MachineModel& m) {
  CostInputs best_case = in;
  best_case.global_unique = in.max_local_unique;
  double unique_best = 1e300;
  for (zfcAlgorithm_t a : {zfcAlgoUniqueAllReduce, zfcAlgoUniqueAllGather,
                           zfcAlgoOwnerPartitioned, zfcAlgoHierarchical}) {
    unique_best = std::min(unique_best, predict(a, best_case, m).seconds);
  }
  zfcAlgorithm_t choice = zfcAlgoAuto;
  double best = unique_best;
  // Key-routed skips the index exchange, so it is chosen here, against the others' best
  // case at the same U_g.
  const double routed = predict(zfcAlgoKeyRouted, best_case, m).seconds;
  if (routed < best) {
    choice = zfcAlgoKeyRouted;
    best = routed;
  }
  // The baseline's cost does not depend on U_g beyond its final pass: take the best case.
  const double gather = predict(zfcAlgoAllGather, best_case, m).seconds;
  if (gather < best) {
    choice = zfcAlgoAllGather;
    best = gather;
  }
  if (in.vocab <= INT32_MAX && predict(zfcAlgoDenseVocab, best_case, m).seconds < best) {
    choice = zfcAlgoDenseVocab;
  }
  return choice;
}

zfcAlgorithm_t choose_after_index_exchange(const CostInputs& in, const MachineModel& m,
                                           bool hierarchical) {
  zfcAlgorithm_t choice = zfcAlgoUniqueAllReduce;
  double best = predict(choice, in, m).seconds;
  for (zfcAlgorithm_t a : {zfcAlgoUniqueAllGather, zfcAlgoOwnerPartitioned,
                           zfcAlgoHierarchical}) {
    if (a == zfcAlgoHierarchical && !hierarchical) continue;
    const double t = predict(a, in, m).seconds;
    if (t < best) {
      choice = a;
      best = t;
    }
  }
  return choice;
}

}  // namespace zfc
