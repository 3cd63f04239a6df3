// The words of a bounded sparse step (lib/algo/bounded_reduce.cpp) that host and device code
// both write and read -- the lead of each rank's block in the key allgather, and the verdict
// every rank reaches alike from them and, when the step agrees in its kernels, from the
// gathered operation headers -- and the verdict itself, one source compiled for both.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "host_device/op_header.hpp"
#include "zipfcoll/zipfcoll.h"

#if defined(__CUDACC__)
#define ZFC_BOUNDED_FN __host__ __device__ inline
#else
#define ZFC_BOUNDED_FN inline
#endif

namespace zfc {

// The lead of a rank's block: its first bad index (count when none), its count, and its
// number of distinct keys (of which the block holds at most the capacity).
struct BoundedLead {
  uint64_t first_bad;
  uint64_t count;
  uint64_t distinct;
};

// Why a bounded step failed.
enum BoundedReason : int64_t {
  kBoundedOk = 0,
  kBoundedBadIndex = 1,     // rank's indices[detail] is outside [0, vocab)
  kBoundedOverCapacity = 2, // U_g (num_unique; a lower bound, vr = 1, when some rank alone
                            // has more distinct indices than the capacity) above the
                            // capacity (detail)
  kBoundedDisagree = 3,     // rank's header differs from rank 0's at byte `detail` (values
                            // v0 and vr), or is no header (detail -1)
  kBoundedRankFailed = 4,   // rank failed its own checks (its call returned why)
  kBoundedTooMany = 5,      // the ranks' counts add up to `detail`, beyond int32 positions
};

// What a bounded step decided: zfcSuccess, or the failure with the rank at fault (-1: none
// in particular), its reason and detail.
struct BoundedVerdict {
  int64_t result;
  int64_t rank;
  int64_t detail;
  int64_t num_unique;  // U_g
  int64_t reason;      // BoundedReason
  int64_t v0, vr;      // kBoundedDisagree: rank 0's value and the rank's;
                       // kBoundedOverCapacity: vr = 1 when num_unique is a lower bound
};

namespace bounded_detail {

ZFC_BOUNDED_FN BoundedVerdict fail(int64_t result, int64_t rank, int64_t reason, int64_t detail) {
  BoundedVerdict v{result, rank, detail, 0, reason, 0, 0};
  return v;
}

// The field of `a` and `b` at byte `at`, `n` bytes (4 or 8) wide, as a signed number.
ZFC_BOUNDED_FN int64_t field(const OpHeader& h, size_t at, size_t n) {
  const unsigned char* p = reinterpret_cast<const unsigned char*>(&h) + at;
  if (n == 4) {
    int32_t v = 0;
    memcpy(&v, p, 4);
    return v;
  }
  int64_t v = 0;
  memcpy(&v, p, 8);
  return v;
}

}  // namespace bounded_detail

// The agreement of a bounded step that checks it in its kernels, from the `ranks` headers
// gathered and the sizes the ranks sent: every rank's a header (`header_bytes` sent, the
// magic word) of the same operation in the same sequence; then the lowest rank that failed
// its own checks; then every field but count and status equal to rank 0's; then the
// counts' sum addressable by int32 positions. The order of agree() (lib/algo/agreement.cpp),
// which checks the same on the host when the step agrees there.
ZFC_BOUNDED_FN BoundedVerdict bounded_agreement_of(const OpHeader* h, const uint64_t* sizes,
                                                   int ranks) {
  using bounded_detail::fail;
  for (int r = 0; r < ranks; ++r) {
    if (sizes[r] != sizeof(OpHeader) || h[r].magic != kHeaderMagic) {
      return fail(zfcMismatch, r, kBoundedDisagree, -1);
    }
  }
  for (int r = 1; r < ranks; ++r) {
    if (h[r].op != h[0].op) {
      BoundedVerdict v = fail(zfcMismatch, r, kBoundedDisagree, offsetof(OpHeader, op));
      v.v0 = h[0].op;
      v.vr = h[r].op;
      return v;
    }
    if (h[r].sequence != h[0].sequence) {
      BoundedVerdict v = fail(zfcMismatch, r, kBoundedDisagree, offsetof(OpHeader, sequence));
      v.v0 = static_cast<int64_t>(h[0].sequence);
      v.vr = static_cast<int64_t>(h[r].sequence);
      return v;
    }
  }
  for (int r = 0; r < ranks; ++r) {
    if (h[r].status != zfcSuccess) {
      const bool known = h[r].status > zfcSuccess && h[r].status < zfcNumResults;
      return fail(known ? h[r].status : zfcMismatch, r, kBoundedRankFailed, h[r].status);
    }
  }
  // The fields that must match, in the order of OpHeader (count and status may differ).
  const size_t fields[][2] = {
      {offsetof(OpHeader, algorithm), 4},   {offsetof(OpHeader, local_unique), 8},
      {offsetof(OpHeader, dim), 8},         {offsetof(OpHeader, vocab), 8},
      {offsetof(OpHeader, capacity), 8},    {offsetof(OpHeader, row_type), 4},
      {offsetof(OpHeader, index_type), 4},  {offsetof(OpHeader, compression), 4},
      {offsetof(OpHeader, scale), 4},       {offsetof(OpHeader, color), 4},
      {offsetof(OpHeader, key), 4},         {offsetof(OpHeader, node), 8}};
  for (int r = 1; r < ranks; ++r) {
    for (const auto& f : fields) {
      const int64_t a = bounded_detail::field(h[0], f[0], f[1]);
      const int64_t b = bounded_detail::field(h[r], f[0], f[1]);
      if (a != b) {
        BoundedVerdict v = fail(zfcMismatch, r, kBoundedDisagree, static_cast<int64_t>(f[0]));
        v.v0 = a;
        v.vr = b;
        return v;
      }
    }
  }
  uint64_t total = 0;
  for (int r = 0; r < ranks; ++r) total += static_cast<uint64_t>(h[r].count);
  if (total > 0x7fffffffu) {
    return fail(zfcInvalidArgument, -1, kBoundedTooMany, static_cast<int64_t>(total));
  }
  return fail(zfcSuccess, -1, kBoundedOk, 0);
}

// The verdict from the leads of `ranks` blocks of block_bytes at `gathered` (blocks start at
// multiples of 8 bytes, each holding at most `capacity` keys) and the global set (count
// sorted distinct keys, the last of which is `sentinel` when some block was padded): the
// lowest rank with a bad index fails the step, else U_g above `capacity` does. `headers`
// (with `sizes`), when the step agrees in its kernels, are checked first.
template <class K>
ZFC_BOUNDED_FN BoundedVerdict bounded_verdict_of(const char* gathered, uint64_t block_bytes,
                                                 int ranks, const OpHeader* headers,
                                                 const uint64_t* sizes, const K* global,
                                                 uint64_t count, K sentinel, uint64_t capacity) {
  if (headers != nullptr) {
    const BoundedVerdict agreed = bounded_agreement_of(headers, sizes, ranks);
    if (agreed.result != zfcSuccess) return agreed;
  }
  BoundedVerdict v = bounded_detail::fail(zfcSuccess, -1, kBoundedOk, 0);
  uint64_t ug = count > 0 && global[count - 1] == sentinel ? count - 1 : count;
  for (int r = 0; r < ranks; ++r) {
    const BoundedLead* lead =
        reinterpret_cast<const BoundedLead*>(gathered + static_cast<uint64_t>(r) * block_bytes);
    if (lead->first_bad < lead->count) {
      BoundedVerdict bad =
          bounded_detail::fail(zfcInvalidArgument, r, kBoundedBadIndex,
                               static_cast<int64_t>(lead->first_bad));
      return bad;
    }
    // A block holds at most `capacity` of a rank's keys: the merged set then undercounts.
    if (lead->distinct > capacity) v.vr = 1;
    if (lead->distinct > ug) ug = lead->distinct;
  }
  v.num_unique = static_cast<int64_t>(ug);
  if (ug > capacity) {
    v.result = zfcInvalidArgument;
    v.reason = kBoundedOverCapacity;
    v.detail = static_cast<int64_t>(capacity);
  }
  return v;
}

}  // namespace zfc
