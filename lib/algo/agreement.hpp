// Agreement on arguments without an extra round trip. Every collective starts with an
// allgather of one fixed-size header per rank, which it needs anyway for the sizes of what
// follows (token counts, local unique counts). The header also carries the rank's view of
// the arguments that must match, and the outcome of its local checks with a message, so
// that every rank reaches the same verdict from the same data: either all proceed or all
// return the same error, naming the rank and the value at fault.
#pragma once

#include <cstdint>

#include "base/status.hpp"
#include "core/workspace.hpp"
#include "transport/transport.hpp"

namespace zfc {

enum class OpKind : uint32_t {
  kInit = 1,
  kSplit = 2,
  kUniqueMerge = 3,
  kAllReduce = 4,
  kSparseReduce = 5,
  kSeedGroup = 6,
};

struct OpHeader {
  uint32_t magic;
  uint32_t op;           // OpKind
  int32_t status;        // zfcResult_t of this rank's local checks
  int32_t algorithm;     // requested zfcAlgorithm_t (sparse reduce)
  int64_t count;         // tokens, or elements for allreduce
  int64_t local_unique;  // U_i
  int64_t dim;
  int64_t vocab;
  int64_t capacity;      // caller's room for the result (unique merge), else -1
  int32_t row_type;
  int32_t index_type;
  int32_t compression;
  float scale;
  int32_t color;         // split
  int32_t key;           // split
  uint64_t node;         // init: an id of the rank's host (same id: same machine)
  uint64_t sequence;     // the transport's count of agreed operations, this one included
  char message[96];      // this rank's local error, if any
};
// The size is part of the documented traffic (docs/algorithms.md, zfcCommGetStats).
static_assert(sizeof(OpHeader) == 192, "the operation header is 192 bytes on the wire");

// A header for `op` with every field neutral (status success, capacity -1).
OpHeader make_header(OpKind op);

// Records a local failure in the header (the first one wins).
void header_fail(OpHeader* h, const Status& s);

// Numbers the header with the transport's next sequence number and allgathers the headers;
// *all points at size() headers in ws's kHeaders slot.
Status exchange_headers(Transport& t, Workspace& ws, const OpHeader& mine,
                        const OpHeader** all);

// The verdict every rank computes identically: ranks out of step (a sequence number or an
// operation that differs from rank 0's: zfcMismatch naming both), else the lowest rank's
// local failure, else the first field that differs from rank 0's (zfcMismatch), else, for
// operations that give int32 positions, a total count over ranks beyond INT32_MAX.
Status agree(const OpHeader* all, int size);

// exchange_headers (timed as the header phase in *op) followed by agree().
Status exchange_and_agree(Transport& t, Workspace& ws, const OpHeader& mine, zfcOpStats_t* op,
                          const OpHeader** all);

}  // namespace zfc
