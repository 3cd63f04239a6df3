#include "algo/agreement.hpp"

#include <climits>
#include <cstdio>
#include <cstring>
#include <string>

#include "core/stats.hpp"
#include "kernels/row_update.hpp"

namespace zfc {
namespace {

const char* op_name(uint32_t op) {
  switch (static_cast<OpKind>(op)) {
    case OpKind::kInit: return "zfcCommInitMpi";
    case OpKind::kSplit: return "zfcCommSplit";
    case OpKind::kUniqueMerge: return "zfcUniqueMerge";
    case OpKind::kAllReduce: return "zfcAllReduce";
    case OpKind::kSparseReduce: return "zfcSparseReduce";
    case OpKind::kSeedGroup: return "zfcSeedGroupCreate";
    case OpKind::kGroup: return "zfcGroupEnd";
    case OpKind::kShardedGather: return "zfcShardedGather";
    case OpKind::kShardedApply: return "zfcShardedReduceApply";
    case OpKind::kSparseApply: return "zfcSparseReduceApply";
    case OpKind::kSparseBounded: return "zfcSparseReduceBounded";
  }
  return "an unknown operation";
}

Status differs(const char* what, int64_t v0, int rank, int64_t vr) {
  return error(zfcMismatch, "%s differs across ranks: rank 0 has %lld, rank %d has %lld", what,
               static_cast<long long>(v0), rank, static_cast<long long>(vr));
}

// The init header's key: which figures of the machine model were given (bit 0 intra_node,
// bit 1 inter_node, bit 2 local_gbs), in the config or ZIPFCOLL_MACHINE_MODEL.
std::string figures_given(int32_t key) {
  std::string s;
  const char* const names[3] = {"intra_node", "inter_node", "local_gbs"};
  for (int b = 0; b < 3; ++b) {
    if ((key & (1 << b)) == 0) continue;
    s += (s.empty() ? "" : " and ");
    s += names[b];
  }
  return s.empty() ? "none" : s;
}

// The update an apply's header carries (color: kind; node: alpha and epsilon).
std::string update_text(const OpHeader& h) {
  const kernels::RowUpdate u = kernels::unpack_update(h.color, h.node);
  char text[96];
  std::snprintf(text, sizeof text, "%s alpha %g epsilon %g", kernels::update_kind_name(h.color),
                static_cast<double>(u.alpha), static_cast<double>(u.epsilon));
  return text;
}

}  // namespace

OpHeader make_header(OpKind op) {
  OpHeader h;
  std::memset(&h, 0, sizeof h);
  h.magic = kHeaderMagic;
  h.op = static_cast<uint32_t>(op);
  h.status = zfcSuccess;
  h.capacity = -1;
  return h;
}

void header_fail(LocalHeader* h, const Status& s) {
  if (h->status != zfcSuccess || s.ok()) return;
  h->status = s.code();
  h->message = s.message().substr(0, kMaxFailureText);
}

bool agrees_in_kernels(const OpHeader& h) {
  return h.magic == kHeaderMagic && h.op == static_cast<uint32_t>(OpKind::kSparseBounded) &&
         h.key == kAgreedInKernels;
}

bool reports_failure(const OpHeader& h) {
  return h.magic == kHeaderMagic && h.status != zfcSuccess;
}

Status gather_messages(Transport& t, Workspace& ws, const LocalHeader& mine,
                       std::vector<std::string>* messages) {
  const size_t n = static_cast<size_t>(t.size());
  const std::string& text = mine.status != zfcSuccess ? mine.message : std::string();
  size_t* sizes = nullptr;
  char* got = nullptr;
  ZFC_RETURN_IF_ERROR(gather_first_blocks(t, ws, text.data(), text.size(), &sizes, &got));
  messages->resize(n);
  for (size_t r = 0; r < n; ++r) (*messages)[r].assign(got + sizes[n + r], sizes[r]);
  return Status::Ok();
}

Status failure_texts(Transport& t, Workspace& ws, const LocalHeader& mine,
                     const OpHeader* headers, std::vector<std::string>* messages) {
  const size_t n = static_cast<size_t>(t.size());
  for (size_t r = 0; r < n; ++r) {
    if (!agrees_in_kernels(headers[r])) continue;
    // Ranks agreeing in their kernels take no second round: this rank's own text only.
    messages->assign(n, std::string());
    (*messages)[static_cast<size_t>(t.rank())] = mine.status != zfcSuccess ? mine.message : "";
    return Status::Ok();
  }
  return gather_messages(t, ws, mine, messages);
}

Status gather_first_blocks(Transport& t, Workspace& ws, const void* data, size_t bytes,
                           size_t** sizes, char** blocks) {
  const size_t n = static_cast<size_t>(t.size());
  size_t* s = ws.get<size_t>(Slot::kFirstSizes, 2 * n);
  char* got = nullptr;
  ZFC_RETURN_IF_ERROR(t.allgather_blocks(data, bytes, s, s + n, [&](size_t total) {
    got = ws.get<char>(Slot::kFirstBlocks, total);
    return got;
  }));
  *sizes = s;
  *blocks = got;
  return Status::Ok();
}

Status exchange_headers(Transport& t, Workspace& ws, const LocalHeader& mine,
                        const void* payload, size_t payload_bytes, Agreed* out) {
  const size_t n = static_cast<size_t>(t.size());
  char* send = ws.get<char>(Slot::kFirstSend, sizeof(OpHeader) + payload_bytes);
  OpHeader head = mine;
  head.sequence = t.next_sequence();
  std::memcpy(send, &head, sizeof head);
  if (payload_bytes > 0) std::memcpy(send + sizeof head, payload, payload_bytes);
  size_t* sizes = nullptr;
  char* blocks = nullptr;
  ZFC_RETURN_IF_ERROR(
      gather_first_blocks(t, ws, send, sizeof(OpHeader) + payload_bytes, &sizes, &blocks));
  OpHeader* headers = ws.get<OpHeader>(Slot::kHeaders, n);
  bool failed = false;
  for (size_t r = 0; r < n; ++r) {
    if (sizes[r] < sizeof(OpHeader)) {
      std::memset(&headers[r], 0, sizeof(OpHeader));  // agree() names the rank
      sizes[r] = 0;
    } else {
      std::memcpy(&headers[r], blocks + sizes[n + r], sizeof(OpHeader));
      sizes[r] -= sizeof(OpHeader);
      sizes[n + r] += sizeof(OpHeader);
    }
    failed |= reports_failure(headers[r]);
  }
  out->headers = headers;
  out->payload = blocks;
  out->bytes = sizes;
  out->displs = sizes + n;
  out->messages.clear();
  if (!failed) return Status::Ok();
  // The texts' allgather reuses the block slots: the payload is not needed on this path.
  out->payload = nullptr;
  out->bytes = out->displs = nullptr;
  return failure_texts(t, ws, mine, headers, &out->messages);
}

Status agree(const OpHeader* all, int size, const std::vector<std::string>& messages) {
  for (int r = 0; r < size; ++r) {
    if (all[r].magic != kHeaderMagic) {
      return error(zfcMismatch, "rank %d sent no valid operation header: ranks are not "
                   "calling the same zipfcoll operation", r);
    }
  }
  const OpHeader& h0 = all[0];
  for (int r = 1; r < size; ++r) {
    const OpHeader& h = all[r];
    if (h.sequence != h0.sequence || h.op != h0.op) {
      return error(zfcMismatch, "ranks are out of step: rank 0 is in collective #%llu (%s), "
                   "rank %d in collective #%llu (%s)",
                   static_cast<unsigned long long>(h0.sequence), op_name(h0.op), r,
                   static_cast<unsigned long long>(h.sequence), op_name(h.op));
    }
  }
  for (int r = 0; r < size; ++r) {
    if (all[r].status < zfcSuccess || all[r].status >= zfcNumResults) {
      return error(zfcMismatch, "rank %d sent a header with no valid result code (%d): "
                   "ranks are not running the same zipfcoll", r, all[r].status);
    }
    if (all[r].status != zfcSuccess) {
      const size_t i = static_cast<size_t>(r);
      const char* text = i >= messages.size() ? "(no message)"
                         : messages[i].empty() ? "its own checks of the call failed (its call "
                                                 "returned why)"
                                               : messages[i].c_str();
      return error(static_cast<zfcResult_t>(all[r].status), "rank %d: %s", r, text);
    }
  }
  const bool counts_match = h0.op == static_cast<uint32_t>(OpKind::kAllReduce);
  const bool init = h0.op == static_cast<uint32_t>(OpKind::kInit);
  const bool group = h0.op == static_cast<uint32_t>(OpKind::kGroup);
  const bool sparse_apply = h0.op == static_cast<uint32_t>(OpKind::kSparseApply);
  const bool updates = sparse_apply || h0.op == static_cast<uint32_t>(OpKind::kShardedApply);
  for (int r = 1; r < size; ++r) {
    const OpHeader& h = all[r];
    if (group && h.count != h0.count) {
      return differs("the number of calls in the group", h0.count, r, h.count);
    }
    if (init && h.count != h0.count) {
      return differs("config ranks_per_node", h0.count, r, h.count);
    }
    if (init && h.color != h0.color) {
      return differs("config transport", h0.color, r, h.color);
    }
    if (init && h.key != h0.key) {
      return error(zfcMismatch, "the machine model's given figures differ across ranks: "
                   "rank 0 gives %s, rank %d gives %s (give the same figures on every rank, "
                   "in the config or ZIPFCOLL_MACHINE_MODEL)",
                   figures_given(h0.key).c_str(), r, figures_given(h.key).c_str());
    }
    if (updates && (h.color != h0.color || h.node != h0.node)) {
      return error(zfcMismatch, "the update differs across ranks: rank 0 has %s, rank %d has "
                   "%s", update_text(h0).c_str(), r, update_text(h).c_str());
    }
    if (sparse_apply && h.capacity != h0.capacity) {
      return differs("the plan's stream_chunk_bytes", h0.capacity, r, h.capacity);
    }
    if (counts_match && h.count != h0.count) return differs("count", h0.count, r, h.count);
    if (h.dim != h0.dim) return differs("dim", h0.dim, r, h.dim);
    if (h.vocab != h0.vocab) return differs("vocab_size", h0.vocab, r, h.vocab);
    if (h.row_type != h0.row_type) return differs("row data type", h0.row_type, r, h.row_type);
    if (h.index_type != h0.index_type) {
      return differs("index data type", h0.index_type, r, h.index_type);
    }
    if (h.algorithm != h0.algorithm) return differs("algorithm", h0.algorithm, r, h.algorithm);
    if (h.compression != h0.compression) {
      return differs("compression", h0.compression, r, h.compression);
    }
    if (std::memcmp(&h.scale, &h0.scale, sizeof h.scale) != 0) {
      return error(zfcMismatch, "compression scale differs across ranks: rank 0 has %g, "
                   "rank %d has %g", static_cast<double>(h0.scale), r,
                   static_cast<double>(h.scale));
    }
  }
  if (h0.op == static_cast<uint32_t>(OpKind::kUniqueMerge) ||
      h0.op == static_cast<uint32_t>(OpKind::kSparseReduce) || sparse_apply ||
      h0.op == static_cast<uint32_t>(OpKind::kSparseBounded)) {
    uint64_t total = 0;
    for (int r = 0; r < size; ++r) total += static_cast<uint64_t>(all[r].count);
    if (total > static_cast<uint64_t>(INT32_MAX)) {
      return error(zfcInvalidArgument, "the ranks' counts add up to %llu indices, more than "
                   "the %d that int32 positions can address",
                   static_cast<unsigned long long>(total), INT32_MAX);
    }
  }
  return Status::Ok();
}

Status exchange_and_agree(Transport& t, Workspace& ws, const LocalHeader& mine,
                          zfcOpStats_t* op, Agreed* out, const void* payload,
                          size_t payload_bytes) {
  {
    PhaseTimer timer(op, zfcPhaseHeader);
    ZFC_RETURN_IF_ERROR(exchange_headers(t, ws, mine, payload, payload_bytes, out));
  }
  return agree(out->headers, t.size(), out->messages);
}

}  // namespace zfc
