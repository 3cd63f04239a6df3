#include "algo/sparse_exchange.hpp"

#include <algorithm>

#include "algo/algorithms.hpp"
#include "algo/allreduce.hpp"
#include "algo/cost_model.hpp"
#include "algo/cost_terms.hpp"
#include "algo/owner_ranges.hpp"
#include "algo/rank_order.hpp"
#include "core/stats.hpp"
#include "kernels/cast.hpp"
#include "kernels/rows.hpp"
#include "kernels/unique.hpp"

namespace zfc {
namespace {

// Per-rank byte sizes and displacements of a gather of rank r's items_r * item_bytes.
void fill_gather_sizes(const size_t* items, int size, size_t item_bytes, size_t* bytes,
                       size_t* displs) {
  size_t off = 0;
  for (int r = 0; r < size; ++r) {
    bytes[r] = items[r] * item_bytes;
    displs[r] = off;
    off += bytes[r];
  }
}

// The wire of the baseline's token rows: for a format of values only its element type (the
// rows' own type without compression) and scale; a format with a per-row part sends fp32
// rows encoded by the format.
struct RowWire {
  zfcDataType_t type;
  float scale;
  const kernels::WireFormat* format;

  size_t row_bytes(size_t dim) const {
    return format->element_only() ? dim * kernels::float_type_bytes(type)
                                  : format->row_bytes(dim);
  }
};

RowWire row_wire(const Compression& c, zfcDataType_t uncompressed) {
  const kernels::WireFormat& f = kernels::wire_format(c.kind);
  if (c.kind == zfcCompressNone) return {uncompressed, 1.0f, &f};
  if (!f.element_only()) return {zfcFloat32, 1.0f, &f};
  return {f.element, c.scale, &f};
}

// Undoes the compression scale on the reduced rows and checks them.
bool finish_rows(float* rows, size_t n, const RowWire& wire) {
  if (wire.scale != 1.0f) kernels::divide(rows, n, wire.scale);
  return kernels::all_finite(rows, n);
}

// The baseline's local reduction: for each rank, sum its tokens' rows per distinct index
// (token order), then add those partial sums at their global positions, ranks in the order
// of sums, which gives the same bits as the other exchanges.
// A wire format with a per-row part: every rank's token rows are decoded to fp32 first
// (`decoded`, max_tokens rows), and summed from there.
template <class K>
void reduce_gathered_tokens(SparseCall<K>& call, const K* all_keys, const char* all_rows,
                            const RowWire& wire, const size_t* tokens, size_t max_tokens,
                            float* out) {
  Workspace& ws = call.ws;
  const size_t dim = call.spec.dim;
  const size_t ug = call.set.global_count();
  const size_t row_bytes = wire.row_bytes(dim);
  float* decoded = wire.format->element_only()
                       ? nullptr
                       : ws.get<float>(Slot::kOwnerRows, max_tokens * dim);
  const uint64_t bound = static_cast<uint64_t>(call.spec.vocab);
  const int size = call.transport.size();
  K* uniq = ws.get<K>(Slot::kLocalUnique, max_tokens);
  int32_t* inverse = ws.get<int32_t>(Slot::kInverse, max_tokens);
  int32_t* pos = ws.get<int32_t>(Slot::kRankPositions, max_tokens);
  float* partial = ws.get<float>(Slot::kPartial, max_tokens * dim);
  size_t* first = ws.get<size_t>(Slot::kCounts, static_cast<size_t>(size));
  void* scratch = ws.get<char>(Slot::kSortScratch,
                               kernels::unique_scratch_bytes<K>(max_tokens, bound, true));
  for (int r = 0, at = 0; r < size; at += static_cast<int>(tokens[r]), ++r) first[r] = at;
  accumulate_in_rank_order(call.nodes, ws, out, ug, dim, [&](int r, const RowSum& sum) {
    const size_t n = tokens[r];
    const size_t u = kernels::unique_with_inverse(all_keys + first[r], n, bound, uniq, inverse,
                                                  scratch);
    if (r == call.transport.rank()) call.op->local_unique = u;
    const void* rows = all_rows + first[r] * row_bytes;
    zfcDataType_t type = wire.type;
    if (decoded != nullptr) {
      wire.format->decode_rows(rows, n, dim, 1.0f, decoded);  // checked in the result
      rows = decoded;
      type = zfcFloat32;
    }
    kernels::scatter_rows_to_zeroed(rows, type, inverse, n, dim, partial, u);
    kernels::locate_sorted(uniq, u, call.set.global(), ug, pos);
    sum.add(partial, kernels::wire_format(zfcCompressNone), pos, u);
  });
}

}  // namespace

Status check_result_room(const Agreed& agreed, int ranks, size_t ug) {
  for (int r = 0; r < ranks; ++r) {
    const OpHeader& h = agreed.headers[r];
    // Only a zfcSparseReduceInto's header has a capacity (-1 otherwise); an apply's carries
    // its stream chunk there.
    if (h.op != static_cast<uint32_t>(OpKind::kSparseReduce) || h.capacity < 0) continue;
    if (static_cast<uint64_t>(h.capacity) < ug) {
      return error(zfcInvalidArgument, "rank %d: capacity %lld is smaller than the %zu distinct "
                   "indices of the result (U_g)", r, static_cast<long long>(h.capacity), ug);
    }
  }
  return Status::Ok();
}

Status result_rows(Workspace& ws, const Agreed& agreed, int ranks, float* caller_rows,
                   size_t ug, size_t dim, Slot slot, float** out) {
  ZFC_RETURN_IF_ERROR(check_result_room(agreed, ranks, ug));
  *out = caller_rows != nullptr ? caller_rows : ws.get<float>(slot, ug * dim);
  return Status::Ok();
}

template <class K>
Status exchange_allgather(SparseCall<K>& call) {
  Transport& t = call.transport;
  Workspace& ws = call.ws;
  const size_t dim = call.spec.dim;
  const int size = t.size();
  const RowWire wire = row_wire(call.compression, call.spec.row_type);
  const size_t row_bytes = wire.row_bytes(dim);

  size_t* sizes = ws.get<size_t>(Slot::kExchangeSizes, 3 * static_cast<size_t>(size));
  size_t *tokens = sizes, *bytes = sizes + size, *displs = sizes + 2 * size;
  size_t total = 0;
  size_t max_tokens = 0;
  for (int r = 0; r < size; ++r) {
    tokens[r] = static_cast<size_t>(call.agreed.headers[r].count);
    total += tokens[r];
    if (tokens[r] > max_tokens) max_tokens = tokens[r];
  }
  K* all_keys = ws.get<K>(Slot::kGatheredKeys, total);
  char* all_rows = ws.get<char>(Slot::kGatheredRows, total * row_bytes);
  {
    PhaseTimer timer(call.op, zfcPhaseIndexExchange);
    fill_gather_sizes(tokens, size, sizeof(K), bytes, displs);
    ZFC_RETURN_IF_ERROR(t.allgatherv(call.set.keys(), all_keys, bytes, displs));
  }
  fill_gather_sizes(tokens, size, row_bytes, bytes, displs);
  char* own = all_rows + displs[t.rank()];
  {
    PhaseTimer timer(call.op, zfcPhaseLocal);
    const size_t n = tokens[t.rank()];
    if (wire.format->element_only() && !call.compression.stochastic) {
      kernels::convert(call.rows, call.spec.row_type, n * dim, wire.scale, own, wire.type);
    } else {
      // fp32 rows to encode (the input's own, or converted), numbered by token: a format
      // with a per-row part, or stochastic rounding.
      const float* rows = static_cast<const float*>(call.rows);
      if (call.spec.row_type != zfcFloat32) {
        float* converted = ws.get<float>(Slot::kPartial, n * dim);
        kernels::convert(call.rows, call.spec.row_type, n * dim, 1.0f, converted, zfcFloat32);
        rows = converted;
      }
      const Wire w = wire_of(call);
      w.encode(rows, n, dim, w.scale, own, w.at(kernels::kHopSend, kernels::RowIds::counting(0)));
    }
  }
  {
    PhaseTimer timer(call.op, zfcPhaseRowExchange);
    ZFC_RETURN_IF_ERROR(t.allgatherv(own, all_rows, bytes, displs));
  }
  {
    PhaseTimer timer(call.op, zfcPhaseMerge);
    call.set.merge_from(all_keys, total);
  }
  PhaseTimer timer(call.op, zfcPhaseScatter);
  const size_t ug = call.set.global_count();
  float* out = nullptr;
  ZFC_RETURN_IF_ERROR(result_rows(call, ug, &out));
  reduce_gathered_tokens(call, all_keys, all_rows, wire, tokens, max_tokens, out);
  call.out_rows = out;
  call.finite = finish_rows(out, ug * dim, wire);
  return Status::Ok();
}

// On call.kernels, the host's or a device's: the global set was merged on the host from the
// keys that rode with the headers, so the host knows U_g and this rank's positions without
// reading anything back; they go down to the kernels' memory (uploads, no wait), and the
// scatter, the allreduce and the result stay there.
template <class K>
Status exchange_unique_allreduce(SparseCall<K>& call) {
  StepKernels<K>& k = *call.kernels;
  const size_t dim = call.spec.dim;
  const size_t ug = call.set.global_count(), n = call.set.count();
  const size_t ui = call.set.local_unique_count();
  float* dense = nullptr;  // the sums are made in place, so in the result's buffer
  // On a device, in the plan's result slot, which a bounded call on the plan leaves alone.
  ZFC_RETURN_IF_ERROR(
      result_rows(call, ug, &dense, k.on_device() ? Slot::kResultRows : Slot::kDense));
  {
    PhaseTimer timer(call.op, zfcPhaseScatter);
    int32_t* located = nullptr;
    int32_t* pos = nullptr;
    ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kRankPositions, ui, &located));
    ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kPositions, n, &pos));
    ZFC_RETURN_IF_ERROR(k.upload(located, call.set.locate(), ui * sizeof(int32_t)));
    // Every distinct key of this rank is in the global set, so no position is clamped, and
    // the positions grow with the keys: the unique's grouping serves the scatter.
    const int32_t last = ug > 0 ? static_cast<int32_t>(ug - 1) : 0;
    ZFC_RETURN_IF_ERROR(k.compose_clamped(call.set.inverse(), n, located, ui, last, pos));
    ZFC_RETURN_IF_ERROR(k.scatter_to_dense(call.rows, call.spec.row_type, pos, n, dim, dense,
                                           ug, call.set.grouping()));
    // Before the transfers are queued, so that no upload waits behind them.
    ZFC_RETURN_IF_ERROR(call.set.place_global(k));
  }
  PhaseTimer timer(call.op, zfcPhaseRowExchange);
  // A device's flag is left for the caller, which reads it last or hands it on.
  ZFC_RETURN_IF_ERROR(allreduce_sum(call.transport, call.ws, k.wire(), dense, dense, ug * dim,
                                    call.compression,
                                    call.leave_flag ? nullptr : &call.finite, &call.nodes,
                                    RecvWrites::kInPlace, dim));
  call.out_rows = dense;
  return Status::Ok();
}

