// The device side of exec/step_kernels.hpp: the CUDA kernels of cuda/ on the caller's stream,
// with the device scratch of the plan. Without CUDA the factory refuses with zfcUnsupported.
// Every wait for the stream (fetch, settle, all_finite) is counted in syncs().
#include "exec/step_kernels.hpp"

#if ZIPFCOLL_HAVE_CUDA
#include <algorithm>
#include <climits>
#include <cstring>

#include "device_kernels.hpp"
#include "device_runtime.hpp"
#include "kernels/radix_sort.hpp"
#endif

namespace zfc {

#if ZIPFCOLL_HAVE_CUDA
namespace {

// The backend's own words in Slot::kBackendWords: 32-bit counts as CUB writes them, and a
// set size handed to locate_sorted.
constexpr size_t kWordCount32 = 0, kWordBad32 = 1, kWordFull32 = 2, kBackendWordBytes = 64;

Status check_device_count(const char* what, size_t n) {
  if (n > static_cast<size_t>(INT32_MAX)) {
    return error(zfcInvalidArgument, "%s %zu exceeds %d for device buffers", what, n,
                 INT32_MAX);
  }
  return Status::Ok();
}

template <class K>
class DeviceStepKernels final : public StepKernels<K> {
 public:
  DeviceStepKernels(DeviceScratch& scratch, void* stream, std::unique_ptr<WireKernels> wire,
                    int* d_flag, uint32_t* d_words, QueuedOn queued)
      : scratch_(scratch), stream_(stream), wire_(std::move(wire)), d_flag_(d_flag),
        d_words_(d_words), queued_(queued) {}

  WireKernels& wire() override { return *wire_; }
  bool on_device() const override { return true; }
  // Its own fetches and the waits of the wire kernels (settle, all_finite).
  uint32_t syncs() const override { return syncs_ + wire_->syncs(); }

  Status zero(void* dst, size_t bytes) override { return cuda::fill_zero(dst, bytes, stream_); }
  Status copy(void* dst, const void* src, size_t bytes) override {
    return cuda::copy_on_device(dst, src, bytes, stream_);
  }
  // A few words (a count, a header) go as a kernel's argument: no wait for a pageable copy,
  // and a CUDA graph can capture them.
  // More (a rank's positions, the global set) through the plan's pinned memory: a copy from
  // pageable memory may wait for the stream, one from pinned memory is only queued.
  Status upload(void* dst, const void* host_src, size_t bytes) override {
    if (bytes == 0) return Status::Ok();
    if (bytes <= cuda::kInlineStoreBytes) return cuda::store_inline(dst, host_src, bytes, stream_);
    constexpr DeviceScratch::Pinned kUse = DeviceScratch::Pinned::kUploads;
    void* pinned = nullptr;
    size_t room = 0;
    ZFC_RETURN_IF_ERROR(scratch_.pinned(kUse, 0, &pinned, &room));
    if (pinned_used_ + bytes > room) {
      // Growing frees the memory this call's earlier uploads may still be read from: they
      // are waited for first (a plan's first calls, and a step larger than any before).
      // The room grows to what the call has uploaded so far, so the same uploads fit next.
      const size_t want = std::max(2 * room, pinned_used_ + pad8(bytes));
      const bool waited = pinned_used_ > 0;
      if (waited) {
        ++syncs_;
        ZFC_RETURN_IF_ERROR(wait_for_stream(stream_, queued_));
        pinned_used_ = 0;
      }
      // Having just waited for the stream, the growth need not poll it again.
      ZFC_RETURN_IF_ERROR(scratch_.pinned(kUse, want, &pinned, &room, stream_,
                                          waited ? QueuedOn{} : queued_));
    }
    char* at = static_cast<char*>(pinned) + pinned_used_;
    std::memcpy(at, host_src, bytes);
    pinned_used_ += pad8(bytes);
    return cuda::copy_to_device(dst, at, bytes, stream_);
  }
  Status fetch(void* host_dst, const void* src, size_t bytes) override {
    if (bytes == 0) return Status::Ok();  // nothing read, no wait
    ++syncs_;
    return read_back(scratch_, stream_, queued_, host_dst, src, bytes);
  }

