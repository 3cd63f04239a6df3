#include "algo/cost_terms.hpp"

#include <cmath>

namespace zfc {
namespace cost {

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

// Sums of this rank's K_i tokens' rows into `rows` rows of fp32 (kernels::
// scatter_rows_to_zeroed): each input row and its position read once, each of the U_i rows a
// token reaches written from its first token (no fill) and read and written for the others;
// the rows - U_i no token reaches are zeroed.
void scatter(Cost& c, double rows) {
  const double d = static_cast<double>(c.in.dim);
  const double k = c.in.max_tokens;
  const double ui = std::min(static_cast<double>(c.in.max_local_unique), rows);
  // Sums into rows that stay in a core's cache (kCachedRowBytes) cost their input's reads.
  const double adds = rows * d * 4.0 <= kCachedRowBytes ? 0.0 : 8.0 * k * d - 4.0 * ui * d;
  c.local(c.in.input_bytes * k * d + 8.0 * k + adds + 4.0 * (rows - ui) * d);
}

// Encoding n fp32 values for a compressed wire (nothing for fp32).
double encode_bytes(const Cost& c, double n) {
  return c.in.row_bytes < 4 ? n * (4.0 + c.in.row_bytes) : 0.0;
}

// The deterministic allreduce of n values: reduce-scatter by alltoallv, then allgather.
void allreduce(Cost& c, double n) {
  const double w = c.in.row_bytes;
  c.alltoallv(Level::kFlat, c.g(), n * w * Cost::frac(c.g()), 2 * n * w * Cost::frac(c.g()));
  c.gather(Level::kFlat, n * w, n * w / c.g());
  // Encode n, the owner's sums of G blocks into n / G values, the encode of those
  // (compressed); then the decode of n (compressed) or the finiteness scan (fp32).
  c.sum_into(n, w, n / c.g(), 4.0 * n / c.g());
  c.local(encode_bytes(c, n) + encode_bytes(c, n / c.g()) + (w < 4 ? n * (w + 4.0) : 4.0 * n));
  c.scratch(4.0 * n + (w < 4 ? 2.0 * n * w : n * w));
}

// The rows the busiest owner receives when owners are balanced over the level's ranks
// (owner_map.hpp): the heaviest-first placement leaves no owner more than one row's holders
// above the mean, and a row has at most ranks - 1 holders besides its owner.
double balanced_busiest(const Cost& c, Level l, double mean_rows) {
  return mean_rows + std::max(c.ranks(l) - 1.0, 0.0);
}

// Balanced owners over the level's ranks: the alltoallv of each rank's `out_rows` rows,
// `in_rows` in the mean, and the sums of the busiest owner's rows, which set the time: each
// wire row read, its `owned` sums written from their first contribution and read and
// written for the others (no fill).
void owner_reduce(Cost& c, Level l, double out_rows, double in_rows, double owned) {
  const double d = static_cast<double>(c.in.dim), w = c.in.row_bytes;
  const double f = Cost::frac(c.ranks(l));
  const double busiest_in = balanced_busiest(c, l, in_rows);
  const double most = std::max(out_rows, busiest_in);
  c.alltoallv(l, most, most * d * w * f, (out_rows + in_rows) * d * w * f);
  c.sum_into(busiest_in * d, w, std::min(owned, busiest_in) * d, 4.0 * owned * d);
}

// The owners' rows back to every rank: an allgatherv of `rows` rows over the level.
void owner_share(Cost& c, Level l, double rows) {
  const double bytes = rows * c.in.dim * c.in.row_bytes;
  c.gather(l, bytes, bytes / c.ranks(l));
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
  // A compressed wire's sums go to a U_i x D partial that is encoded into the pairs; fp32's
  // are written into the pairs' rows themselves, and only the keys are packed.
  const bool partial = w < 4;
  c.local(partial ? encode_bytes(c, ui * d) + 2.0 * ui * (kb + d * w) : 2.0 * ui * kb + ui * d * w);
  const double counts = 8.0 * (c.g() - 1);
  c.routed_alltoallv(ui * (kb + d * w), counts,
                     std::max(ui, busiest) * (kb + d * w) * f + counts,
                     (ui + routed) * (kb + d * w) * f + 2.0 * counts);
  // The owner's sums of its u_j = U_g / G keys, each written from its first pair.
  const double owned = std::min(static_cast<double>(in.global_unique) / c.g(), busiest);
  c.local(kMergeBytesPerKey * busiest + kLocateBytesPerKey * busiest);
  c.sum_into(busiest * d, w, owned * d, 4.0 * owned * d);
  c.scratch(ui * d * ((partial ? 4.0 : 0.0) + w) + ui * (partial ? kb : kb + 8.0) +
            routed * (kb + d * (w + 4.0)));
}

bool can_run_hierarchical(const CostInputs& in) {
  return in.nodes > 1 && in.nodes < in.ranks && in.ranks % in.nodes == 0;
}

}  // namespace cost
}  // namespace zfc
