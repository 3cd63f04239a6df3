#include "algo/group_agreement.hpp"

#include <cstring>

namespace zfc {
namespace {

// Bytes of a group's block before its payloads.
size_t block_head_bytes(size_t calls) {
  return sizeof(OpHeader) + calls * (sizeof(OpHeader) + sizeof(uint64_t));
}

// Rank r's block of `bytes` bytes at `block` into the views of every call; false when it
// does not parse as a group of `calls` calls (its group header is then zeroed, which
// agree() reports as no valid header, unless it already says why: another operation, or
// another number of calls).
bool parse_block(const char* block, size_t bytes, size_t calls, int r, int size,
                 size_t block_displ, OpHeader* group, OpHeader* call_headers, size_t* sizes) {
  const size_t n = static_cast<size_t>(size), i_r = static_cast<size_t>(r);
  if (bytes < sizeof(OpHeader)) {
    std::memset(group, 0, sizeof *group);
    return false;
  }
  std::memcpy(group, block, sizeof *group);
  if (group->op != static_cast<uint32_t>(OpKind::kGroup) ||
      group->count != static_cast<int64_t>(calls)) {
    return false;
  }
  if (bytes < block_head_bytes(calls)) {
    std::memset(group, 0, sizeof *group);
    return false;
  }
  const char* lengths = block + sizeof(OpHeader) * (calls + 1);
  size_t displ = block_displ + block_head_bytes(calls), total = block_head_bytes(calls);
  for (size_t c = 0; c < calls; ++c) {
    uint64_t len = 0;
    std::memcpy(&len, lengths + c * sizeof len, sizeof len);
    if (len > bytes - total) {
      std::memset(group, 0, sizeof *group);
      return false;
    }
    std::memcpy(&call_headers[c * n + i_r], block + sizeof(OpHeader) * (c + 1),
                sizeof(OpHeader));
    sizes[2 * c * n + i_r] = static_cast<size_t>(len);   // call c's bytes from rank r
    sizes[(2 * c + 1) * n + i_r] = displ;                // and where they start
    displ += len;
    total += len;
  }
  if (total != bytes) std::memset(group, 0, sizeof *group);
  return total == bytes;
}

void append_text(std::string* blob, const std::string& text) {
  const uint32_t len = static_cast<uint32_t>(std::min(text.size(), kMaxFailureText));
  blob->append(reinterpret_cast<const char*>(&len), sizeof len);
  blob->append(text.data(), len);
}

// Rank r's texts from its blob (an empty blob: no failure, every text empty).
void read_texts(const char* blob, size_t bytes, size_t r, GroupAgreed* out) {
  size_t at = 0;
  for (size_t k = 0; k <= out->calls.size(); ++k) {
    std::string text;
    uint32_t len = 0;
    if (bytes - at >= sizeof len) {
      std::memcpy(&len, blob + at, sizeof len);
      at += sizeof len;
      len = static_cast<uint32_t>(std::min<size_t>(len, bytes - at));
      text.assign(blob + at, len);
      at += len;
    }
    if (k == 0) {
      out->group_messages[r] = std::move(text);
    } else {
      out->calls[k - 1].messages[r] = std::move(text);
    }
  }
}

Status gather_texts(Transport& t, Workspace& ws, const GroupSide& mine, GroupAgreed* out) {
  const size_t n = static_cast<size_t>(t.size());
  std::string blob;
  bool failed = mine.group->status != zfcSuccess;
  for (const LocalHeader* h : mine.calls) failed |= h->status != zfcSuccess;
  if (failed) {
    append_text(&blob, mine.group->status != zfcSuccess ? mine.group->message : "");
    for (const LocalHeader* h : mine.calls) {
      append_text(&blob, h->status != zfcSuccess ? h->message : "");
    }
  }
  size_t* sizes = nullptr;
  char* got = nullptr;
  ZFC_RETURN_IF_ERROR(gather_first_blocks(t, ws, blob.data(), blob.size(), &sizes, &got));
  out->group_messages.assign(n, std::string());
  for (Agreed& a : out->calls) {
    a.messages.assign(n, std::string());
    a.payload = nullptr;  // the texts reused the blocks' memory
  }
  for (size_t r = 0; r < n; ++r) read_texts(got + sizes[n + r], sizes[r], r, out);
  return Status::Ok();
}

bool reports_failure(const OpHeader& h) { return h.status != zfcSuccess; }

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
    parse_block(blocks + sizes[n + r], sizes[r], calls, static_cast<int>(r), t.size(),
                sizes[n + r], &headers[r], headers + n, call_sizes);
    failed |= reports_failure(headers[r]);
  }
  out->group_headers = headers;
  out->group_messages.clear();
  out->calls.assign(calls, Agreed());
  for (size_t c = 0; c < calls; ++c) {
    Agreed& a = out->calls[c];
    a.headers = headers + (c + 1) * n;
    a.payload = blocks;
    a.bytes = call_sizes + 2 * c * n;
    a.displs = call_sizes + (2 * c + 1) * n;
    for (size_t r = 0; r < n; ++r) failed |= reports_failure(a.headers[r]);
  }
  if (!failed) return Status::Ok();
  return gather_texts(t, ws, mine, out);
}

Status agree_group(const GroupAgreed& agreed, int size) {
  ZFC_RETURN_IF_ERROR(agree(agreed.group_headers, size, agreed.group_messages));
  for (size_t c = 0; c < agreed.calls.size(); ++c) {
    const Agreed& a = agreed.calls[c];
    const Status s = agree(a.headers, size, a.messages);
    if (!s.ok()) {
      return Status(s.code(), strfmt("call %zu of the group: %s", c, s.message().c_str()));
    }
  }
  return Status::Ok();
}

}  // namespace zfc