  Status load_keys(const void* indices, zfcDataType_t type, size_t n, int64_t vocab, bool check,
                   K* keys, uint64_t* first_bad) override {
    ZFC_RETURN_IF_ERROR(check_device_count("count", n));
    const uint32_t n32 = static_cast<uint32_t>(n);
    if (check) {
      ZFC_RETURN_IF_ERROR(cuda::find_bad_index(indices, type, n32, vocab,
                                               d_words_ + kWordBad32, stream_));
      ZFC_RETURN_IF_ERROR(cuda::widen_count(d_words_ + kWordBad32, first_bad, stream_));
    } else {
      const uint64_t none = n;
      ZFC_RETURN_IF_ERROR(upload(first_bad, &none, sizeof none));
    }
    return cuda::load_keys(indices, type, n32, vocab, keys, stream_);
  }
  Status store_keys(const K* keys, size_t n, zfcDataType_t type, void* out) override {
    ZFC_RETURN_IF_ERROR(check_device_count("keys", n));
    return cuda::store_keys(keys, static_cast<uint32_t>(n), type, out, stream_);
  }
  // The sort's order is kept in the plan's kKeyOrder slot, which nothing else uses, for the
  // scatter that follows the keys (scatter_to_dense with this grouping).
  Status unique_with_inverse(const K* keys, size_t n, uint64_t bound, K* uniq,
                             int32_t* inverse, uint64_t* count, KeyGrouping* grouping) override {
    ZFC_RETURN_IF_ERROR(check_device_count("keys", n));
    const uint32_t n32 = static_cast<uint32_t>(n);
    const int bits = kernels::key_bits_for_bound(bound);
    uint32_t* d_count = d_words_ + kWordCount32;
    void* order = nullptr;
    ZFC_RETURN_IF_ERROR(scratch_.get(Slot::kKeyOrder, (n + 1) * sizeof(uint32_t), &order,
                                     stream_, queued_));
    uint32_t* d_order = static_cast<uint32_t*>(order);
    size_t bytes = 0;
    ZFC_RETURN_IF_ERROR(cuda::unique_with_inverse<K>(nullptr, &bytes, keys, n32, bits, uniq,
                                                     inverse, d_count, d_order, stream_));
    void* temp = nullptr;
    ZFC_RETURN_IF_ERROR(scratch_.get(Slot::kSortScratch, bytes, &temp, stream_, queued_));
    ZFC_RETURN_IF_ERROR(cuda::unique_with_inverse<K>(temp, &bytes, keys, n32, bits, uniq,
                                                     inverse, d_count, d_order, stream_));
    ZFC_RETURN_IF_ERROR(cuda::widen_count(d_count, count, stream_));
    grouping->order = d_order;
    return Status::Ok();
  }
  Status sorted_unique(const K* keys, size_t n, uint64_t bound, K* uniq,
                       uint64_t* count) override {
    ZFC_RETURN_IF_ERROR(check_device_count("keys", n));
    const uint32_t n32 = static_cast<uint32_t>(n);
    const int bits = kernels::key_bits_for_bound(bound);
    uint32_t* d_count = d_words_ + kWordCount32;
    size_t bytes = 0;
    ZFC_RETURN_IF_ERROR(
        cuda::sorted_unique<K>(nullptr, &bytes, keys, n32, bits, uniq, d_count, stream_));
    void* temp = nullptr;
    ZFC_RETURN_IF_ERROR(scratch_.get(Slot::kSortScratch, bytes, &temp, stream_, queued_));
    ZFC_RETURN_IF_ERROR(
        cuda::sorted_unique<K>(temp, &bytes, keys, n32, bits, uniq, d_count, stream_));
    return cuda::widen_count(d_count, count, stream_);
  }
  Status locate_sorted(const K* sub, size_t n_sub, const K* full, size_t n_full,
                       int32_t* pos) override {
    ZFC_RETURN_IF_ERROR(check_device_count("keys", n_full));
    ZFC_RETURN_IF_ERROR(check_device_count("keys", n_sub));
    const uint32_t full32 = static_cast<uint32_t>(n_full);
    ZFC_RETURN_IF_ERROR(upload(d_words_ + kWordFull32, &full32, sizeof full32));
    return cuda::locate_sorted<K>(sub, static_cast<uint32_t>(n_sub), full,
                                  d_words_ + kWordFull32, pos, stream_);
  }
  Status owner_counts(const K* keys, size_t room, const uint64_t* count, int ranks,
                      int32_t* owner_of, uint64_t* counts) override {
    ZFC_RETURN_IF_ERROR(check_device_count("keys", room));
    return cuda::owner_counts<K>(keys, static_cast<uint32_t>(room), count, ranks, owner_of,
                                 counts, stream_);
  }

