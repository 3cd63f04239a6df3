// The local phases of a sparse step (reading the caller's indices, the local unique, the
// owner map, packing and encoding the pairs, the owner's merge, the ordered sums, decoding
// into the result) on one memory space: the host kernels (lib/kernels) with the workspace,
// or the CUDA kernels (cuda/) on the caller's stream with device scratch. The key-routed
// exchange is written once against this interface (algo/routed_pairs.hpp,
// algo/key_routed_exchange.cpp), so the suite's host runs go through the orchestration a
// device run uses; what is device-only is the kernels and exec/device_step_kernels.cpp.
//
// Sizes the host must know (distinct counts, pair counts, a bad index) are written to words
// in this memory space and read with fetch(): on the device that is a wait for the stream,
// counted in syncs(), and the orchestration gathers what it needs into as few fetches as
// it can. Both implementations give the same bits (of numbers: a NaN's payload may differ,
// since a GPU's arithmetic returns its own NaN; both raise the overflow flag alike).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <new>

#include "host_device/bounded_step.hpp"
#include "exec/wire_kernels.hpp"

namespace zfc {

// n (key, row) pairs on the wire: `lead` bytes (the count, or an owner's report), the n
// keys, then the n rows, each part padded to 8 bytes so that every block starts aligned for
// any key and row type.
inline size_t pad8(size_t bytes) { return (bytes + 7) / 8 * 8; }
struct PairBlock {
  size_t lead, key_bytes, row_bytes;
  size_t bytes(size_t n) const { return lead + pad8(n * key_bytes) + pad8(n * row_bytes); }
  size_t rows_at(size_t n) const { return lead + pad8(n * key_bytes); }
};

// Where pack_pairs puts owner j's pairs: counts[j] of them in the block at displs[j] of the
// packed buffer, led by the count as a uint64_t (host arrays of `ranks` entries).
struct PairPacking {
  PairBlock block;
  const uint64_t* counts;
  const size_t* displs;
  int ranks;
};

// The tokens of a local unique grouped by key, where a backend keeps them: order[j] for
// j < n lists the input numbers by key, equal keys in input order. A device's unique sorts
// its tokens and keeps that order, so that a scatter whose positions follow the keys needs
// no sort of its own; the host's unique does not sort its tokens and keeps none (order
// NULL).
struct KeyGrouping {
  const uint32_t* order = nullptr;
};

// A local unique's tokens as a scatter reads them: n rows of `type` at rows, token t's
// distinct key inverse[t], grouped as the unique left them (KeyGrouping).
struct TokenRows {
  const void* rows;
  zfcDataType_t type;
  const int32_t* inverse;
  size_t n;
  KeyGrouping grouping;
};

// Where a bounded step's result goes: the caller's buffers (room for `capacity` indices and
// capacity x dim rows) and status, in the step's memory space.
struct BoundedOutput {
  void* indices;
  zfcDataType_t index_type;
  float* rows;
  size_t capacity;
  zfcBoundedStatus_t* status;
};

// n sorted, distinct key runs in a backend's memory: run r has counts[r] keys at keys[r], and
// its places in their union go to places[r] (the arrays of n entries are host memory).
template <class K>
struct KeyRuns {
  const K** keys;
  size_t* counts;
  int32_t** places;
  int n;
};

// The union of `runs` (sorted, distinct, below `bound`, in host memory) into out (room for
// their lengths' sum) with each run's places in it; returns its size. One merge: a bitmap of
// the range when it is small next to the keys, else a tournament, O(U log n)
// (kernels/merge_runs.hpp; scratch: workspace kSortScratch).
template <class K>
size_t merge_key_runs(Workspace& ws, const KeyRuns<K>& runs, uint64_t bound, K* out);

template <class K>
class StepKernels {
 public:
  virtual ~StepKernels() = default;
  // The wire steps and the scratch of the same memory space and stream (encode, the ordered
  // sums, the overflow flag, settle before a transport step).
  virtual WireKernels& wire() = 0;
  // Whether the buffers this backend hands out and works on are device memory.
  virtual bool on_device() const = 0;
  // How many times the call waited for the device: fetch, and the wire's waits; 0 on the host.
  virtual uint32_t syncs() const = 0;

