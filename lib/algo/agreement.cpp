#include "algo/agreement.hpp"

#include <climits>
#include <cstring>
#include <string>

#include "core/stats.hpp"

namespace zfc {
namespace {

constexpr uint32_t kHeaderMagic = 0x7a664831u;

const char* op_name(uint32_t op) {
  switch (static_cast<OpKind>(op)) {
    case OpKind::kInit: return "zfcCommInitMpi";
    case OpKind::kSplit: return "zfcCommSplit";
    case OpKind::kUniqueMerge: return "zfcUniqueMerge";
    case OpKind::kAllReduce: return "zfcAllReduce";
    case OpKind::kSparseReduce: return "zfcSparseReduce";
    case OpKind::kSeedGroup: return "zfcSeedGroupCreate";
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

void header_fail(OpHeader* h, const Status& s) {
  if (h->status != zfcSuccess || s.ok()) return;
  h->status = s.code();
  std::strncpy(h->message, s.message().c_str(), sizeof h->message - 1);
  h->message[sizeof h->message - 1] = '\0';
}

Status exchange_headers(Transport& t, Workspace& ws, const OpHeader& mine,
                        const OpHeader** all) {
  OpHeader* headers = ws.get<OpHeader>(Slot::kHeaders, static_cast<size_t>(t.size()));
  headers[t.rank()] = mine;
  headers[t.rank()].sequence = t.next_sequence();
  ZFC_RETURN_IF_ERROR(t.allgather(&headers[t.rank()], sizeof(OpHeader), headers));
  *all = headers;
  return Status::Ok();
}

Status agree(const OpHeader* all, int size) {
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
      return error(static_cast<zfcResult_t>(all[r].status), "rank %d: %.*s", r,
                   static_cast<int>(sizeof all[r].message), all[r].message);
    }
  }
  const bool counts_match = h0.op == static_cast<uint32_t>(OpKind::kAllReduce);
  const bool init = h0.op == static_cast<uint32_t>(OpKind::kInit);
  for (int r = 1; r < size; ++r) {
    const OpHeader& h = all[r];
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
      h0.op == static_cast<uint32_t>(OpKind::kSparseReduce)) {
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

Status exchange_and_agree(Transport& t, Workspace& ws, const OpHeader& mine, zfcOpStats_t* op,
                          const OpHeader** all) {
  {
    PhaseTimer timer(op, zfcPhaseHeader);
    ZFC_RETURN_IF_ERROR(exchange_headers(t, ws, mine, all));
  }
  return agree(*all, t.size());
}

}  // namespace zfc
