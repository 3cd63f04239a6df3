// How an encode rounds: to nearest even, or stochastically with random bits that are a fixed
// function of (seed, step, sending rank, hop, row id, column) (host_device/eight_bit.hpp).
// The call fixes the seed (the communicator's rounding_seed) and the step (the
// communicator's count of calls, equal on every rank); each place that encodes names its hop
// (which encode of the call it is) and the ids of the rows it encodes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "host_device/eight_bit.hpp"

namespace zfc {
namespace kernels {

// The ids of rows about to be encoded: ids[i] (4- or 8-byte unsigned integers), or base + i.
struct RowIds {
  const void* ids = nullptr;
  uint8_t id_bytes = 0;
  uint64_t base = 0;

  uint64_t at(size_t i) const {
    if (ids == nullptr) return base + i;
    return id_bytes == 4 ? static_cast<const uint32_t*>(ids)[i]
                         : static_cast<const uint64_t*>(ids)[i];
  }
  // The ids of the rows from the i-th on.
  RowIds from(size_t i) const {
    if (ids == nullptr) return {nullptr, 0, base + i};
    return {static_cast<const char*>(ids) + i * id_bytes, id_bytes, 0};
  }
  static RowIds counting(uint64_t first) { return {nullptr, 0, first}; }
  template <class T>
  static RowIds of(const T* ids) {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "row ids are 4 or 8 bytes");
    return {ids, static_cast<uint8_t>(sizeof(T)), 0};
  }
};

// The hops of a call: which encode of it a rounding is (part of the random bits' key).
enum Hop : uint32_t {
  kHopSend = 0,      // a rank's own rows, the first encode of every exchange
  kHopOwnerSum = 1,  // an owner's (or a chunk's) sums, sent back
  kHopNodeSum = 2,   // a node's sums, sent on by the hierarchical exchanges
  kHopTable = 3,     // a sharded table's rows, sent to the ranks that asked for them
};

struct Rounding {
  bool stochastic = false;
  uint64_t seed = 0;
  uint32_t step = 0;
  uint32_t rank = 0;
  uint32_t hop = kHopSend;
  RowIds rows;

  // The same call's rounding at another place: hop and row ids.
  Rounding at(uint32_t h, RowIds ids) const {
    Rounding r = *this;
    r.hop = h;
    r.rows = ids;
    return r;
  }
  Rounding from_row(size_t i) const {
    Rounding r = *this;
    r.rows = rows.from(i);
    return r;
  }
  RoundingKey key() const { return {seed, step, rank << 8 | (hop & 0xffu)}; }
};

}  // namespace kernels
}  // namespace zfc
