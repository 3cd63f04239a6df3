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

#include "host_device/op_header.hpp"
#include "host_device/status.hpp"
#include "exec/workspace.hpp"
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

// Whether a header is a zfcSparseReduceBounded's that checks the agreement in its kernels
// (algo/bounded_call.cpp): such a rank takes no round after the headers' until its step's
// own, whatever the headers say.
bool agrees_in_kernels(const OpHeader& h);

// Collective, taken when some rank's header reports a failure: each failing rank's message
// (`mine`'s when it failed), the others' empty, into *messages (one per rank).
Status gather_messages(Transport& t, Workspace& ws, const LocalHeader& mine,
                       std::vector<std::string>* messages);

// When some header reports a failure: gather_messages, unless one of `headers` (t.size())
// agrees in its kernels, whose rank takes no such round; then this rank's own text alone.
Status failure_texts(Transport& t, Workspace& ws, const LocalHeader& mine,
                     const OpHeader* headers, std::vector<std::string>* messages);

// Transport::allgather_blocks into ws: every rank's block lands in kFirstBlocks (*blocks),
// their sizes and then their displacements in kFirstSizes (*sizes, 2 x t.size()).
Status gather_first_blocks(Transport& t, Workspace& ws, const void* data, size_t bytes,
                           size_t** sizes, char** blocks);

// Numbers the header with the transport's next sequence number and allgathers it with
// `payload` behind it; then, when some rank reports a failure, the failure texts (unless
// some rank agrees in its kernels: then this rank's own text alone). A block
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
