#include "algo/index_set.hpp"

#include <cstring>

#include "kernels/unique.hpp"

namespace zfc {

template <class K>
Status IndexSet<K>::load(const void* indices, zfcDataType_t type, size_t n, bool check,
                         bool dedupe) {
  count_ = n;
  keys_ = ws_.get<K>(Slot::kKeys, n);
  const kernels::BadIndex bad = kernels::load_keys(indices, type, n, vocab_, check, keys_);
  if (bad.found) {
    return error(zfcInvalidArgument, "indices[%zu] = %lld is outside [0, %lld)", bad.position,
                 static_cast<long long>(bad.value), static_cast<long long>(vocab_));
  }
  if (dedupe) dedupe_local();
  return Status::Ok();
}

template <class K>
void IndexSet<K>::dedupe_local() {
  const uint64_t bound = static_cast<uint64_t>(vocab_);
  local_unique_ = ws_.get<K>(Slot::kLocalUnique, count_);
  inverse_ = ws_.get<int32_t>(Slot::kInverse, count_);
  void* scratch = ws_.get<char>(Slot::kSortScratch,
                                kernels::unique_scratch_bytes<K>(count_, bound, true));
  local_count_ = kernels::unique_with_inverse(keys_, count_, bound, local_unique_, inverse_,
                                              scratch);
}

template <class K>
Status IndexSet<K>::gather(Transport& t, const Agreed& agreed) {
  const OpHeader* headers = agreed.headers;
  const int size = t.size();
  rank_counts_ = ws_.get<size_t>(Slot::kCounts, 4 * static_cast<size_t>(size));
  rank_displs_ = rank_counts_ + size;
  size_t* bytes = rank_displs_ + size;
  size_t* byte_displs = bytes + size;
  size_t total = 0;
  for (int r = 0; r < size; ++r) {
    rank_counts_[r] = static_cast<size_t>(headers[r].local_unique);
    rank_displs_[r] = total;
    bytes[r] = rank_counts_[r] * sizeof(K);
    byte_displs[r] = total * sizeof(K);
    total += rank_counts_[r];
  }
  gathered_count_ = total;
  gathered_ = ws_.get<K>(Slot::kGatheredKeys, total);
  bool rode = agreed.payload != nullptr;
  for (int r = 0; r < size && rode; ++r) rode = agreed.bytes[r] == bytes[r];
  if (!rode) return t.allgatherv(local_unique_, gathered_, bytes, byte_displs);
  for (int r = 0; r < size; ++r) {
    if (bytes[r] > 0) {
      std::memcpy(reinterpret_cast<char*>(gathered_) + byte_displs[r],
                  agreed.payload + agreed.displs[r], bytes[r]);
    }
  }
  return Status::Ok();
}

template <class K>
void IndexSet<K>::merge_gathered() {
  merge_from(gathered_, gathered_count_);
  locate_ = ws_.get<int32_t>(Slot::kLocate, local_count_);
  kernels::locate_sorted(local_unique_, local_count_, global_, global_count_, locate_);
}

template <class K>
void IndexSet<K>::merge_from(const K* keys, size_t n) {
  const uint64_t bound = static_cast<uint64_t>(vocab_);
  global_ = ws_.get<K>(Slot::kGlobalUnique, n);
  void* scratch = ws_.get<char>(Slot::kSortScratch,
                                kernels::unique_scratch_bytes<K>(n, bound, false));
  global_count_ = kernels::sorted_unique(keys, n, bound, global_, scratch);
}

template <class K>
void IndexSet<K>::global_from_presence(const float* present) {
  const size_t vocab = static_cast<size_t>(vocab_);
  size_t n = 0;
  for (size_t v = 0; v < vocab; ++v) n += present[v] != 0.0f ? 1 : 0;
  global_ = ws_.get<K>(Slot::kGlobalUnique, n);
  global_count_ = 0;
  for (size_t v = 0; v < vocab; ++v) {
    if (present[v] != 0.0f) global_[global_count_++] = static_cast<K>(v);
  }
}

template <class K>
void IndexSet<K>::token_positions(int32_t* out) const {
  for (size_t i = 0; i < count_; ++i) out[i] = locate_[inverse_[i]];
}

template <class K>
void IndexSet<K>::locate_rank(int r, int32_t* out) const {
  kernels::locate_sorted(gathered_ + rank_displs_[r], rank_counts_[r], global_, global_count_,
                         out);
}

template class IndexSet<uint32_t>;
template class IndexSet<uint64_t>;

}  // namespace zfc