template <class K>
Status exchange_dense_vocab(SparseCall<K>& call) {
  Workspace& ws = call.ws;
  const size_t dim = call.spec.dim;
  const size_t vocab = static_cast<size_t>(call.spec.vocab);
  const size_t n = call.set.count();
  // V rows, then one presence value per vocabulary entry where this rank has the index:
  // 1 / scale, which the wire's scaling turns into exactly 1, so that no scale can round it
  // to zero (or to infinity) on the wire and drop the index; the sum is the number of ranks
  // holding it, over scale.
  float* dense = ws.get<float>(Slot::kDense, vocab * (dim + 1));
  float* present = dense + vocab * dim;
  const float mark = 1.0f / call.spec.compression.scale;
  {
    PhaseTimer timer(call.op, zfcPhaseScatter);
    int32_t* pos = ws.get<int32_t>(Slot::kPositions, n);
    for (size_t i = 0; i < n; ++i) pos[i] = static_cast<int32_t>(call.set.keys()[i]);
    kernels::zero_rows(dense, vocab, dim + 1);
    kernels::scatter_add_rows(call.rows, call.spec.row_type, pos, n, dim, dense);
    for (size_t i = 0; i < n; ++i) present[pos[i]] = mark;
  }
  {
    PhaseTimer timer(call.op, zfcPhaseRowExchange);
    bool finite_all = true;
    if (kernels::wire_format(call.compression.kind).element_only()) {
      ZFC_RETURN_IF_ERROR(allreduce_sum(call.transport, ws, dense, dense, vocab * (dim + 1),
                                        call.compression, &finite_all, &call.nodes));
    } else {
      // A format with a per-row scale would round a mark held by one rank to zero beside
      // one held by many (int8: below 1/254 of the row's largest): the V rows travel in the
      // format, the marks in fp32, in an allreduce of their own.
      ZFC_RETURN_IF_ERROR(allreduce_sum(call.transport, ws, dense, dense, vocab * dim,
                                        call.compression, &finite_all, &call.nodes,
                                        RecvWrites::kInPlace, dim));
      ZFC_RETURN_IF_ERROR(allreduce_sum(call.transport, ws, present, present, vocab,
                                        Compression{}, &finite_all, &call.nodes));
    }
  }
  PhaseTimer timer(call.op, zfcPhaseMerge);
  call.set.global_from_presence(present);
  const size_t ug = call.set.global_count();
  float* out = nullptr;
  ZFC_RETURN_IF_ERROR(result_rows(call, ug, &out));
  kernels::gather_rows(dense, call.set.global(), ug, dim, out);
  call.out_rows = out;
  call.finite = kernels::all_finite(out, ug * dim);
  return Status::Ok();
}

