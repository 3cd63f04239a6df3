// The words of a bounded sparse step (lib/algo/bounded_reduce.cpp) that host and device code
// both write and read -- the lead of each rank's block in the key allgather, and the verdict
// every rank reaches alike from them -- and the verdict itself, one source compiled for both.
#pragma once

#include <cstdint>

#include "zipfcoll/zipfcoll.h"

#if defined(__CUDACC__)
#define ZFC_BOUNDED_FN __host__ __device__ inline
#else
#define ZFC_BOUNDED_FN inline
#endif

namespace zfc {

// The lead of a rank's block: its first bad index (count when none) and its count.
struct BoundedLead {
  uint64_t first_bad;
  uint64_t count;
};

// What a bounded step decided: zfcSuccess, or the failure (zfcInvalidArgument) with the rank
// at fault (-1: none in particular) and a detail (a bad index's position, or the capacity
// that U_g exceeded).
struct BoundedVerdict {
  int64_t result;
  int64_t rank;
  int64_t detail;
  int64_t num_unique;  // U_g
};

// The verdict from the leads of `ranks` blocks of block_bytes at `gathered` (blocks start at
// multiples of 8 bytes) and the global set (count sorted distinct keys, the last of which is
// `sentinel` when some block was padded): the lowest rank with a bad index fails the step,
// else U_g above `capacity` does.
template <class K>
ZFC_BOUNDED_FN BoundedVerdict bounded_verdict_of(const char* gathered, uint64_t block_bytes,
                                                 int ranks, const K* global, uint64_t count,
                                                 K sentinel, uint64_t capacity) {
  BoundedVerdict v{zfcSuccess, -1, 0, 0};
  v.num_unique = static_cast<int64_t>(count > 0 && global[count - 1] == sentinel ? count - 1
                                                                                  : count);
  for (int r = 0; r < ranks; ++r) {
    const BoundedLead* lead =
        reinterpret_cast<const BoundedLead*>(gathered + static_cast<uint64_t>(r) * block_bytes);
    if (lead->first_bad < lead->count) {
      v.result = zfcInvalidArgument;
      v.rank = r;
      v.detail = static_cast<int64_t>(lead->first_bad);
      return v;
    }
  }
  if (static_cast<uint64_t>(v.num_unique) > capacity) {
    v.result = zfcInvalidArgument;
    v.detail = static_cast<int64_t>(capacity);
  }
  return v;
}

}  // namespace zfc