  Status scatter_add_rows(const void* rows, zfcDataType_t type, const int32_t* pos, size_t n,
                          size_t dim, float* dst, size_t dst_rows, bool in_order) override {
    return scatter(in_order ? cuda::scatter_add_rows_in_order : cuda::scatter_add_rows, rows,
                   type, pos, n, dim, dst, dst_rows);
  }
  Status scatter_to_dense(const void* rows, zfcDataType_t type, const int32_t* pos, size_t n,
                          size_t dim, float* dst, size_t dst_rows,
                          const KeyGrouping& grouping) override {
    // The unique's order in place of a sort (with no order, the scatter sorts).
    const uint32_t* order = grouping.order;
    auto grouped = [order](void* t, size_t* b, const void* r, zfcDataType_t ty,
                           const int32_t* p, uint32_t n32, size_t d, float* out, uint32_t m,
                           void* s) {
      return cuda::scatter_to_dense_grouped(t, b, r, ty, p, order, n32, d, out, m, s);
    };
    return scatter(grouped, rows, type, pos, n, dim, dst, dst_rows);
  }
  Status pack_pairs(const K* keys, const int32_t* owner_of, size_t n, const float* rows,
                    size_t dim, zfcDataType_t wire, float scale, const PairPacking& p,
                    char* packed) override;
  Status decode_rows_to(const void* rows, const int32_t* dest, size_t n, size_t dim,
                        zfcDataType_t wire, float scale, float* out) override {
    ZFC_RETURN_IF_ERROR(check_device_count("rows", n));
    return cuda::decode_rows_to(rows, dest, static_cast<uint32_t>(n), dim, wire, scale, out,
                                d_flag_, stream_);
  }
  Status fill_keys_after(K* keys, size_t room, const uint64_t* count, K value) override {
    ZFC_RETURN_IF_ERROR(check_device_count("keys", room));
    return cuda::fill_keys_after<K>(keys, static_cast<uint32_t>(room), count, value, stream_);
  }
  Status compose_clamped(const int32_t* index, size_t n, const int32_t* table, size_t n_table,
                         int32_t limit, int32_t* out) override {
    ZFC_RETURN_IF_ERROR(check_device_count("positions", n));
    ZFC_RETURN_IF_ERROR(check_device_count("positions", n_table));
    return cuda::compose_clamped(index, static_cast<uint32_t>(n), table,
                                 static_cast<uint32_t>(n_table), limit, out, stream_);
  }
  Status bounded_verdict(const char* gathered, size_t block_bytes, int ranks,
                         const OpHeader* headers, const uint64_t* sizes, const K* global,
                         const uint64_t* count, K sentinel, size_t capacity,
                         BoundedVerdict* out) override {
    return cuda::bounded_verdict<K>(gathered, block_bytes, ranks, headers, sizes, global, count,
                                    sentinel, capacity, out, stream_);
  }
  Status bounded_finish(const BoundedVerdict* verdict, const K* global, const float* dense,
                        size_t dim, const BoundedOutput& out) override {
    ZFC_RETURN_IF_ERROR(check_device_count("capacity", out.capacity));
    return cuda::bounded_finish<K>(verdict, global, dense, dim, out.indices, out.index_type,
                                   out.rows, static_cast<uint32_t>(out.capacity), d_flag_,
                                   out.status, stream_);
  }

 private:
  // One of the device scatters (cuda::scatter_add_rows, or cuda::scatter_to_dense_grouped
  // over a grouping or none), sized then run with the plan's sort scratch.
  template <class Scatter>
  Status scatter(Scatter run, const void* rows, zfcDataType_t type, const int32_t* pos,
                 size_t n, size_t dim, float* dst, size_t dst_rows) {
    ZFC_RETURN_IF_ERROR(check_device_count("rows", n));
    ZFC_RETURN_IF_ERROR(check_device_count("rows", dst_rows));
    const uint32_t n32 = static_cast<uint32_t>(n), m32 = static_cast<uint32_t>(dst_rows);
    size_t bytes = 0;
    ZFC_RETURN_IF_ERROR(run(nullptr, &bytes, rows, type, pos, n32, dim, dst, m32, stream_));
    void* temp = nullptr;
    ZFC_RETURN_IF_ERROR(scratch_.get(Slot::kSortScratch, bytes, &temp, stream_, queued_));
    return run(temp, &bytes, rows, type, pos, n32, dim, dst, m32, stream_);
  }