template <class K>
Status exchange_unique_allgather(SparseCall<K>& call) {
  Transport& t = call.transport;
  Workspace& ws = call.ws;
  const size_t dim = call.spec.dim;
  const int size = t.size();
  const Wire wire = wire_of(call);
  const size_t row_bytes = wire.row_bytes(dim);
  const size_t ui = call.set.local_unique_count();
  const size_t ug = call.set.global_count();
  const size_t* counts = call.set.rank_counts();

  size_t* sizes = ws.get<size_t>(Slot::kExchangeSizes, 2 * static_cast<size_t>(size));
  size_t *bytes = sizes, *displs = sizes + size;
  fill_gather_sizes(counts, size, row_bytes, bytes, displs);
  char* all_rows = ws.get<char>(Slot::kGatheredRows, call.set.gathered_count() * row_bytes);
  char* own = all_rows + displs[t.rank()];
  {
    PhaseTimer timer(call.op, zfcPhaseScatter);
    float* partial = ws.get<float>(Slot::kPartial, ui * dim);
    kernels::scatter_rows_to_zeroed(call.rows, call.spec.row_type, call.set.inverse(),
                                    call.set.count(), dim, partial, ui);
    wire.encode(partial, ui, dim, wire.scale, own,
                wire.at(kernels::kHopSend, kernels::RowIds::of(call.set.local_unique())));
  }
  PhaseTimer timer(call.op, zfcPhaseRowExchange);
  ZFC_RETURN_IF_ERROR(t.allgatherv(own, all_rows, bytes, displs));
  float* out = nullptr;
  ZFC_RETURN_IF_ERROR(result_rows(call, ug, &out));
  accumulate_in_rank_order(call.nodes, ws, out, ug, dim, [&](int r, const RowSum& sum) {
    sum.add(all_rows + displs[r], *wire.format, call.set.rank_positions(r), counts[r]);
  });
  call.out_rows = out;
  call.finite = finish_rows(out, ug * dim, RowWire{wire.type(), wire.scale, wire.format});
  return Status::Ok();
}

