#include "algo/group_agreement.hpp"

#include <cstring>

namespace zfc {
namespace {

// Bytes of a group's block before its payloads.
size_t block_head_bytes(size_t calls) {
  return sizeof(OpHeader) + calls * (sizeof(OpHeader) + sizeof(uint64_t));
}

// The header that leads rank r's block (zero when the block is shorter): what decides, on
// every rank alike, whether the failure texts travel.
OpHeader first_header(const char* block, size_t bytes) {
  OpHeader h;
  std::memset(static_cast<void*>(&h), 0, sizeof h);
  if (bytes >= sizeof h) std::memcpy(static_cast<void*>(&h), block, sizeof h);
  return h;
}

// Rank r's block of `bytes` bytes at `block` into the views of every call (*group already
// holds its first header). A block that does not parse as a group of `calls` calls leaves
// the calls' views of rank r zero; unless its header already says why (another operation,
// another number of calls), the header is zeroed too, which agree() reports as no valid
// header.
void parse_block(const char* block, size_t bytes, size_t calls, size_t r, size_t n,
                 size_t block_displ, OpHeader* group, OpHeader* call_headers, size_t* sizes) {
  if (bytes >= sizeof(OpHeader) && (group->op != static_cast<uint32_t>(OpKind::kGroup) ||
                                    group->count != static_cast<int64_t>(calls))) {
    return;
  }
  if (bytes < block_head_bytes(calls)) {
    std::memset(static_cast<void*>(group), 0, sizeof *group);
    return;
  }
  bool whole = true;
  const char* lengths = block + sizeof(OpHeader) * (calls + 1);
  size_t displ = block_displ + block_head_bytes(calls), total = block_head_bytes(calls);
  for (size_t c = 0; c < calls; ++c) {
    uint64_t len = 0;
    std::memcpy(&len, lengths + c * sizeof len, sizeof len);
    if (len > bytes - total) {
      whole = false;
      break;
    }
    std::memcpy(&call_headers[c * n + r], block + sizeof(OpHeader) * (c + 1),
                sizeof(OpHeader));
    sizes[2 * c * n + r] = static_cast<size_t>(len);   // call c's bytes from rank r
    sizes[(2 * c + 1) * n + r] = displ;                // and where they start
    displ += len;
    total += len;
  }
  if (!whole || total != bytes) std::memset(static_cast<void*>(group), 0, sizeof *group);
}

}  // namespace

Status exchange_group(Transport& t, Workspace& ws, const GroupSide& mine, GroupAgreed* out) {
  const size_t n = static_cast<size_t>(t.size()), calls = mine.calls.size();
  size_t send_bytes = block_head_bytes(calls);
  for (size_t b : mine.payload_bytes) send_bytes += b;
  char* send = ws.get<char>(Slot::kFirstSend, send_bytes);
  OpHeader head = *mine.group;
  head.sequence = t.next_sequence();
  std::memcpy(send, &head, sizeof head);
  char* at = send + sizeof head;
  for (const LocalHeader* h : mine.calls) {
    OpHeader call = *h;
    call.sequence = head.sequence;
    std::memcpy(at, &call, sizeof call);
    at += sizeof call;
  }
  for (size_t b : mine.payload_bytes) {
    const uint64_t len = b;
    std::memcpy(at, &len, sizeof len);
    at += sizeof len;
  }
  for (size_t c = 0; c < calls; ++c) {
    if (mine.payload_bytes[c] > 0) std::memcpy(at, mine.payloads[c], mine.payload_bytes[c]);
    at += mine.payload_bytes[c];
  }
  size_t* sizes = nullptr;
  char* blocks = nullptr;
  ZFC_RETURN_IF_ERROR(gather_first_blocks(t, ws, send, send_bytes, &sizes, &blocks));
  // Headers: the ranks' group headers, then call c's n headers at (c + 1) * n.
  OpHeader* headers = ws.get<OpHeader>(Slot::kHeaders, (calls + 1) * n);
  std::memset(static_cast<void*>(headers), 0, (calls + 1) * n * sizeof(OpHeader));
  size_t* call_sizes = ws.get<size_t>(Slot::kCounts, 2 * calls * n + 1);
  std::memset(call_sizes, 0, (2 * calls * n + 1) * sizeof(size_t));
  bool failed = false;
  for (size_t r = 0; r < n; ++r) {
    headers[r] = first_header(blocks + sizes[n + r], sizes[r]);
    failed |= reports_failure(headers[r]);
    parse_block(blocks + sizes[n + r], sizes[r], calls, r, n, sizes[n + r], &headers[r],
                headers + n, call_sizes);
  }
  out->group_headers = headers;
  out->group_messages.clear();
  out->calls.assign(calls, Agreed());
  for (size_t c = 0; c < calls; ++c) {
    Agreed& a = out->calls[c];
    a.headers = headers + (c + 1) * n;
    a.payload = failed ? nullptr : blocks;  // the texts' allgather reuses the blocks' memory
    a.bytes = call_sizes + 2 * c * n;
    a.displs = call_sizes + (2 * c + 1) * n;
  }
  if (!failed) return Status::Ok();
  return failure_texts(t, ws, *mine.group, headers, &out->group_messages);
}

Status in_group(size_t i, const Status& s) {
  return Status(s.code(), strfmt("call %zu of the group: %s", i, s.message().c_str()));
}

Status agree_group(const GroupAgreed& agreed, int size) {
  ZFC_RETURN_IF_ERROR(agree(agreed.group_headers, size, agreed.group_messages));
  for (size_t c = 0; c < agreed.calls.size(); ++c) {
    const Agreed& a = agreed.calls[c];
    const Status s = agree(a.headers, size, a.messages);
    if (!s.ok()) return in_group(c, s);
  }
  return Status::Ok();
}

}  // namespace zfc
