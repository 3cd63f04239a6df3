// Pieces shared by the owner-based exchanges: how rows travel, where every rank's distinct
// keys sit in the global set, and how rows are put at their positions.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "algo/call_rounding.hpp"
#include "algo/sparse_exchange.hpp"
#include "kernels/cast.hpp"
#include "kernels/rows.hpp"
#include "kernels/wire_format.hpp"

namespace zfc {

// How rows travel: the plan's wire format (kernels/wire_format.hpp), the scale applied
// before sending (1 for a format without one), and how this rank's encodes round (the call's
// seed and step, this rank, hop kHopSend and rows counted from 0 until a site says otherwise).
struct Wire {
  const kernels::WireFormat* format;
  float scale;
  kernels::Rounding rounding;

  zfcDataType_t type() const { return format->element; }
  size_t row_bytes(size_t dim) const { return format->row_bytes(dim); }
  // Whether rows travel as their fp32 values, so that sums may be formed where they are sent
  // from and checked as they are.
  bool plain_fp32() const { return format->plain_fp32(); }
  // The rounding of the encode at `hop` of the rows with ids `ids`.
  kernels::Rounding at(uint32_t hop, kernels::RowIds ids) const { return rounding.at(hop, ids); }
  // rows x dim values to wire rows, rounded as `r` says.
  void encode(const float* src, size_t rows, size_t dim, float s, void* dst,
              const kernels::Rounding& r) const {
    format->encode_rows(src, rows, dim, s, dst, r);
  }
};

// The wire of a compression whose seed and step a call has set, for rank `rank`'s encodes.
inline Wire wire_of(const Compression& c, int rank) {
  const kernels::WireFormat& f = kernels::wire_format(c.kind);
  return {&f, f.scaled ? c.scale : 1.0f, call_rounding(c, rank)};
}

template <class K>
Wire wire_of(const SparseCall<K>& call) {
  return wire_of(call.compression, call.transport.rank());
}

// Positions in the global set (non-negative int32) as the ids of the rows they name.
inline kernels::RowIds position_ids(const int32_t* positions) {
  return kernels::RowIds::of(reinterpret_cast<const uint32_t*>(positions));
}

// The global positions of every rank's distinct keys, rank r's (sorted) at
// all + displs[r], counts[r] of them.
struct RankPositions {
  const int32_t* all;
  const size_t* counts;
  const size_t* displs;

  const int32_t* of(int r) const { return all + displs[r]; }
  // The part of rank r's positions inside [lo, hi): its offset among them and its length.
  size_t lower(int r, size_t lo) const {
    return static_cast<size_t>(std::lower_bound(of(r), of(r) + counts[r],
                                                static_cast<int32_t>(lo)) - of(r));
  }
  size_t count_in(int r, size_t lo, size_t hi) const { return lower(r, hi) - lower(r, lo); }
};

// Every rank's distinct keys' positions in the global set, as the merge left them.
template <class K>
RankPositions rank_positions(const IndexSet<K>& set) {
  return {set.rank_positions(), set.rank_counts(), set.rank_displs()};
}

// This rank's distinct keys' rows summed in fp32 from +0 in token order (kPartial).
template <class K>
const float* local_partial_rows(SparseCall<K>& call) {
  const size_t ui = call.set.local_unique_count();
  const size_t dim = call.spec.dim;
  float* partial = call.ws.template get<float>(Slot::kPartial, ui * dim);
  kernels::scatter_rows_to_zeroed(call.rows, call.spec.row_type, call.set.inverse(),
                                  call.set.count(), dim, partial, ui);
  return partial;
}

// Decodes n rows of the wire, back to back at `rows`, row k into row dest[k] of the fp32
// matrix out (dim columns). Returns whether every value is finite.
inline bool decode_rows_to(const char* rows, const int32_t* dest, size_t n, size_t dim,
                           const Wire& wire, float* out) {
  return wire.format->decode_rows_to(rows, dest, n, dim, wire.scale, out);
}

// displs[j] = bytes[0] + ... + bytes[j-1]: blocks laid out back to back.
inline void pack_displacements(const size_t* bytes, size_t* displs, int parts) {
  size_t off = 0;
  for (int j = 0; j < parts; ++j) {
    displs[j] = off;
    off += bytes[j];
  }
}

}  // namespace zfc