#define ZFC_INSTANTIATE_EXCHANGES(K)                                      \
  template Status exchange_allgather<K>(SparseCall<K>&);                  \
  template Status exchange_unique_allreduce<K>(SparseCall<K>&);           \
  template Status exchange_dense_vocab<K>(SparseCall<K>&);                \
  template Status exchange_unique_allgather<K>(SparseCall<K>&);
ZFC_INSTANTIATE_EXCHANGES(uint32_t)
ZFC_INSTANTIATE_EXCHANGES(uint64_t)
#undef ZFC_INSTANTIATE_EXCHANGES

Route routed_route(const MachineModel* machine, const Agreed& agreed, int ranks, int nodes,
                   double item_bytes) {
  if (machine == nullptr) return Route::kDirect;
  int64_t most = 0;
  for (int r = 0; r < ranks; ++r) most = std::max(most, agreed.headers[r].local_unique);
  return choose_route(*machine, ranks, nodes, static_cast<double>(most) * item_bytes);
}

// ---- the cost model's formula (algo/algorithms.hpp, docs/algorithms.md) ----
namespace cost {

void price_allgather(Cost& c) {
  const CostInputs& in = c.in;
  const double d = static_cast<double>(in.dim), w = in.row_bytes, ug = in.global_unique;
  const double row = in.key_bytes + d * w;
  c.gather(Level::kFlat, in.tokens * row, in.max_tokens * row);
  // The gathered rows summed per rank into partial rows, those written into the result (a
  // row's first rank writes it, no fill), the result scanned for finiteness and scaled.
  const double partial = static_cast<double>(in.max_local_unique) * d * 4.0;
  const double adds = partial <= kCachedRowBytes ? 0.0 : 8.0 * in.tokens * d;
  c.local(kDedupeBytesPerToken * in.tokens + w * in.tokens * d + adds +
          16.0 * in.local_unique * d + 8.0 * ug * d);
  c.scratch(in.tokens * row + 4.0 * in.max_tokens * d + 4.0 * ug * d);
}

void price_dense_vocab(Cost& c) {
  const CostInputs& in = c.in;
  scatter(c, static_cast<double>(in.vocab));
  allreduce(c, static_cast<double>(in.vocab) * (in.dim + 1.0));
  c.local(8.0 * in.global_unique * in.dim + 4.0 * in.vocab);
}

void price_unique_allreduce(Cost& c) {
  scatter(c, static_cast<double>(c.in.global_unique));
  allreduce(c, static_cast<double>(c.in.global_unique) * c.in.dim);
}

void price_unique_allgather(Cost& c) {
  const CostInputs& in = c.in;
  const double d = static_cast<double>(in.dim), w = in.row_bytes;
  const double all = static_cast<double>(in.local_unique) * d;
  scatter(c, static_cast<double>(in.max_local_unique));
  c.local(encode_bytes(c, in.max_local_unique * d));
  c.gather(Level::kFlat, all * w, in.max_local_unique * d * w);
  // Every rank's wire rows read into the result (a row's first rank writes it, no fill; the
  // others read and write it), the result scanned for finiteness.
  c.local(kLocateBytesPerKey * in.local_unique + all * (w + 8.0) + 8.0 * in.global_unique * d);
  c.scratch(all * w + 4.0 * in.max_local_unique * d + 4.0 * in.global_unique * d);
}

}  // namespace cost

}  // namespace zfc