  DeviceScratch& scratch_;
  void* stream_;
  std::unique_ptr<WireKernels> wire_;
  int* d_flag_;       // the non-finite flag wire_ reads in all_finite
  uint32_t* d_words_;  // kBackendWords
  QueuedOn queued_;
  uint32_t syncs_ = 0;
  size_t pinned_used_ = 0;  // of the plan's pinned memory, by this call's uploads
};

template <class K>
Status DeviceStepKernels<K>::pack_pairs(const K* keys, const int32_t* owner_of, size_t n,
                                        const float* rows, size_t dim, zfcDataType_t wire,
                                        float scale, const PairPacking& p, char* packed) {
  ZFC_RETURN_IF_ERROR(check_device_count("keys", n));
  const size_t ranks = static_cast<size_t>(p.ranks);
  // The counts and offsets the kernels read, as 64-bit words on the device.
  void* table = nullptr;
  ZFC_RETURN_IF_ERROR(scratch_.get(Slot::kBackendTable, 2 * ranks * sizeof(uint64_t), &table,
                                   stream_, queued_));
  uint64_t* d_counts = static_cast<uint64_t*>(table);
  uint64_t* d_displs = d_counts + ranks;
  ZFC_RETURN_IF_ERROR(upload(d_counts, p.counts, ranks * sizeof(uint64_t)));
  static_assert(sizeof(size_t) == sizeof(uint64_t), "offsets travel as 64-bit words");
  ZFC_RETURN_IF_ERROR(upload(d_displs, p.displs, ranks * sizeof(uint64_t)));
  const cuda::PairFrame frame{p.block.lead, p.block.key_bytes, p.block.row_bytes};
  const uint32_t n32 = static_cast<uint32_t>(n);
  size_t bytes = 0;
  ZFC_RETURN_IF_ERROR(cuda::pack_pairs<K>(nullptr, &bytes, keys, owner_of, n32, p.ranks, rows,
                                          dim, wire, scale, frame, d_counts, d_displs, packed,
                                          stream_));
  void* temp = nullptr;
  ZFC_RETURN_IF_ERROR(scratch_.get(Slot::kSortScratch, bytes, &temp, stream_, queued_));
  return cuda::pack_pairs<K>(temp, &bytes, keys, owner_of, n32, p.ranks, rows, dim, wire, scale,
                             frame, d_counts, d_displs, packed, stream_);
}

}  // namespace

template <class K>
Status make_device_step_kernels(DeviceScratch& scratch, const void* stream,
                                std::unique_ptr<StepKernels<K>>* out, QueuedOn queued) {
  std::unique_ptr<WireKernels> wire;
  ZFC_RETURN_IF_ERROR(make_device_wire_kernels(scratch, stream, &wire, queued));
  int* d_flag = nullptr;
  ZFC_RETURN_IF_ERROR(scratch.flag(&d_flag));  // the word wire's decode and all_finite use
  void* words = nullptr;
  ZFC_RETURN_IF_ERROR(scratch.get(Slot::kBackendWords, kBackendWordBytes, &words));
  out->reset(new DeviceStepKernels<K>(scratch, const_cast<void*>(stream), std::move(wire),
                                      d_flag, static_cast<uint32_t*>(words), queued));
  return Status::Ok();
}

#else

template <class K>
Status make_device_step_kernels(DeviceScratch&, const void*, std::unique_ptr<StepKernels<K>>*,
                                QueuedOn) {
  return error(zfcUnsupported, "device buffers need a build with CUDA");
}

#endif

template Status make_device_step_kernels<uint32_t>(DeviceScratch&, const void*,
                                                   std::unique_ptr<StepKernels<uint32_t>>*,
                                                   QueuedOn);
template Status make_device_step_kernels<uint64_t>(DeviceScratch&, const void*,
                                                   std::unique_ptr<StepKernels<uint64_t>>*,
                                                   QueuedOn);

}  // namespace zfc
