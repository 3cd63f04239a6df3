// The step's index set: this rank's keys, its distinct keys, and -- after every rank's
// distinct keys (not all K tokens) are gathered, riding with the operation headers or in an
// allgatherv of their own -- the global sorted distinct set, identical on every rank, with
// each local token's position in it. Keys are unsigned; K is uint32_t
// when the vocabulary fits, which also halves the index traffic.
#pragma once

#include <cstddef>
#include <cstdint>

#include "algo/agreement.hpp"
#include "exec/step_kernels.hpp"
#include "exec/workspace.hpp"
#include "kernels/index_keys.hpp"
#include "transport/transport.hpp"

namespace zfc {

// Room for the heads, lengths and places of n runs (workspace kMergeRuns).
template <class K>
KeyRuns<K> key_runs(Workspace& ws, int n) {
  const size_t G = static_cast<size_t>(n);
  char* at = ws.get<char>(Slot::kMergeRuns, G * (2 * sizeof(void*) + sizeof(size_t)));
  return {reinterpret_cast<const K**>(at), reinterpret_cast<size_t*>(at + G * sizeof(void*)),
          reinterpret_cast<int32_t**>(at + G * (sizeof(void*) + sizeof(size_t))), n};
}

template <class K>
class IndexSet {
 public:
  IndexSet(Workspace& ws, int64_t vocab) : ws_(ws), vocab_(vocab) {}

  // Copies the caller's indices into keys, checking the range when `check` (a bad index is
  // zfcInvalidArgument naming its position and value), and with `dedupe` finds this rank's
  // distinct keys and each token's position among them. On k's memory space (the indices
  // and every array of the set are there); the host learns the bad index, if any, and U_i in
  // one fetch (and a bad index's value in a second). With `keys_to_host` on a device, that
  // one fetch also brings the distinct keys (min(n, vocab) of them, since U_i is not yet
  // known) to the host, for the algorithms that gather them (local_unique_host). With
  // `owner_ranks` > 0 (and dedupe), each distinct key's owner among that many ranks
  // (host_device/key_owner.hpp) and every owner's key count, which the same fetch brings to
  // the host: a key-routed exchange then knows what it sends without a read of its own.
  Status load(StepKernels<K>& k, const void* indices, zfcDataType_t type, size_t n, bool check,
              bool dedupe, bool keys_to_host = false, int owner_ranks = 0);
  // The same with the host kernels.
  Status load(const void* indices, zfcDataType_t type, size_t n, bool check, bool dedupe);

  // Every rank's distinct keys (counts from the agreed headers): those that rode with the
  // headers when every rank's payload is exactly its keys, else an allgatherv of them.
  Status gather(Transport& t, const Agreed& agreed);

  // Builds the global set from the gathered keys, every rank's sorted and distinct, by one
  // merge of those runs (O(U log G)), which also gives every rank's positions in it
  // (rank_positions) and this rank's, `me` (locate()); on the host.
  void merge_gathered(int me);
  // The global set into k's memory space when merge_gathered made it on the host and k is a
  // device's (an upload); global() is then there.
  Status place_global(StepKernels<K>& k);

  // Global set of arbitrary keys (the allgather baseline's gathered tokens, the key-routed
  // owners' keys), on k's memory space; the host learns its size (one fetch).
  Status merge_from(StepKernels<K>& k, const K* keys, size_t n);
  void merge_from(const K* keys, size_t n);  // with the host kernels
  // The global set as the union of runs known to be disjoint (the key-routed owners'
  // blocks), n keys, with each run's places in it, on k's memory space without a read:
  // global_count() is n, and *count_word (two words in k's memory, the second free for the
  // reader) holds how many distinct keys there were, for the step's last read to check.
  Status merge_disjoint_runs(StepKernels<K>& k, const KeyRuns<K>& runs, size_t n,
                             uint64_t** count_word);

  // Global set of the keys v < vocab whose present[v] is not zero (the dense exchange,
  // which learns the set from a reduced presence column instead of exchanging keys).
  void global_from_presence(const float* present);

  // out[i] = global position of token i.
  void token_positions(int32_t* out) const;

  // After merge_gathered: the positions in the global set of every rank's distinct keys,
  // rank r's (rank_counts()[r] of them, ascending) at rank_displs()[r] (host memory).
  const int32_t* rank_positions() const { return rank_positions_; }
  const int32_t* rank_positions(int r) const { return rank_positions_ + rank_displs_[r]; }

  size_t count() const { return count_; }
  const K* keys() const { return keys_; }
  size_t local_unique_count() const { return local_count_; }
  const K* local_unique() const { return local_unique_; }  // in the loading kernels' memory
  // The distinct keys in host memory: local_unique() when loaded on the host, the copy the
  // fetch brought with keys_to_host on a device, NULL otherwise.
  const K* local_unique_host() const { return local_unique_host_; }
  // After merge_gathered: the global position of each distinct key (host memory).
  const int32_t* locate() const { return locate_; }
  const int32_t* inverse() const { return inverse_; }
  // The tokens grouped by key, where the loading kernels keep them (StepKernels::
  // unique_with_inverse), for a scatter whose positions follow the keys.
  const KeyGrouping& grouping() const { return grouping_; }
  // After a load with owner_ranks: that number (0 otherwise), each distinct key's owner (in
  // the loading kernels' memory) and every owner's key count (host memory).
  int owner_ranks() const { return owner_ranks_; }
  const int32_t* owner_of() const { return owner_of_; }
  const uint64_t* owner_counts() const { return owner_counts_host_; }
  size_t global_count() const { return global_count_; }
  const K* global() const { return global_; }
  size_t gathered_count() const { return gathered_count_; }
  const size_t* rank_counts() const { return rank_counts_; }  // in keys
  const size_t* rank_displs() const { return rank_displs_; }  // in keys

 private:
  Workspace& ws_;
  int64_t vocab_;
  size_t count_ = 0;
  K* keys_ = nullptr;
  size_t local_count_ = 0;
  K* local_unique_ = nullptr;
  const K* local_unique_host_ = nullptr;
  int32_t* inverse_ = nullptr;
  KeyGrouping grouping_;
  int owner_ranks_ = 0;
  int32_t* owner_of_ = nullptr;
  const uint64_t* owner_counts_host_ = nullptr;
  size_t gathered_count_ = 0;
  K* gathered_ = nullptr;
  size_t* rank_counts_ = nullptr;
  size_t* rank_displs_ = nullptr;
  int gathered_ranks_ = 0;
  int32_t* rank_positions_ = nullptr;
  size_t global_count_ = 0;
  K* global_ = nullptr;
  bool global_on_host_ = false;  // merged by merge_gathered, whatever the loading kernels
  int32_t* locate_ = nullptr;
};

template <class K>
struct KeyTag {
  using type = K;
};

// Calls f(KeyTag<K>{}) with the narrowest key type K that holds every index below `vocab`.
template <class F>
auto with_key_type(int64_t vocab, F&& f) {
  if (static_cast<uint64_t>(vocab) <= (uint64_t{1} << 32)) return f(KeyTag<uint32_t>{});
  return f(KeyTag<uint64_t>{});
}

}  // namespace zfc
