#include "algo/index_set.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include "kernels/unique.hpp"

namespace zfc {

template <class K>
Status IndexSet<K>::load(StepKernels<K>& k, const void* indices, zfcDataType_t type, size_t n,
                         bool check, bool dedupe, bool keys_to_host, int owner_ranks) {
  count_ = n;
  local_count_ = 0;
  local_unique_host_ = nullptr;
  global_on_host_ = false;
  grouping_ = KeyGrouping{};
  owner_ranks_ = 0;
  owner_of_ = nullptr;
  owner_counts_host_ = nullptr;
  const size_t owners = dedupe && owner_ranks > 0 ? static_cast<size_t>(owner_ranks) : 0;
  // The words the host reads (the first bad index, then U_i, then the owners' key counts)
  // lead the distinct keys in one buffer, so that one fetch reads the keys with them.
  const size_t word_bytes = (2 + owners) * sizeof(uint64_t);
  char* block = nullptr;
  ZFC_RETURN_IF_ERROR(
      scratch_for(k, Slot::kLocalUnique, word_bytes + (dedupe ? n * sizeof(K) : 0), &block));
  uint64_t* words = reinterpret_cast<uint64_t*>(block);
  ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kKeys, n, &keys_));
  ZFC_RETURN_IF_ERROR(k.load_keys(indices, type, n, vocab_, check, keys_, &words[0]));
  if (dedupe) {
    // Before the check is read: a bad index leaves keys the kernels can still sort (the
    // host's are zeroed), and the whole result is dropped.
    local_unique_ = reinterpret_cast<K*>(block + word_bytes);
    ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kInverse, n, &inverse_));
    ZFC_RETURN_IF_ERROR(k.unique_with_inverse(keys_, n, static_cast<uint64_t>(vocab_),
                                              local_unique_, inverse_, &words[1],
                                              &grouping_));
  }
  if (owners > 0) {
    // Over room for every token: U_i is in words[1], which the host has not read yet.
    ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kOwnerOf, n, &owner_of_));
    ZFC_RETURN_IF_ERROR(
        k.owner_counts(local_unique_, n, &words[1], owner_ranks, owner_of_, &words[2]));
  }
  // On the host the keys are there already.
  const bool with_keys = dedupe && keys_to_host && k.on_device();
  // U_i <= min(n, vocab): the keys' room, read whole since U_i is learnt by this same read.
  const size_t key_room = with_keys ? std::min(n, static_cast<size_t>(vocab_)) : 0;
  char* host = ws_.get<char>(Slot::kHostUnique, word_bytes + key_room * sizeof(K));
  uint64_t read[2] = {n, 0};
  std::memcpy(host, read, sizeof read);
  ZFC_RETURN_IF_ERROR(
      k.fetch(host, block, (dedupe ? word_bytes : sizeof(uint64_t)) + key_room * sizeof(K)));
  std::memcpy(read, host, sizeof read);
  if (read[0] < n) {
    const size_t at = static_cast<size_t>(read[0]);
    int64_t value = 0;
    if (type == zfcInt32) {
      int32_t v32 = 0;
      ZFC_RETURN_IF_ERROR(k.fetch(&v32, static_cast<const int32_t*>(indices) + at, sizeof v32));
      value = v32;
    } else {
      ZFC_RETURN_IF_ERROR(k.fetch(&value, static_cast<const int64_t*>(indices) + at,
                                  sizeof value));
    }
    return error(zfcInvalidArgument, "indices[%zu] = %lld is outside [0, %lld)", at,
                 static_cast<long long>(value), static_cast<long long>(vocab_));
  }
  if (with_keys && read[1] > key_room) {
    // Only indices outside [0, vocab), unchecked (bounds_check off), could give more; the
    // device reads each such index as key 0, so this guards a backend that would not.
    return error(zfcInvalidArgument, "%llu distinct indices, more than vocab_size %lld: "
                 "some are outside [0, %lld) (bounds_check is off)",
                 static_cast<unsigned long long>(read[1]), static_cast<long long>(vocab_),
                 static_cast<long long>(vocab_));
  }
  local_count_ = static_cast<size_t>(read[1]);
  if (owners > 0) {
    owner_ranks_ = owner_ranks;
    owner_counts_host_ = reinterpret_cast<const uint64_t*>(host + 2 * sizeof(uint64_t));
  }
  if (with_keys) {
    local_unique_host_ = reinterpret_cast<const K*>(host + word_bytes);
  } else if (!k.on_device() && dedupe) {
    local_unique_host_ = local_unique_;
  }
  return Status::Ok();
}

