// The host side of exec/step_kernels.hpp: the kernels of lib/kernels on the workspace.
#include "exec/step_kernels.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include "host_device/key_owner.hpp"
#include "kernels/cast.hpp"
#include "kernels/index_keys.hpp"
#include "kernels/merge_runs.hpp"
#include "kernels/rows.hpp"
#include "kernels/unique.hpp"

namespace zfc {

template <class K>
Status HostStepKernels<K>::zero(void* dst, size_t bytes) {
  if (bytes > 0) std::memset(dst, 0, bytes);
  return Status::Ok();
}

template <class K>
Status HostStepKernels<K>::copy(void* dst, const void* src, size_t bytes) {
  if (bytes > 0 && dst != src) std::memmove(dst, src, bytes);
  return Status::Ok();
}

template <class K>
Status HostStepKernels<K>::upload(void* dst, const void* host_src, size_t bytes) {
  return copy(dst, host_src, bytes);
}

template <class K>
Status HostStepKernels<K>::fetch(void* host_dst, const void* src, size_t bytes) {
  ++fetches_;
  return copy(host_dst, src, bytes);
}

template <class K>
Status HostStepKernels<K>::load_keys(const void* indices, zfcDataType_t type, size_t n,
                                     int64_t vocab, bool check, K* keys, uint64_t* first_bad) {
  const kernels::BadIndex bad = kernels::load_keys(indices, type, n, vocab, check, keys);
  *first_bad = bad.found ? bad.position : n;
  // The keys were written up to the bad one: zeroed instead, so that a unique run on them
  // before the check is read stays inside its bounds.
  if (bad.found) std::fill(keys, keys + n, K{0});
  return Status::Ok();
}

template <class K>
Status HostStepKernels<K>::store_keys(const K* keys, size_t n, zfcDataType_t type, void* out) {
  kernels::store_keys(keys, n, type, out);
  return Status::Ok();
}

template <class K>
Status HostStepKernels<K>::unique_with_inverse(const K* keys, size_t n, uint64_t bound, K* uniq,
                                               int32_t* inverse, uint64_t* count,
                                               KeyGrouping* grouping) {
  void* scratch =
      ws_.get<char>(Slot::kSortScratch, kernels::unique_scratch_bytes<K>(n, bound, true));
  *count = kernels::unique_with_inverse(keys, n, bound, uniq, inverse, scratch);
  // The bitmap and hash methods never sort the tokens, and the host's scatter streams the
  // rows in input order: taken by key, they would be gathered from all over the input.
  *grouping = KeyGrouping{};
  return Status::Ok();
}

template <class K>
Status HostStepKernels<K>::sorted_unique(const K* keys, size_t n, uint64_t bound, K* uniq,
                                         uint64_t* count) {
  void* scratch =
      ws_.get<char>(Slot::kSortScratch, kernels::unique_scratch_bytes<K>(n, bound, false));
  *count = kernels::sorted_unique(keys, n, bound, uniq, scratch);
  return Status::Ok();
}

template <class K>
Status HostStepKernels<K>::locate_sorted(const K* sub, size_t n_sub, const K* full,
                                         size_t n_full, int32_t* pos) {
  kernels::locate_sorted(sub, n_sub, full, n_full, pos);
  return Status::Ok();
}

template <class K>
size_t merge_key_runs(Workspace& ws, const KeyRuns<K>& runs, uint64_t bound, K* out) {
  size_t total = 0;
  for (int r = 0; r < runs.n; ++r) total += runs.counts[r];
  const kernels::RunMerge m = kernels::run_merge_method(bound, total);
  void* scratch =
      ws.get<uint64_t>(Slot::kSortScratch, kernels::merge_scratch_bytes<K>(m, runs.n, bound) / 8);
  return kernels::merge_sorted_runs(m, runs.keys, runs.counts, runs.n, bound, out, runs.places,
                                    scratch);
}

template <class K>
Status HostStepKernels<K>::merge_runs(const KeyRuns<K>& runs, uint64_t bound, K* uniq,
                                      size_t* u) {
  *u = merge_key_runs(ws_, runs, bound, uniq);
  ++fetches_;  // the host learns the size, which a device would read back
  return Status::Ok();
}

template <class K>
Status HostStepKernels<K>::merge_disjoint_runs(const KeyRuns<K>& runs, uint64_t bound,
                                               K* uniq, size_t n, uint64_t* count) {
  *count = merge_key_runs(ws_, runs, bound, uniq);
  if (*count < n) std::fill(uniq + *count, uniq + n, std::numeric_limits<K>::max());
  return Status::Ok();
}

template <class K>
Status HostStepKernels<K>::owner_counts(const K* keys, size_t room, const uint64_t* count,
                                        int ranks, int32_t* owner_of, uint64_t* counts) {
  const size_t n = static_cast<size_t>(std::min<uint64_t>(room, *count));
  std::fill(counts, counts + ranks, 0);
  for (size_t i = 0; i < n; ++i) {
    owner_of[i] = key_owner(keys[i], ranks);
    ++counts[owner_of[i]];
  }
  return Status::Ok();
}

template <class K>
Status HostStepKernels<K>::begin_sum(float* dst, size_t rows, size_t dim) {
  sum_dst_ = dst;
  sum_rows_ = rows;
  sum_dim_ = dim;
  sum_touched_ = ws_.get<uint8_t>(Slot::kTouchedRows, rows);
  std::fill(sum_touched_, sum_touched_ + rows, uint8_t{0});
  return Status::Ok();
}

template <class K>
Status HostStepKernels<K>::end_sum() {
  if (sum_dst_ != nullptr) {
    kernels::zero_untouched_rows(sum_dst_, sum_rows_, sum_dim_, sum_touched_);
  }
  sum_dst_ = nullptr;
  return Status::Ok();
}

template <class K>
Status HostStepKernels<K>::scatter_add_rows(const void* rows, zfcDataType_t type,
                                            const int32_t* pos, size_t n, size_t dim,
                                            float* dst, size_t, bool) {
  if (dst == sum_dst_ && dim == sum_dim_) {
    kernels::scatter_rows_first_touch(rows, type, pos, n, dim, dst, sum_touched_);
  } else {
    kernels::scatter_add_rows(rows, type, pos, n, dim, dst);
  }
  return Status::Ok();
}

template <class K>
Status HostStepKernels<K>::scatter_to_dense(const void* rows, zfcDataType_t type,
                                            const int32_t* pos, size_t n, size_t dim,
                                            float* dst, size_t dst_rows, const KeyGrouping&) {
  kernels::scatter_rows_to_zeroed(rows, type, pos, n, dim, dst, dst_rows);
  return Status::Ok();
}

namespace {
// Each owner's block of a packing: its count, and zeros in the padding after its keys and
// after its rows, so that every byte sent is defined.
void write_block_leads(const PairPacking& p, char* packed) {
  const PairBlock& b = p.block;
  for (int j = 0; j < p.ranks; ++j) {
    const uint64_t c = p.counts[j];
    char* base = packed + p.displs[j];
    std::memcpy(base, &c, sizeof c);
    std::fill(base + b.lead + c * b.key_bytes, base + b.rows_at(c), '\0');
    std::fill(base + b.rows_at(c) + c * b.row_bytes, base + b.bytes(c), '\0');
  }
}

// The pairs of n keys into their owners' blocks, key i's row slot handed to
// place_row(i, at) to be written.
template <class K, class PlaceRow>
void pack_pairs_with(const K* keys, const int32_t* owner_of, size_t n, const PairPacking& p,
                     size_t* cursor, char* packed, PlaceRow&& place_row) {
  const PairBlock& b = p.block;
  std::fill(cursor, cursor + p.ranks, 0);
  write_block_leads(p, packed);
  for (size_t i = 0; i < n; ++i) {
    const int j = owner_of[i];
    const size_t c = cursor[j]++;
    char* base = packed + p.displs[j];
    reinterpret_cast<K*>(base + b.lead)[c] = keys[i];
    place_row(i, base + b.rows_at(p.counts[j]) + c * b.row_bytes);
  }
}
}  // namespace

template <class K>
Status HostStepKernels<K>::pack_pairs(const K* keys, const int32_t* owner_of, size_t n,
                                      const float* rows, size_t dim, zfcDataType_t wire,
                                      float scale, const PairPacking& p, char* packed) {
  size_t* cursor = ws_.get<size_t>(Slot::kPeerReceived, static_cast<size_t>(p.ranks));
  pack_pairs_with(keys, owner_of, n, p, cursor, packed, [&](size_t i, char* at) {
    kernels::encode(rows + i * dim, dim, wire, scale, at);
  });
  return Status::Ok();
}

template <class K>
Status HostStepKernels<K>::decode_rows_to(const void* rows, const int32_t* dest, size_t n,
                                          size_t dim, zfcDataType_t wire, float scale,
                                          float* out) {
  const size_t row_bytes = dim * kernels::float_type_bytes(wire);
  const char* at = static_cast<const char*>(rows);
  for (size_t k = 0; k < n; ++k) {
    ZFC_RETURN_IF_ERROR(wire_.decode(at + k * row_bytes, dim, wire, scale,
                                     out + static_cast<size_t>(dest[k]) * dim));
  }
  return Status::Ok();
}

template <class K>
Status HostStepKernels<K>::fill_keys_after(K* keys, size_t room, const uint64_t* count,
                                           K value) {
  if (*count < room) std::fill(keys + *count, keys + room, value);
  return Status::Ok();
}

template <class K>
Status HostStepKernels<K>::compose_clamped(const int32_t* index, size_t n, const int32_t* table,
                                           size_t n_table, int32_t limit, int32_t* out) {
  for (size_t i = 0; i < n; ++i) {
    const size_t at = static_cast<size_t>(index[i]);
    out[i] = at < n_table ? std::min(table[at], limit) : limit;
  }
  return Status::Ok();
}

template <class K>
Status HostStepKernels<K>::bounded_verdict(const char* gathered, size_t block_bytes, int ranks,
                                           const OpHeader* headers, const uint64_t* sizes,
                                           const K* global, const uint64_t* count, K sentinel,
                                           size_t capacity, BoundedVerdict* out) {
  *out = bounded_verdict_of(gathered, block_bytes, ranks, headers, sizes, global, *count,
                            sentinel, capacity);
  return Status::Ok();
}

template <class K>
Status HostStepKernels<K>::bounded_finish(const BoundedVerdict* verdict, const K* global,
                                          const float* dense, size_t dim,
                                          const BoundedOutput& out) {
  zfcBoundedStatus_t status{verdict->num_unique, static_cast<int32_t>(verdict->result), 0};
  if (verdict->result == zfcSuccess) {
    const size_t ug = static_cast<size_t>(verdict->num_unique);
    // No buffers at all with no capacity (the verdict holds U_g within it).
    if (out.capacity > 0) {
      kernels::store_keys(global, ug, out.index_type, out.indices);
      const size_t index_bytes = out.index_type == zfcInt32 ? 4 : 8;
      // -1 in either index type: every byte set.
      std::memset(static_cast<char*>(out.indices) + ug * index_bytes, 0xff,
                  (out.capacity - ug) * index_bytes);
      std::memcpy(out.rows, dense, out.capacity * dim * sizeof(float));
    }
    bool finite = true;
    ZFC_RETURN_IF_ERROR(wire_.all_finite(&finite));
    status.overflowed = finite ? 0 : 1;
  }
  std::memcpy(out.status, &status, sizeof status);
  return Status::Ok();
}

template size_t merge_key_runs<uint32_t>(Workspace&, const KeyRuns<uint32_t>&, uint64_t,
                                         uint32_t*);
template size_t merge_key_runs<uint64_t>(Workspace&, const KeyRuns<uint64_t>&, uint64_t,
                                         uint64_t*);
// ---- rows of a wire format: the element calls, or the host's format operations ----------

namespace {
Status no_device_kernels(const kernels::WireFormat& f) {
  return error(zfcUnsupported, "wire format %s has no device kernels in this version", f.name);
}
Status no_device_rounding(const kernels::WireFormat& f) {
  return error(zfcUnsupported, "stochastic rounding (%s) has no device kernels in this version",
               f.name);
}
}  // namespace

template <class K>
Status StepKernels<K>::add_wire_rows(const kernels::WireFormat& f, const void* rows,
                                     const int32_t* pos, size_t n, size_t dim, float* dst,
                                     size_t dst_rows, bool in_order) {
  if (!f.element_only()) return no_device_kernels(f);
  return scatter_add_rows(rows, f.element, pos, n, dim, dst, dst_rows, in_order);
}

template <class K>
Status StepKernels<K>::pack_wire_pairs(const kernels::WireFormat& f, const K* keys,
                                       const int32_t* owner_of, size_t n, const float* rows,
                                       size_t dim, float scale, const PairPacking& p,
                                       char* packed, const kernels::Rounding& r) {
  if (!f.element_only()) return no_device_kernels(f);
  if (r.stochastic) return no_device_rounding(f);
  return pack_pairs(keys, owner_of, n, rows, dim, f.element, f.value_scale(scale), p, packed);
}

template <class K>
Status StepKernels<K>::sum_into_pairs(const kernels::WireFormat& f, const TokenRows& tokens,
                                      const K* keys, const int32_t* owner_of, size_t n,
                                      size_t dim, float scale, const PairPacking& p,
                                      char* packed, const kernels::Rounding& r) {
  float* partial = nullptr;
  ZFC_RETURN_IF_ERROR(scratch_for(*this, Slot::kPartial, n * dim, &partial));
  ZFC_RETURN_IF_ERROR(scatter_to_dense(tokens.rows, tokens.type, tokens.inverse, tokens.n, dim,
                                       partial, n, tokens.grouping));
  return pack_wire_pairs(f, keys, owner_of, n, partial, dim, scale, p, packed, r);
}

template <class K>
Status StepKernels<K>::decode_wire_rows_to(const kernels::WireFormat& f, const void* rows,
                                           const int32_t* dest, size_t n, size_t dim,
                                           float scale, float* out) {
  if (!f.element_only()) return no_device_kernels(f);
  return decode_rows_to(rows, dest, n, dim, f.element, f.value_scale(scale), out);
}

template <class K>
Status HostStepKernels<K>::add_wire_rows(const kernels::WireFormat& f, const void* rows,
                                         const int32_t* pos, size_t n, size_t dim, float* dst,
                                         size_t, bool) {
  const bool first_touch = dst == sum_dst_ && dim == sum_dim_;
  f.accumulate_rows(rows, pos, n, dim, dst, first_touch ? sum_touched_ : nullptr);
  return Status::Ok();
}

template <class K>
Status HostStepKernels<K>::pack_wire_pairs(const kernels::WireFormat& f, const K* keys,
                                           const int32_t* owner_of, size_t n,
                                           const float* rows, size_t dim, float scale,
                                           const PairPacking& p, char* packed,
                                           const kernels::Rounding& r) {
  size_t* cursor = ws_.get<size_t>(Slot::kPeerReceived, static_cast<size_t>(p.ranks));
  pack_pairs_with(keys, owner_of, n, p, cursor, packed, [&](size_t i, char* at) {
    f.encode_rows(rows + i * dim, 1, dim, scale, at, r.from_row(i));
  });
  return Status::Ok();
}

template <class K>
Status HostStepKernels<K>::sum_into_pairs(const kernels::WireFormat& f, const TokenRows& tokens,
                                          const K* keys, const int32_t* owner_of, size_t n,
                                          size_t dim, float scale, const PairPacking& p,
                                          char* packed, const kernels::Rounding& r) {
  if (!f.plain_fp32()) {
    return StepKernels<K>::sum_into_pairs(f, tokens, keys, owner_of, n, dim, scale, p, packed, r);
  }
  // The row slots lie 8-byte aligned (PairBlock), so each is a row of floats.
  size_t* cursor = ws_.get<size_t>(Slot::kPeerReceived, static_cast<size_t>(p.ranks));
  float** slots = ws_.get<float*>(Slot::kPairRowSlots, n);
  pack_pairs_with(keys, owner_of, n, p, cursor, packed, [&](size_t i, char* at) {
    slots[i] = reinterpret_cast<float*>(at);
  });
  kernels::scatter_rows_to_targets(tokens.rows, tokens.type, tokens.inverse, tokens.n, dim, slots,
                                   n);
  return Status::Ok();
}

template <class K>
Status HostStepKernels<K>::decode_wire_rows_to(const kernels::WireFormat& f, const void* rows,
                                               const int32_t* dest, size_t n, size_t dim,
                                               float scale, float* out) {
  wire_.note_finite(f.decode_rows_to(rows, dest, n, dim, scale, out));
  return Status::Ok();
}

template class StepKernels<uint32_t>;
template class StepKernels<uint64_t>;
template class HostStepKernels<uint32_t>;
template class HostStepKernels<uint64_t>;

}  // namespace zfc
