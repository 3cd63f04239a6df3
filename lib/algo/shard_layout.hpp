// Where the rows of a sharded table live: row v on rank key_owner(v, G)
// (host_device/key_owner.hpp), at row floor(v / G) of that rank's shard. Each block of G
// consecutive ids puts one row on every rank, so a rank's shard is dense (every local row is
// some id's) and holds floor(V/G) rows, plus one when it owns an id of the last, partial
// block. Zipf-ranked ids put ids of like frequency side by side, so each block spreads the
// load of its frequency evenly.
#pragma once

#include <cstddef>
#include <cstdint>

#include "host_device/key_owner.hpp"

namespace zfc {

// The number of rows of `rank`'s shard of a vocab-row table over `ranks` ranks.
inline uint64_t shard_row_count(int64_t vocab, int ranks, int rank) {
  const uint64_t v = static_cast<uint64_t>(vocab), g = static_cast<uint64_t>(ranks);
  const uint64_t full = v / g, rest = v % g;
  if (rest == 0) return full;
  // The partial block `full` puts id full*g + j on rank (j + mix(full) mod g) mod g.
  const uint64_t shift = mix64(full) % g;
  const uint64_t j = (static_cast<uint64_t>(rank) + g - shift) % g;
  return full + (j < rest ? 1 : 0);
}

// The row of id `key` in its owner's shard.
inline uint64_t shard_local_row(uint64_t key, int ranks) {
  return key / static_cast<uint64_t>(ranks);
}

}  // namespace zfc
