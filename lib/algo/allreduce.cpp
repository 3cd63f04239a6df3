#include "algo/allreduce.hpp"

#include <algorithm>

#include "algo/rank_order.hpp"
#include "kernels/cast.hpp"

namespace zfc {
namespace {

struct Chunking {
  size_t base;
  size_t extra;
  size_t len(int j) const { return base + (static_cast<size_t>(j) < extra ? 1 : 0); }
  size_t off(int j) const { return base * j + std::min(static_cast<size_t>(j), extra); }
};

// One rank: the same wire rounding as many, so results do not depend on the rank count's
// being 1.
Status allreduce_single(WireKernels& k, const float* send, float* recv, size_t n,
                        zfcDataType_t wire, float scale) {
  if (wire == zfcFloat32) {
    ZFC_RETURN_IF_ERROR(k.sum_blocks(send, 1, n, wire, recv));
    return k.check_finite(recv, n);
  }
  void* buf = nullptr;
  ZFC_RETURN_IF_ERROR(k.scratch(Slot::kWireSend, n * kernels::float_type_bytes(wire), &buf));
  ZFC_RETURN_IF_ERROR(k.encode(send, n, wire, scale, buf));
  ZFC_RETURN_IF_ERROR(k.sum_blocks(buf, 1, n, wire, recv));
  ZFC_RETURN_IF_ERROR(k.encode(recv, n, wire, 1.0f, buf));
  return k.decode(buf, n, wire, scale, recv);
}

// The byte sizes and displacements of both steps, on the host (the transports read them
// there): the reduce-scatter's four lists, then the gather's, which is every rank's chunk at
// its offset.
struct StepSizes {
  size_t* send_bytes;
  size_t* send_displs;
  size_t* recv_bytes;
  size_t* recv_displs;
};

StepSizes scatter_sizes(Workspace& ws, const Chunking& ch, int size, int me, size_t w) {
  size_t* sizes = ws.get<size_t>(Slot::kReduceSizes, 4 * static_cast<size_t>(size));
  StepSizes s{sizes, sizes + size, sizes + 2 * size, sizes + 3 * size};
  for (int j = 0; j < size; ++j) {
    s.send_bytes[j] = ch.len(j) * w;
    s.send_displs[j] = ch.off(j) * w;
    s.recv_bytes[j] = ch.len(me) * w;
    s.recv_displs[j] = static_cast<size_t>(j) * ch.len(me) * w;
  }
  return s;
}

void gather_sizes(StepSizes* s, const Chunking& ch, int size, size_t w) {
  for (int j = 0; j < size; ++j) {
    s->recv_bytes[j] = ch.len(j) * w;
    s->recv_displs[j] = ch.off(j) * w;
  }
}

}  // namespace

Status allreduce_sum(Transport& t, Workspace& ws, WireKernels& k, const float* send,
                     float* recv, size_t n, const Compression& compression, bool* finite,
                     const NodeMap* nodes, RecvWrites writes) {
  const zfcDataType_t wire = kernels::wire_type(compression.kind);
  const float scale = compression.kind == zfcCompressNone ? 1.0f : compression.scale;
  const int size = t.size();
  const int me = t.rank();
  if (size == 1) {
    ZFC_RETURN_IF_ERROR(allreduce_single(k, send, recv, n, wire, scale));
    return k.all_finite(finite);
  }
  const size_t w = kernels::float_type_bytes(wire);
  const Chunking ch{n / size, n % size};
  const size_t mine = ch.len(me);

  const void* wire_send = send;
  char* wire_buf = nullptr;  // the compressed copy; it holds the gathered result later
  if (wire != zfcFloat32) {
    void* buf = nullptr;
    ZFC_RETURN_IF_ERROR(k.scratch(Slot::kWireSend, n * w, &buf));
    ZFC_RETURN_IF_ERROR(k.encode(send, n, wire, scale, buf));
    wire_buf = static_cast<char*>(buf);
    wire_send = wire_buf;
  }
  StepSizes sz = scatter_sizes(ws, ch, size, me, w);
  void* wire_recv = nullptr;
  ZFC_RETURN_IF_ERROR(k.scratch(Slot::kWireRecv, static_cast<size_t>(size) * mine * w,
                                &wire_recv));
  ZFC_RETURN_IF_ERROR(k.settle());
  ZFC_RETURN_IF_ERROR(t.alltoallv(wire_send, sz.send_bytes, sz.send_displs, wire_recv,
                                  sz.recv_bytes, sz.recv_displs));
  gather_sizes(&sz, ch, size, w);
  if (wire == zfcFloat32 && writes == RecvWrites::kInPlace) {
    float* own = recv + ch.off(me);
    ZFC_RETURN_IF_ERROR(sum_rank_blocks(nodes, size, k, wire_recv, mine, wire, own));
    ZFC_RETURN_IF_ERROR(k.settle());
    ZFC_RETURN_IF_ERROR(t.allgatherv(own, recv, sz.recv_bytes, sz.recv_displs));
    ZFC_RETURN_IF_ERROR(k.check_finite(recv, n));
    return k.all_finite(finite);
  }
  void* acc = nullptr;
  ZFC_RETURN_IF_ERROR(k.scratch(Slot::kPartial, mine * sizeof(float), &acc));
  float* partial = static_cast<float*>(acc);
  ZFC_RETURN_IF_ERROR(sum_rank_blocks(nodes, size, k, wire_recv, mine, wire, partial));
  if (wire == zfcFloat32) {
    // The result is gathered in scratch and copied out after the last transfer, so that a
    // failed transfer leaves the caller's recv as it was.
    void* gathered = nullptr;
    ZFC_RETURN_IF_ERROR(k.scratch(Slot::kWireSend, n * sizeof(float), &gathered));
    ZFC_RETURN_IF_ERROR(k.settle());
    ZFC_RETURN_IF_ERROR(t.allgatherv(partial, gathered, sz.recv_bytes, sz.recv_displs));
    ZFC_RETURN_IF_ERROR(k.decode(gathered, n, wire, 1.0f, recv));  // a copy, checked
    return k.all_finite(finite);
  }
  // The reduce-scatter has consumed the compressed copy: gather into it.
  char* gathered = wire_buf;
  char* own = gathered + ch.off(me) * w;
  ZFC_RETURN_IF_ERROR(k.encode(partial, mine, wire, 1.0f, own));  // already in scaled units
  ZFC_RETURN_IF_ERROR(k.settle());
  ZFC_RETURN_IF_ERROR(t.allgatherv(own, gathered, sz.recv_bytes, sz.recv_displs));
  ZFC_RETURN_IF_ERROR(k.decode(gathered, n, wire, scale, recv));
  return k.all_finite(finite);
}

Status allreduce_sum(Transport& t, Workspace& ws, const float* send, float* recv, size_t n,
                     const Compression& compression, bool* finite, const NodeMap* nodes,
                     RecvWrites writes) {
  HostWireKernels k(ws);
  return allreduce_sum(t, ws, k, send, recv, n, compression, finite, nodes, writes);
}

}  // namespace zfc
