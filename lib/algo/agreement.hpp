// Agreement on arguments without an extra round trip. Every collective starts with an
// allgather of one block per rank (Transport::allgather_blocks): a fixed-size header, which
// the operation needs anyway for the sizes of what follows (token counts, local unique
// counts), and whatever the operation's first exchange carries besides (the distinct keys of
// the sparse exchanges that merge them). The header also carries the rank's view of the
// arguments that must match and the outcome of its local checks, so that every rank reaches
// the same verdict from the same data: either all proceed or all return the same error,
// naming the rank and the value at fault. The failing ranks' messages travel in a second
// allgather, only when some rank reports a failure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "host_device/status.hpp"
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
  kGroup = 7,  // the calls between zfcGroupStart and zfcGroupEnd (algo/call_group.hpp)
  kShardedGather = 8,
  kShardedApply = 9,
  kSparseApply = 10,  // zfcSparseReduceApply: the fused reduce and update of a replicated table
  kSparseBounded = 11,  // zfcSparseReduceBounded: fixed sizes, no size read back
};

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
  int32_t key;           // split
  uint64_t node;         // init: an id of the rank's host (same id: same machine);
                         // sharded and sparse apply: the update's alpha and epsilon, as
                         // fp32 bits (color: its kind)
  uint64_t sequence;     // the transport's count of agreed operations, this one included
};
// The size is part of the documented traffic (docs/algorithms.md, zfcCommGetStats).
static_assert(sizeof(OpHeader) == 96, "the operation header is 96 bytes on the wire");

// This rank's header and the text of its local failure, which is sent only when some rank
// reports one.
struct LocalHeader : OpHeader {
  explicit LocalHeader(const OpHeader& h) : OpHeader(h) {}
  std::string message;
};

// The longest failure text a rank sends (longer ones are cut).
constexpr size_t kMaxFailureText = 1024;

// A header for `op` with every field neutral (status success, capacity -1).
OpHeader make_header(OpKind op);

// Records a local failure in the header (the first one wins).
void header_fail(LocalHeader* h, const Status& s);

// What the first exchange of an operation brought from every rank.
struct Agreed {
  const OpHeader* headers = nullptr;  // size() headers
  const char* payload = nullptr;      // rank r's payload at payload + displs[r], bytes[r] long
  const size_t* bytes = nullptr;
  const size_t* displs = nullptr;
  std::vector<std::string> messages;  // the ranks' failure texts, when some rank failed
};

// Whether a header reports a local failure every rank will name (so the texts must travel).
bool reports_failure(const OpHeader& h);

// Collective, taken when some rank's header reports a failure: each failing rank's message
// (`mine`'s when it failed), the others' empty, into *messages (one per rank).
Status gather_messages(Transport& t, Workspace& ws, const LocalHeader& mine,
                       std::vector<std::string>* messages);

// Transport::allgather_blocks into ws: every rank's block lands in kFirstBlocks (*blocks),
// their sizes and then their displacements in kFirstSizes (*sizes, 2 x t.size()).
Status gather_first_blocks(Transport& t, Workspace& ws, const void* data, size_t bytes,
                           size_t** sizes, char** blocks);

// Numbers the header with the transport's next sequence number and allgathers it with
// `payload` behind it; then, when some rank reports a failure, the failure texts. A block
// too short for a header leaves a header that agree() rejects. Everything *out points at
// lives in ws (kHeaders, kFirstBlocks, kFirstSizes) until its next call.
Status exchange_headers(Transport& t, Workspace& ws, const LocalHeader& mine,
                        const void* payload, size_t payload_bytes, Agreed* out);

// The verdict every rank computes identically: ranks out of step (a sequence number or an
// operation that differs from rank 0's: zfcMismatch naming both), else the lowest rank's
// local failure (with messages[r], when given), else the first field that differs from rank
// 0's (zfcMismatch; for a group, its number of calls), else, for operations that give int32
// positions, a total count over ranks beyond INT32_MAX.
Status agree(const OpHeader* all, int size, const std::vector<std::string>& messages = {});

// exchange_headers (timed as the header phase in *op) followed by agree().
Status exchange_and_agree(Transport& t, Workspace& ws, const LocalHeader& mine,
                          zfcOpStats_t* op, Agreed* out, const void* payload = nullptr,
                          size_t payload_bytes = 0);

}  // namespace zfc
