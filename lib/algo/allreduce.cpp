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
bool allreduce_single(Workspace& ws, const float* send, float* recv, size_t n,
                      zfcDataType_t wire, float scale) {
  if (wire == zfcFloat32) {
    kernels::sum_blocks(send, 1, n, wire, recv);
    return kernels::all_finite(recv, n);
  }
  const size_t w = kernels::float_type_bytes(wire);
  void* buf = ws.get<char>(Slot::kWireSend, n * w);
  kernels::encode(send, n, wire, scale, buf);
  kernels::sum_blocks(buf, 1, n, wire, recv);
  kernels::encode(recv, n, wire, 1.0f, buf);
  return kernels::decode(buf, n, wire, scale, recv);
}

}  // namespace

Status allreduce_sum(Transport& t, Workspace& ws, const float* send, float* recv, size_t n,
                     const Compression& compression, bool* finite, const NodeMap* nodes) {
  const zfcDataType_t wire = kernels::wire_type(compression.kind);
  const float scale = compression.kind == zfcCompressNone ? 1.0f : compression.scale;
  const int size = t.size();
  const int me = t.rank();
  if (size == 1) {
    *finite = allreduce_single(ws, send, recv, n, wire, scale);
    return Status::Ok();
  }
  const size_t w = kernels::float_type_bytes(wire);
  const Chunking ch{n / size, n % size};
  const size_t mine = ch.len(me);

  const void* wire_send = send;
  char* wire_buf = nullptr;  // the compressed copy; it holds the gathered result later
  if (wire != zfcFloat32) {
    wire_buf = ws.get<char>(Slot::kWireSend, n * w);
    kernels::encode(send, n, wire, scale, wire_buf);
    wire_send = wire_buf;
  }
  size_t* sizes = ws.get<size_t>(Slot::kReduceSizes, 4 * static_cast<size_t>(size));
  size_t *send_bytes = sizes, *send_displs = sizes + size;
  size_t *recv_bytes = sizes + 2 * size, *recv_displs = sizes + 3 * size;
  for (int j = 0; j < size; ++j) {
    send_bytes[j] = ch.len(j) * w;
    send_displs[j] = ch.off(j) * w;
    recv_bytes[j] = mine * w;
    recv_displs[j] = static_cast<size_t>(j) * mine * w;
  }
  char* wire_recv = ws.get<char>(Slot::kWireRecv, static_cast<size_t>(size) * mine * w);
  ZFC_RETURN_IF_ERROR(
      t.alltoallv(wire_send, send_bytes, send_displs, wire_recv, recv_bytes, recv_displs));

  // The gather reuses the reduce-scatter's size arrays: every rank's chunk, at its offset.
  for (int j = 0; j < size; ++j) {
    recv_bytes[j] = ch.len(j) * w;
    recv_displs[j] = ch.off(j) * w;
  }
  if (wire == zfcFloat32) {
    float* own = recv + ch.off(me);
    sum_rank_blocks(nodes, size, ws, wire_recv, mine, wire, own);
    ZFC_RETURN_IF_ERROR(t.allgatherv(own, recv, recv_bytes, recv_displs));
    *finite = kernels::all_finite(recv, n);
    return Status::Ok();
  }
  float* acc = ws.get<float>(Slot::kPartial, mine);
  sum_rank_blocks(nodes, size, ws, wire_recv, mine, wire, acc);
  // The reduce-scatter has consumed the compressed copy: gather into it.
  char* gathered = wire_buf;
  char* own = gathered + ch.off(me) * w;
  kernels::encode(acc, mine, wire, 1.0f, own);  // already in scaled units
  ZFC_RETURN_IF_ERROR(t.allgatherv(own, gathered, recv_bytes, recv_displs));
  *finite = kernels::decode(gathered, n, wire, scale, recv);
  return Status::Ok();
}

}  // namespace zfc
