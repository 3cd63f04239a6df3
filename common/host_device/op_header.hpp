// The operation header every collective starts with (lib/algo/agreement.hpp), as it is on
// the wire. Here, where device code may include it too: a bounded step that agrees in its
// kernels (lib/algo/bounded_call.cpp) checks the gathered headers on the device.
#pragma once

#include <cstdint>

namespace zfc {

// The first word of every header: a block without it is no zipfcoll header.
constexpr uint32_t kHeaderMagic = 0x7a664831u;

struct OpHeader {
  uint32_t magic;
  uint32_t op;           // OpKind
  int32_t status;        // zfcResult_t of this rank's local checks
  int32_t algorithm;     // requested zfcAlgorithm_t (sparse reduce)
  int64_t count;         // tokens, elements for allreduce, calls for a group
  int64_t local_unique;  // U_i
  int64_t dim;
  int64_t vocab;
  int64_t capacity;      // caller's room for the result (unique merge); the distinct ids a
                         // rank owns itself (sharded gather); the plan's stream chunk in
                         // bytes (sparse apply); else -1
  int32_t row_type;
  int32_t index_type;
  int32_t compression;
  float scale;
  int32_t color;         // split; sparse reduce: 1 when the rank's step stays on the device
                         // (algo/call_path.hpp)
  int32_t key;           // split; bounded sparse reduce: kAgreedInKernels or 0
  uint64_t node;         // init: an id of the rank's host (same id: same machine);
                         // sharded and sparse apply: the update's alpha and epsilon, as
                         // fp32 bits (color: its kind)
  uint64_t sequence;     // the transport's count of agreed operations, this one included
};
// The size is part of the documented traffic (docs/algorithms.md, zfcCommGetStats).
static_assert(sizeof(OpHeader) == 96, "the operation header is 96 bytes on the wire");

// OpHeader::key of a zfcSparseReduceBounded that checks the agreement in its kernels (the
// plan agreed its capacity before); 0 when it agrees on the host.
constexpr int32_t kAgreedInKernels = 1;

}  // namespace zfc
