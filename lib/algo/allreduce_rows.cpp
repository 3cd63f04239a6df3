// The allreduce of a wire format with a per-row part (the eight-bit formats): the same
// reduce-scatter and allgather as allreduce.cpp, with the values cut into rows of
// `row_values` (the last padded with zeros on the wire) and the chunks made of whole rows,
// so that every row travels with its own scale. Two encodes round: each rank's values (hop
// kHopSend, row ids the rows' numbers) and each chunk's sums (kHopOwnerSum).
#include <algorithm>
#include <cstring>

#include "algo/allreduce.hpp"
#include "algo/call_rounding.hpp"
#include "algo/rank_order.hpp"
#include "algo/reduce_scatter_lists.hpp"
#include "kernels/rows.hpp"
#include "kernels/wire_format.hpp"

namespace zfc {
namespace {

struct RowLayout {
  const kernels::WireFormat& f;
  size_t n, row;                   // values, and values per row
  size_t full() const { return n / row; }
  size_t rows() const { return (n + row - 1) / row; }
  size_t tail() const { return n - full() * row; }
  size_t row_bytes() const { return f.row_bytes(row); }
};

// The n values as rows: the whole ones straight from src, the last through `pad` (row values).
void encode_padded(const RowLayout& l, const float* src, const kernels::Rounding& r, float* pad,
                   char* dst) {
  l.f.encode_rows(src, l.full(), l.row, 1.0f, dst, r);
  if (l.tail() == 0) return;
  std::memcpy(pad, src + l.full() * l.row, l.tail() * sizeof(float));
  std::fill(pad + l.tail(), pad + l.row, 0.0f);
  l.f.encode_rows(pad, 1, l.row, 1.0f, dst + l.full() * l.row_bytes(), r.from_row(l.full()));
}

bool decode_padded(const RowLayout& l, const char* src, float* pad, float* dst) {
  bool finite = l.f.decode_rows(src, l.full(), l.row, 1.0f, dst);
  if (l.tail() == 0) return finite;
  finite &= l.f.decode_rows(src + l.full() * l.row_bytes(), 1, l.row, 1.0f, pad);
  std::memcpy(dst + l.full() * l.row, pad, l.tail() * sizeof(float));
  return finite;
}

// acc (rows x row values) = the sum of `ranks` consecutive blocks of `rows` wire rows, block
// r from rank r, in the order of sums.
void sum_rank_rows(const NodeMap* nodes, int ranks, Workspace& ws, const RowLayout& l,
                   const char* blocks, size_t rows, float* acc) {
  const size_t block_bytes = rows * l.row_bytes();
  int32_t* at = ws.get<int32_t>(Slot::kReduceRows, rows);
  for (size_t i = 0; i < rows; ++i) at[i] = static_cast<int32_t>(i);
  const auto add = [&](int r, const RowSum& sum) {
    sum.add(blocks + static_cast<size_t>(r) * block_bytes, l.f, at, rows);
  };
  if (nodes != nullptr && nodes->grouped()) {
    accumulate_in_rank_order(*nodes, ws, acc, rows, l.row, add);
    return;
  }
  uint8_t* touched = ws.get<uint8_t>(Slot::kTouchedRows, rows);
  std::fill(touched, touched + rows, uint8_t{0});
  const RowSum sum{acc, l.row, touched};
  for (int r = 0; r < ranks; ++r) add(r, sum);
  kernels::zero_untouched_rows(acc, rows, l.row, touched);
}

}  // namespace

Status allreduce_rows_sum(Transport& t, Workspace& ws, const float* send, float* recv, size_t n,
                          const Compression& c, size_t row_values, bool* finite,
                          const NodeMap* nodes) {
  const RowLayout l{kernels::wire_format(c.kind), n, row_values};
  const int size = t.size(), me = t.rank();
  const size_t rb = l.row_bytes(), nb = l.rows();
  const kernels::Rounding round = call_rounding(c, me);
  const Chunks ch{nb, size};
  const size_t mine = ch.len(me);
  // The padded row, then this rank's sums (the pad is free by then), then the padded row again.
  float* partial = ws.get<float>(Slot::kPartial, std::max<size_t>(mine, 1) * l.row);
  char* wire = ws.get<char>(Slot::kWireSend, nb * rb);
  encode_padded(l, send, round, partial, wire);
  const char* arrived = wire;  // one rank: its own rows are every rank's
  SizeLists sz{};
  if (size > 1) {
    sz = scatter_lists(ws.get<size_t>(Slot::kReduceSizes, 4 * static_cast<size_t>(size)), ch,
                       me, rb);
    char* in = ws.get<char>(Slot::kWireRecv, static_cast<size_t>(size) * mine * rb);
    uint64_t* received = ws.get<uint64_t>(Slot::kReduceReceived, static_cast<size_t>(size));
    for (int r = 0; r < size; ++r) received[r] = (size - 1) * ch.len(r) * rb;
    ZFC_RETURN_IF_ERROR(t.alltoallv(wire, sz.send_bytes, sz.send_displs, in, sz.recv_bytes,
                                    sz.recv_displs, received));
    arrived = in;
  }
  sum_rank_rows(nodes, size, ws, l, arrived, mine, partial);
  // This rank's sums, rounded again, at their place in the gathered result (the wire copy of
  // the values, which the reduce-scatter has consumed).
  char* own = wire + ch.off(me) * rb;
  l.f.encode_rows(partial, mine, l.row, 1.0f, own,
                  round.at(kernels::kHopOwnerSum, kernels::RowIds::counting(ch.off(me))));
  if (size > 1) {
    sz = gather_lists(sz.send_bytes, ch, rb);
    ZFC_RETURN_IF_ERROR(t.allgatherv(own, wire, sz.recv_bytes, sz.recv_displs));
  }
  const bool ok = decode_padded(l, wire, partial, recv);
  if (finite != nullptr) *finite = ok;
  return Status::Ok();
}

}  // namespace zfc