template <class K>
Status IndexSet<K>::load(const void* indices, zfcDataType_t type, size_t n, bool check,
                         bool dedupe) {
  HostStepKernels<K> k(ws_);
  return load(k, indices, type, n, check, dedupe);
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
  gathered_ranks_ = size;
  gathered_ = ws_.get<K>(Slot::kGatheredKeys, total);
  bool rode = agreed.payload != nullptr;
  for (int r = 0; r < size && rode; ++r) rode = agreed.bytes[r] == bytes[r];
  if (!rode) return t.allgatherv(local_unique_host_, gathered_, bytes, byte_displs);
  for (int r = 0; r < size; ++r) {
    if (bytes[r] > 0) {
      std::memcpy(reinterpret_cast<char*>(gathered_) + byte_displs[r],
                  agreed.payload + agreed.displs[r], bytes[r]);
    }
  }
  return Status::Ok();
}

template <class K>
void IndexSet<K>::merge_gathered(int me) {
  const KeyRuns<K> runs = key_runs<K>(ws_, gathered_ranks_);
  rank_positions_ = ws_.get<int32_t>(Slot::kMergedPositions, gathered_count_);
  for (int r = 0; r < gathered_ranks_; ++r) {
    runs.keys[r] = gathered_ + rank_displs_[r];
    runs.counts[r] = rank_counts_[r];
    runs.places[r] = rank_positions_ + rank_displs_[r];
  }
  global_ = ws_.get<K>(Slot::kGlobalUnique, gathered_count_);
  global_count_ = merge_key_runs(ws_, runs, static_cast<uint64_t>(vocab_), global_);
  global_on_host_ = true;
  locate_ = rank_positions_ + rank_displs_[me];
}

template <class K>
Status IndexSet<K>::place_global(StepKernels<K>& k) {
  if (!global_on_host_ || !k.on_device()) return Status::Ok();
  K* there = nullptr;
  ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kGlobalUnique, global_count_, &there));
  ZFC_RETURN_IF_ERROR(k.upload(there, global_, global_count_ * sizeof(K)));
  global_ = there;
  global_on_host_ = false;
  return Status::Ok();
}

template <class K>
Status IndexSet<K>::merge_from(StepKernels<K>& k, const K* keys, size_t n) {
  uint64_t* count = nullptr;
  ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kGlobalUnique, n, &global_));
  ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kStepWords, 1, &count));
  ZFC_RETURN_IF_ERROR(
      k.sorted_unique(keys, n, static_cast<uint64_t>(vocab_), global_, count));
  uint64_t found = 0;
  ZFC_RETURN_IF_ERROR(k.fetch(&found, count, sizeof found));
  global_count_ = static_cast<size_t>(found);
  return Status::Ok();
}

template <class K>
Status IndexSet<K>::merge_disjoint_runs(StepKernels<K>& k, const KeyRuns<K>& runs, size_t n,
                                        uint64_t** count_word) {
  uint64_t* words = nullptr;
  ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kGlobalUnique, n, &global_));
  ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kUnreadWords, 2, &words));
  ZFC_RETURN_IF_ERROR(k.merge_disjoint_runs(runs, static_cast<uint64_t>(vocab_), global_, n,
                                            words));
  global_count_ = n;
  *count_word = words;
  return Status::Ok();
}

template <class K>
void IndexSet<K>::merge_from(const K* keys, size_t n) {
  HostStepKernels<K> k(ws_);
  (void)merge_from(k, keys, n);  // the host's kernels cannot fail
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

template class IndexSet<uint32_t>;
template class IndexSet<uint64_t>;

}  // namespace zfc