  // ---- bytes ---------------------------------------------------------------------------
  virtual Status zero(void* dst, size_t bytes) = 0;
  // Both buffers in this memory space.
  virtual Status copy(void* dst, const void* src, size_t bytes) = 0;
  // From pageable host memory (the stack, the workspace), which the caller may reuse once
  // this returns.
  virtual Status upload(void* dst, const void* host_src, size_t bytes) = 0;
  // To host memory, waiting for the work queued before it: the host reads it next.
  virtual Status fetch(void* host_dst, const void* src, size_t bytes) = 0;

  // ---- keys ----------------------------------------------------------------------------
  // keys[i] = indices[i] (zfcInt32 or zfcInt64) as K; *first_bad = the smallest i with an
  // index outside [0, vocab) when `check`, else (and when none is) n. After a bad index that
  // the check found every key is still below vocab (the host zeroes them all, a device each
  // bad one; a device does so without the check too), so that a unique run before the check
  // is read stays in bounds and its sort orders them.
  virtual Status load_keys(const void* indices, zfcDataType_t type, size_t n, int64_t vocab,
                           bool check, K* keys, uint64_t* first_bad) = 0;
  // out[i] = keys[i] as `type` (zfcInt32 or zfcInt64).
  virtual Status store_keys(const K* keys, size_t n, zfcDataType_t type, void* out) = 0;
  // The sorted distinct keys into uniq (room for n), their number into *count, and the
  // position of keys[i] among them into inverse[i]; into *grouping, the tokens grouped by
  // key where the backend keeps them (until its next unique_with_inverse), else an empty
  // grouping. Keys are below `bound`.
  virtual Status unique_with_inverse(const K* keys, size_t n, uint64_t bound, K* uniq,
                                     int32_t* inverse, uint64_t* count,
                                     KeyGrouping* grouping) = 0;
  virtual Status sorted_unique(const K* keys, size_t n, uint64_t bound, K* uniq,
                               uint64_t* count) = 0;
  // For sorted distinct sub, all of it in sorted distinct full: the index in full of each
  // sub[i] into pos[i].
  virtual Status locate_sorted(const K* sub, size_t n_sub, const K* full, size_t n_full,
                               int32_t* pos) = 0;
  // The union of `runs` (keys below `bound`) into uniq (room for the sum of their lengths),
  // each run's places in it into runs.places, and its size into *u, which the host learns
  // (a read). The default sorts the runs' concatenation (scratch kGatheredKeys) and locates
  // every run in the result; the host merges the runs at once (merge_key_runs).
  virtual Status merge_runs(const KeyRuns<K>& runs, uint64_t bound, K* uniq, size_t* u);
  // Runs known to be disjoint, whose union has n keys: the same without a read, how many
  // distinct keys there were written to *count (a word in this memory space) for a later
  // read to check. Should some repeat, uniq's last places hold the largest key, so that
  // locating any key in it stays inside the n places.
  virtual Status merge_disjoint_runs(const KeyRuns<K>& runs, uint64_t bound, K* uniq, size_t n,
                                     uint64_t* count);
  // For i below min(room, *count) -- count: a word in this memory space, such as a unique's
  // count, which the host need not have read -- owner_of[i] = key_owner(keys[i], ranks)
  // (host_device/key_owner.hpp); counts[j] (`ranks` words here) = how many keys owner j has.
  virtual Status owner_counts(const K* keys, size_t room, const uint64_t* count, int ranks,
                              int32_t* owner_of, uint64_t* counts) = 0;

