// The owner-partitioned exchange. The global set's positions are split into G contiguous
// ranges (OwnerRanges), one per rank. Each rank sends the locally summed rows of its
// distinct keys to the owners of their positions (one alltoallv); each owner adds what it
// received in the order of sums and allgathers its range. Per rank that moves about
// (U_i + U_g) x D values each way instead of the allreduce's 2 U_g x D.
#include "algo/owner_ranges.hpp"
#include "algo/rank_order.hpp"
#include "core/stats.hpp"

namespace zfc {
namespace {

// Sizes of the alltoallv: to owner j, this rank's rows inside j's range; from rank r, r's
// rows inside this rank's range.
void owner_layout(const RankPositions& at, const OwnerRanges& owners, int me, size_t row_bytes,
                  size_t* sizes) {
  const int size = owners.parts;
  size_t *send_bytes = sizes, *send_displs = sizes + size;
  size_t *recv_bytes = sizes + 2 * size, *recv_displs = sizes + 3 * size;
  const size_t lo = owners.begin(me), hi = lo + owners.len(me);
  for (int j = 0; j < size; ++j) {
    const size_t b = owners.begin(j);
    send_bytes[j] = at.count_in(me, b, b + owners.len(j)) * row_bytes;
    recv_bytes[j] = at.count_in(j, lo, hi) * row_bytes;
  }
  pack_displacements(send_bytes, send_displs, size);
  pack_displacements(recv_bytes, recv_displs, size);
}

}  // namespace

template <class K>
Status exchange_owner_partitioned(SparseCall<K>& call) {
  Transport& t = call.transport;
  Workspace& ws = call.ws;
  const int size = t.size(), me = t.rank();
  const size_t dim = call.spec.dim;
  const size_t ug = call.set.global_count();
  const Wire wire = wire_of(call.spec);
  const size_t row_bytes = dim * wire.bytes;
  const OwnerRanges owners{ug, size};
  const size_t lo = owners.begin(me), mine = owners.len(me);

  size_t* sizes = ws.get<size_t>(Slot::kExchangeSizes, 6 * static_cast<size_t>(size));
  size_t *recv_bytes = sizes + 2 * size, *recv_displs = sizes + 3 * size;
  const void* send = nullptr;
  RankPositions at{};
  {
    PhaseTimer timer(call.op, zfcPhaseScatter);
    at = locate_all_ranks(call.set, ws, size);
    send = local_partial_rows(call, wire.type, wire.scale);
    owner_layout(at, owners, me, row_bytes, sizes);
  }
  const size_t received = recv_displs[size - 1] + recv_bytes[size - 1];
  char* rows_in = ws.get<char>(Slot::kOwnerRows, received);
  {
    PhaseTimer timer(call.op, zfcPhaseRowExchange);
    ZFC_RETURN_IF_ERROR(
        t.alltoallv(send, sizes, sizes + size, rows_in, recv_bytes, recv_displs));
  }
  float* out = ws.get<float>(Slot::kResultRows, ug * dim);
  float* acc = wire.type == zfcFloat32 ? out + lo * dim : ws.get<float>(Slot::kDense, mine * dim);
  {
    PhaseTimer timer(call.op, zfcPhaseScatter);
    int32_t* rel = ws.get<int32_t>(Slot::kPositions, mine);
    accumulate_in_rank_order(call.nodes, ws, acc, mine, dim, [&](int r, float* dst) {
      const size_t first = at.lower(r, lo);
      const size_t n = recv_bytes[r] / row_bytes;
      for (size_t i = 0; i < n; ++i) rel[i] = at.of(r)[first + i] - static_cast<int32_t>(lo);
      kernels::scatter_add_rows(rows_in + recv_displs[r], wire.type, rel, n, dim, dst);
    });
  }
  PhaseTimer timer(call.op, zfcPhaseRowExchange);
  size_t* gather_bytes = sizes + 4 * size;
  size_t* gather_displs = sizes + 5 * size;
  for (int j = 0; j < size; ++j) {
    gather_bytes[j] = owners.len(j) * row_bytes;
    gather_displs[j] = owners.begin(j) * row_bytes;
  }
  if (wire.type == zfcFloat32) {
    ZFC_RETURN_IF_ERROR(t.allgatherv(acc, out, gather_bytes, gather_displs));
    call.finite = kernels::all_finite(out, ug * dim);
  } else {
    char* gathered = ws.get<char>(Slot::kGatheredRows, ug * row_bytes);
    kernels::encode(acc, mine * dim, wire.type, 1.0f, gathered + lo * row_bytes);
    ZFC_RETURN_IF_ERROR(t.allgatherv(gathered + lo * row_bytes, gathered, gather_bytes,
                                     gather_displs));
    call.finite = kernels::decode(gathered, ug * dim, wire.type, wire.scale, out);
  }
  call.out_rows = out;
  return Status::Ok();
}

template Status exchange_owner_partitioned<uint32_t>(SparseCall<uint32_t>&);
template Status exchange_owner_partitioned<uint64_t>(SparseCall<uint64_t>&);

}  // namespace zfc
