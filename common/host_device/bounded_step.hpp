// The words of a bounded sparse step (lib/algo/bounded_reduce.cpp) that host and device code
// both write and read: the lead of each rank's block in the key allgather, and the verdict
// every rank reaches alike from them.
#pragma once

#include <cstdint>

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

}  // namespace zfc
