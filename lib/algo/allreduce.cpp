#include "algo/allreduce.hpp"

#include <algorithm>

#include "algo/call_rounding.hpp"
#include "algo/rank_order.hpp"
#include "algo/reduce_scatter_lists.hpp"
#include "kernels/cast.hpp"
#include "kernels/wire_format.hpp"

namespace zfc {
namespace {

// How a call's encodes round: its compression, this rank, the rows the values are numbered
// in (stochastic rounding's row ids and columns).
struct Encodes {
  const Compression& c;
  uint32_t rank;
  size_t row_values;

  // n values, the first being value `first` of the buffer, to the wire at `hop`.
  Status operator()(WireKernels& k, const float* src, size_t first, size_t n,
                    zfcDataType_t wire, float scale, uint32_t hop, void* dst) const {
    if (!c.stochastic || wire == zfcFloat32) return k.encode(src, n, wire, scale, dst);
    if (dynamic_cast<HostWireKernels*>(&k) == nullptr) {
      return error(zfcUnsupported, "stochastic rounding has no device kernels in this version");
    }
    kernels::encode_stochastic_span(src, n, first, row_values, wire, scale,
                                    call_rounding(c, static_cast<int>(rank), hop), dst);
    return Status::Ok();
  }
};

// One rank: the same wire rounding as many, so results do not depend on the rank count's
// being 1.
Status allreduce_single(WireKernels& k, const float* send, float* recv, size_t n,
                        zfcDataType_t wire, float scale, const Encodes& encode) {
  if (wire == zfcFloat32) {
    ZFC_RETURN_IF_ERROR(k.sum_blocks(send, 1, n, wire, recv));
    return k.check_finite(recv, n);
  }
  void* buf = nullptr;
  ZFC_RETURN_IF_ERROR(k.scratch(Slot::kWireSend, n * kernels::float_type_bytes(wire), &buf));
  ZFC_RETURN_IF_ERROR(encode(k, send, 0, n, wire, scale, kernels::kHopSend, buf));
  ZFC_RETURN_IF_ERROR(k.sum_blocks(buf, 1, n, wire, recv));
  ZFC_RETURN_IF_ERROR(encode(k, recv, 0, n, wire, 1.0f, kernels::kHopOwnerSum, buf));
  return k.decode(buf, n, wire, scale, recv);
}

// One multi-rank allreduce: the wire, this rank's chunk, and the buffers in between.
struct Step {
  zfcDataType_t wire;
  float scale;
  const Encodes* encode;
  size_t w;             // bytes per wire element
  Chunks ch;
  size_t mine;          // elements of this rank's chunk
  char* wire_buf;       // the compressed copy of send (NULL in fp32); later the gathered result
  void* wire_recv;      // every rank's wire copy of this rank's chunk; in fp32, when recv is
                        // written last, the gathered result after the sums consumed them
  size_t recv_room;     // bytes of wire_recv
  SizeLists sz;         // the reduce-scatter's, then the gather's receive lists
};

// The reduce-scatter: every rank's wire copy of this rank's chunk lands in s->wire_recv.
Status reduce_scatter(Transport& t, Workspace& ws, WireKernels& k, const float* send, size_t n,
                      Step* s) {
  const int size = t.size(), me = t.rank();
  const void* wire_send = send;
  s->wire_buf = nullptr;
  if (s->wire != zfcFloat32) {
    void* buf = nullptr;
    ZFC_RETURN_IF_ERROR(k.scratch(Slot::kWireSend, n * s->w, &buf));
    ZFC_RETURN_IF_ERROR((*s->encode)(k, send, 0, n, s->wire, s->scale, kernels::kHopSend, buf));
    s->wire_buf = static_cast<char*>(buf);
    wire_send = s->wire_buf;
  }
  s->sz = scatter_lists(ws.get<size_t>(Slot::kReduceSizes, 4 * static_cast<size_t>(size)),
                        s->ch, me, s->w);
  ZFC_RETURN_IF_ERROR(k.scratch(Slot::kWireRecv, s->recv_room, &s->wire_recv));
  ZFC_RETURN_IF_ERROR(k.settle());
  // Rank r receives its chunk from every peer.
  uint64_t* received = ws.get<uint64_t>(Slot::kReduceReceived, static_cast<size_t>(size));
  for (int r = 0; r < size; ++r) received[r] = (size - 1) * s->ch.len(r) * s->w;
  ZFC_RETURN_IF_ERROR(t.alltoallv(wire_send, s->sz.send_bytes, s->sz.send_displs, s->wire_recv,
                                  s->sz.recv_bytes, s->sz.recv_displs, received));
  s->sz = gather_lists(s->sz.send_bytes, s->ch, s->w);  // the lists' own memory
  return Status::Ok();
}

// fp32: this rank's sums, then the allgather of every rank's. In place, recv holds the
// partial result while the gather runs; otherwise it is gathered in scratch and copied out
// after the last transfer, so that a failed transfer leaves the caller's recv as it was.
Status gather_fp32(Transport& t, WireKernels& k, const NodeMap* nodes, float* recv, size_t n,
                   RecvWrites writes, Step& s) {
  const int size = t.size();
  if (writes == RecvWrites::kInPlace) {
    float* own = recv + s.ch.off(t.rank());
    ZFC_RETURN_IF_ERROR(sum_rank_blocks(nodes, size, k, s.wire_recv, s.mine, s.wire, own));
    ZFC_RETURN_IF_ERROR(k.settle());
    ZFC_RETURN_IF_ERROR(t.allgatherv(own, recv, s.sz.recv_bytes, s.sz.recv_displs));
    return k.check_finite(recv, n);
  }
  // The gather lands where the reduce-scatter's blocks were (the sums have read them), so
  // the call's scratch holds the data once (n floats, and this rank's chunk), not twice.
  void* partial = nullptr;
  ZFC_RETURN_IF_ERROR(k.scratch(Slot::kPartial, s.mine * sizeof(float), &partial));
  ZFC_RETURN_IF_ERROR(sum_rank_blocks(nodes, size, k, s.wire_recv, s.mine, s.wire,
                                      static_cast<float*>(partial)));
  ZFC_RETURN_IF_ERROR(k.settle());
  void* gathered = s.wire_recv;
  ZFC_RETURN_IF_ERROR(t.allgatherv(partial, gathered, s.sz.recv_bytes, s.sz.recv_displs));
  return k.decode(gathered, n, zfcFloat32, 1.0f, recv);  // a copy, checked
}

// fp16/bf16: this rank's sums in fp32, encoded again, and the allgather into the compressed
// copy (which the reduce-scatter has consumed); recv is written by the decode, last.
Status gather_compressed(Transport& t, WireKernels& k, const NodeMap* nodes, float* recv,
                         size_t n, Step& s) {
  void* acc = nullptr;
  ZFC_RETURN_IF_ERROR(k.scratch(Slot::kPartial, s.mine * sizeof(float), &acc));
  float* partial = static_cast<float*>(acc);
  ZFC_RETURN_IF_ERROR(sum_rank_blocks(nodes, t.size(), k, s.wire_recv, s.mine, s.wire, partial));
  char* own = s.wire_buf + s.ch.off(t.rank()) * s.w;
  ZFC_RETURN_IF_ERROR((*s.encode)(k, partial, s.ch.off(t.rank()), s.mine, s.wire, 1.0f,
                                  kernels::kHopOwnerSum, own));  // already scaled
  ZFC_RETURN_IF_ERROR(k.settle());
  ZFC_RETURN_IF_ERROR(t.allgatherv(own, s.wire_buf, s.sz.recv_bytes, s.sz.recv_displs));
  return k.decode(s.wire_buf, n, s.wire, s.scale, recv);
}

}  // namespace

Status check_row_wire_on(const WireKernels& k, const Compression& compression) {
  const kernels::WireFormat& f = kernels::wire_format(compression.kind);
  if (f.element_only() || dynamic_cast<const HostWireKernels*>(&k) != nullptr) {
    return Status::Ok();
  }
  return error(zfcUnsupported, "wire format %s has no device kernels in this version: its "
               "allreduce runs on host buffers", f.name);
}

Status allreduce_sum(Transport& t, Workspace& ws, WireKernels& k, const float* send,
                     float* recv, size_t n, const Compression& compression, bool* finite,
                     const NodeMap* nodes, RecvWrites writes, size_t row_values) {
  if (!kernels::wire_format(compression.kind).element_only()) {
    ZFC_RETURN_IF_ERROR(check_row_wire_on(k, compression));
    bool ok = true;
    ZFC_RETURN_IF_ERROR(allreduce_rows_sum(t, ws, send, recv, n, compression, row_values, &ok,
                                           nodes));
    static_cast<HostWireKernels&>(k).note_finite(ok);
    return finite != nullptr ? k.all_finite(finite) : Status::Ok();
  }
  const Encodes encode{compression, static_cast<uint32_t>(t.rank()), row_values};
  Step s{};
  s.wire = kernels::wire_type(compression.kind);
  s.scale = compression.kind == zfcCompressNone ? 1.0f : compression.scale;
  s.encode = &encode;
  if (t.size() == 1) {
    ZFC_RETURN_IF_ERROR(allreduce_single(k, send, recv, n, s.wire, s.scale, encode));
    return finite != nullptr ? k.all_finite(finite) : Status::Ok();
  }
  s.w = kernels::float_type_bytes(s.wire);
  s.ch = Chunks{n, t.size()};
  s.mine = s.ch.len(t.rank());
  s.recv_room = static_cast<size_t>(t.size()) * s.mine * s.w;
  if (s.wire == zfcFloat32 && writes == RecvWrites::kAfterLastTransfer) {
    s.recv_room = std::max(s.recv_room, n * s.w);
  }
  ZFC_RETURN_IF_ERROR(reduce_scatter(t, ws, k, send, n, &s));
  if (s.wire == zfcFloat32) {
    ZFC_RETURN_IF_ERROR(gather_fp32(t, k, nodes, recv, n, writes, s));
  } else {
    ZFC_RETURN_IF_ERROR(gather_compressed(t, k, nodes, recv, n, s));
  }
  return finite != nullptr ? k.all_finite(finite) : Status::Ok();
}

Status allreduce_sum(Transport& t, Workspace& ws, const float* send, float* recv, size_t n,
                     const Compression& compression, bool* finite, const NodeMap* nodes,
                     RecvWrites writes, size_t row_values) {
  HostWireKernels k(ws);
  return allreduce_sum(t, ws, k, send, recv, n, compression, finite, nodes, writes,
                       row_values);
}

}  // namespace zfc