  // ---- rows (row-major, width dim) -----------------------------------------------------
  // Row i of rows (n x dim of `type`) added into row pos[i] of dst (dst_rows x dim, fp32),
  // the sums of every target row formed in input order in blocks of kSumBlockRows
  // (host_device/sum_order.hpp), on the host and the device alike. `in_order`: pos[i]
  // never decreases in i, so a device takes the rows as they come instead of sorting them
  // by target (the bits are the same).
  virtual Status scatter_add_rows(const void* rows, zfcDataType_t type, const int32_t* pos,
                                  size_t n, size_t dim, float* dst, size_t dst_rows,
                                  bool in_order) = 0;
  // A sum into dst (rows x dim) that the scatter_add_rows calls until end_sum() build, with
  // the bits of zero() and those adds: by default exactly that; the host instead writes
  // each row's first contribution (0 + x) and zeroes at end_sum() only the rows no call
  // reached, so no fill comes first. One sum open at a time.
  virtual Status begin_sum(float* dst, size_t rows, size_t dim) {
    return zero(dst, rows * dim * sizeof(float));
  }
  virtual Status end_sum() { return Status::Ok(); }
  // The same into zeroed rows: the bits of zero() then scatter_add_rows. A device writes
  // every row that has input whole and zeroes only the others, so no dst_rows x dim fill
  // comes first and no row is read. `grouping` is that of the unique whose inverse pos
  // follows -- pos[i] = f(inverse[i]) for an f that never decreases: the inverse itself, or
  // its keys' places in a global set, clamped or not to a capacity -- or empty; a device
  // then groups the rows in its order instead of sorting them. Rows whose keys share a
  // position (only the bounded step's spare row, whose sum is dropped) are then summed key
  // by key.
  virtual Status scatter_to_dense(const void* rows, zfcDataType_t type, const int32_t* pos,
                                  size_t n, size_t dim, float* dst, size_t dst_rows,
                                  const KeyGrouping& grouping) = 0;
  // The pairs of n sorted distinct keys, grouped by owner (owner_of) as `p` says, keys and
  // rows in key order within a block, each row encoded as wire(rows[i] * scale). The padding
  // of every block is zeroed, so every byte sent is defined.
  virtual Status pack_pairs(const K* keys, const int32_t* owner_of, size_t n, const float* rows,
                            size_t dim, zfcDataType_t wire, float scale, const PairPacking& p,
                            char* packed) = 0;
  // Row k of rows (n x dim of the wire type, back to back) decoded into row dest[k] of out,
  // noting whether some value is not finite (read with wire().all_finite).
  virtual Status decode_rows_to(const void* rows, const int32_t* dest, size_t n, size_t dim,
                                zfcDataType_t wire, float scale, float* out) = 0;

  // ---- the same for rows of a wire format (kernels/wire_format.hpp) ---------------------
  // A format of values only goes to the element calls above. The host backend runs any
  // format's own operations; a device refuses one with a per-row part, and stochastic
  // rounding (zfcUnsupported), until it has kernels for them.
  virtual Status add_wire_rows(const kernels::WireFormat& f, const void* rows,
                               const int32_t* pos, size_t n, size_t dim, float* dst,
                               size_t dst_rows, bool in_order);
  // Rounded as `r` says, key i's row with id keys[i].
  virtual Status pack_wire_pairs(const kernels::WireFormat& f, const K* keys,
                                 const int32_t* owner_of, size_t n, const float* rows,
                                 size_t dim, float scale, const PairPacking& p, char* packed,
                                 const kernels::Rounding& r);
  virtual Status decode_wire_rows_to(const kernels::WireFormat& f, const void* rows,
                                     const int32_t* dest, size_t n, size_t dim, float scale,
                                     float* out);
  // The pairs of a local unique's n distinct keys (sorted; owners and blocks as for
  // pack_wire_pairs), key i's row the sum of its tokens' rows, summed as scatter_to_dense
  // sums them, encoded for f. By default the sums go to an n x dim partial
  // (Slot::kPartial) that is then packed; the host writes the sums of a plain fp32 wire
  // straight into their rows of the pairs, so no partial is written and read again.
  virtual Status sum_into_pairs(const kernels::WireFormat& f, const TokenRows& tokens,
                                const K* keys, const int32_t* owner_of, size_t n, size_t dim,
                                float scale, const PairPacking& p, char* packed,
                                const kernels::Rounding& r);

  // ---- the bounded step: sizes stay in this memory space ---------------------------------
  // keys[i] = value for *count <= i < room (count: a word in this memory space).
  virtual Status fill_keys_after(K* keys, size_t room, const uint64_t* count, K value) = 0;
  // out[i] = min(table[index[i]], limit) for i < n, and limit where index[i] >= n_table.
  virtual Status compose_clamped(const int32_t* index, size_t n, const int32_t* table,
                                 size_t n_table, int32_t limit, int32_t* out) = 0;
  // bounded_verdict_of (host_device/bounded_step.hpp) into *out: the gathered `headers` and
  // their `sizes` (ranks of each, or both nullptr when the host agreed), the `ranks` blocks
  // of `block_bytes` at `gathered`, each led by a BoundedLead, and the global set (*count
  // sorted distinct keys).
  virtual Status bounded_verdict(const char* gathered, size_t block_bytes, int ranks,
                                 const OpHeader* headers, const uint64_t* sizes,
                                 const K* global, const uint64_t* count, K sentinel,
                                 size_t capacity, BoundedVerdict* out) = 0;
  // With a successful verdict: the global set's first U_g keys into out.indices (-1 after
  // them, up to the capacity), the capacity x dim rows of dense into out.rows, and the
  // status {U_g, zfcSuccess, whether some value noted by wire() was not finite}; else the
  // status {U_g, the failure, 0} alone, and the buffers are left as they were.
  virtual Status bounded_finish(const BoundedVerdict* verdict, const K* global,
                                const float* dense, size_t dim, const BoundedOutput& out) = 0;
};

// At least n elements of T of k's scratch in `slot` (see WireKernels::scratch).
template <class T>
Status scratch_for(WireKernels& k, Slot slot, size_t n, T** out) {
  if (n > SIZE_MAX / sizeof(T)) throw std::bad_alloc();
  void* p = nullptr;
  ZFC_RETURN_IF_ERROR(k.scratch(slot, n * sizeof(T), &p));
  *out = static_cast<T*>(p);
  return Status::Ok();
}
template <class K, class T>
Status scratch_for(StepKernels<K>& k, Slot slot, size_t n, T** out) {
  return scratch_for(k.wire(), slot, n, out);
}

// The defaults: the runs copied side by side, sorted without repeats, and located.
template <class K>
Status copy_runs(StepKernels<K>& k, const KeyRuns<K>& runs, K** gathered, size_t* total) {
  *total = 0;
  for (int r = 0; r < runs.n; ++r) *total += runs.counts[r];
  ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kGatheredKeys, *total, gathered));
  size_t at = 0;
  for (int r = 0; r < runs.n; ++r) {
    ZFC_RETURN_IF_ERROR(k.copy(*gathered + at, runs.keys[r], runs.counts[r] * sizeof(K)));
    at += runs.counts[r];
  }
  return Status::Ok();
}

template <class K>
Status locate_runs(StepKernels<K>& k, const KeyRuns<K>& runs, const K* uniq, size_t u) {
  for (int r = 0; r < runs.n; ++r) {
    ZFC_RETURN_IF_ERROR(k.locate_sorted(runs.keys[r], runs.counts[r], uniq, u, runs.places[r]));
  }
  return Status::Ok();
}

template <class K>
Status StepKernels<K>::merge_runs(const KeyRuns<K>& runs, uint64_t bound, K* uniq, size_t* u) {
  size_t total = 0;
  K* gathered = nullptr;
  ZFC_RETURN_IF_ERROR(copy_runs(*this, runs, &gathered, &total));
  uint64_t* count = nullptr;
  ZFC_RETURN_IF_ERROR(scratch_for(*this, Slot::kStepWords, 1, &count));
  ZFC_RETURN_IF_ERROR(sorted_unique(gathered, total, bound, uniq, count));
  uint64_t found = 0;
  ZFC_RETURN_IF_ERROR(fetch(&found, count, sizeof found));
  *u = static_cast<size_t>(found);
  return locate_runs(*this, runs, uniq, *u);
}

template <class K>
Status StepKernels<K>::merge_disjoint_runs(const KeyRuns<K>& runs, uint64_t bound, K* uniq,
                                           size_t n, uint64_t* count) {
  size_t total = 0;
  K* gathered = nullptr;
  ZFC_RETURN_IF_ERROR(copy_runs(*this, runs, &gathered, &total));
  ZFC_RETURN_IF_ERROR(sorted_unique(gathered, total, bound, uniq, count));
  ZFC_RETURN_IF_ERROR(fill_keys_after(uniq, n, count, std::numeric_limits<K>::max()));
  return locate_runs(*this, runs, uniq, n);
}

// The host kernels (lib/kernels) with the workspace.
template <class K>
class HostStepKernels final : public StepKernels<K> {
 public:
  explicit HostStepKernels(Workspace& ws) : ws_(ws), wire_(ws) {}

  WireKernels& wire() override { return wire_; }
  bool on_device() const override { return false; }
  uint32_t syncs() const override { return 0; }
  // How many times fetch() was called: on a device, each would have been a wait.
  uint32_t fetches() const { return fetches_; }
  Status zero(void* dst, size_t bytes) override;
  Status begin_sum(float* dst, size_t rows, size_t dim) override;
  Status end_sum() override;
  Status copy(void* dst, const void* src, size_t bytes) override;
  Status upload(void* dst, const void* host_src, size_t bytes) override;
  Status fetch(void* host_dst, const void* src, size_t bytes) override;
  Status load_keys(const void* indices, zfcDataType_t type, size_t n, int64_t vocab, bool check,
                   K* keys, uint64_t* first_bad) override;
  Status store_keys(const K* keys, size_t n, zfcDataType_t type, void* out) override;
  Status unique_with_inverse(const K* keys, size_t n, uint64_t bound, K* uniq,
                             int32_t* inverse, uint64_t* count, KeyGrouping* grouping) override;
  Status sorted_unique(const K* keys, size_t n, uint64_t bound, K* uniq,
                       uint64_t* count) override;
  Status locate_sorted(const K* sub, size_t n_sub, const K* full, size_t n_full,
                       int32_t* pos) override;
  Status merge_runs(const KeyRuns<K>& runs, uint64_t bound, K* uniq, size_t* u) override;
  Status merge_disjoint_runs(const KeyRuns<K>& runs, uint64_t bound, K* uniq, size_t n,
                             uint64_t* count) override;
  Status owner_counts(const K* keys, size_t room, const uint64_t* count, int ranks,
                      int32_t* owner_of, uint64_t* counts) override;
  Status scatter_add_rows(const void* rows, zfcDataType_t type, const int32_t* pos, size_t n,
                          size_t dim, float* dst, size_t dst_rows, bool in_order) override;
  Status scatter_to_dense(const void* rows, zfcDataType_t type, const int32_t* pos, size_t n,
                          size_t dim, float* dst, size_t dst_rows,
                          const KeyGrouping& grouping) override;
  Status pack_pairs(const K* keys, const int32_t* owner_of, size_t n, const float* rows,
                    size_t dim, zfcDataType_t wire, float scale, const PairPacking& p,
                    char* packed) override;
  Status decode_rows_to(const void* rows, const int32_t* dest, size_t n, size_t dim,
                        zfcDataType_t wire, float scale, float* out) override;
  Status add_wire_rows(const kernels::WireFormat& f, const void* rows, const int32_t* pos,
                       size_t n, size_t dim, float* dst, size_t dst_rows,
                       bool in_order) override;
  Status pack_wire_pairs(const kernels::WireFormat& f, const K* keys, const int32_t* owner_of,
                         size_t n, const float* rows, size_t dim, float scale,
                         const PairPacking& p, char* packed,
                         const kernels::Rounding& r) override;
  Status decode_wire_rows_to(const kernels::WireFormat& f, const void* rows,
                             const int32_t* dest, size_t n, size_t dim, float scale,
                             float* out) override;
  Status sum_into_pairs(const kernels::WireFormat& f, const TokenRows& tokens, const K* keys,
                        const int32_t* owner_of, size_t n, size_t dim, float scale,
                        const PairPacking& p, char* packed, const kernels::Rounding& r) override;
  Status fill_keys_after(K* keys, size_t room, const uint64_t* count, K value) override;
  Status compose_clamped(const int32_t* index, size_t n, const int32_t* table, size_t n_table,
                         int32_t limit, int32_t* out) override;
  Status bounded_verdict(const char* gathered, size_t block_bytes, int ranks,
                         const OpHeader* headers, const uint64_t* sizes, const K* global,
                         const uint64_t* count, K sentinel, size_t capacity,
                         BoundedVerdict* out) override;
  Status bounded_finish(const BoundedVerdict* verdict, const K* global, const float* dense,
                        size_t dim, const BoundedOutput& out) override;

 private:
  // The sum begin_sum opened: its rows, and a byte per row once written.
  float* sum_dst_ = nullptr;
  size_t sum_rows_ = 0, sum_dim_ = 0;
  uint8_t* sum_touched_ = nullptr;
  Workspace& ws_;
  HostWireKernels wire_;
  uint32_t fetches_ = 0;
};

// The CUDA kernels on `stream`, with scratch from `scratch` (which keeps the buffers, the
// result among them, until its next use); zfcUnsupported without CUDA.
// `queued`: as for make_device_wire_kernels.
template <class K>
Status make_device_step_kernels(DeviceScratch& scratch, const void* stream,
                                std::unique_ptr<StepKernels<K>>* out,
                                QueuedOn queued = {});

}  // namespace zfc
