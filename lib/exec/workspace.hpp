// Library-owned scratch memory, one named slot per use. A slot keeps its allocation between
// calls, so a steady workload allocates once. The accounting is exact: call_bytes() is the
// sum, over slots, of the largest request each slot received during the current call (all
// slots are live at once), which is what zfcStats_t reports as peak workspace.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <new>

namespace zfc {

enum class Slot : int {
  kKeys,            // this rank's indices as unsigned keys (K)
  kLocalUnique,     // this rank's distinct keys (U_i)
  kInverse,         // token -> position among this rank's distinct keys (K)
  kKeyOrder,        // tokens grouped by key, as a device's local unique sorted them (K)
  kGatheredKeys,    // keys gathered from all ranks (sum of U_i, or G*K for allgather)
  kGlobalUnique,    // the global distinct keys (U_g)
  kLocate,          // distinct keys -> position in the global set
  kOwnerOf,         // distinct keys -> their owner in a key-routed exchange
  kPositions,       // token -> position in the global set (K)
  kSortScratch,     // radix sort / bitmap scratch
  kCounts,          // per-rank key counts and displacements of the index exchange
  kExchangeSizes,   // per-rank byte sizes and displacements of a row exchange
  kReduceSizes,     // per-rank byte sizes and displacements inside the allreduce
  kRankPositions,   // positions in the global set of one rank's keys
  kMergedPositions, // every rank's keys' positions in the global set, from the merge
  kMergeRuns,       // the heads, lengths and places of the runs a merge takes
  kTouchedRows,     // a byte per row a first-touch sum has written (scatter_rows_first_touch)
  kHeaders,         // per-rank operation headers
  kFirstSend,       // this rank's header and what rides with it (algo/agreement.hpp)
  kFirstBlocks,     // every rank's header and what rode with it, as they arrived
  kFirstSizes,      // their sizes and displacements
  kDense,           // the U_g x D (or V x D) matrix being reduced
  kWireSend,        // compressed copy of what is sent, then of the gathered result
  kWireRecv,        // what arrives from peers
  kGatheredRows,    // rows gathered from all ranks
  kPartial,         // one rank's locally summed rows
  kPairRowSlots,    // where each distinct key's row lies among the pairs being packed
  kResultRows,      // the reduced rows handed back to the caller
  kResultIndices,   // the distinct indices handed back, in the caller's index type
  kNodeSum,         // one node's sum, before it joins the total (see algo/rank_order.hpp)
  kOwnerRows,       // rows an owner receives and sums (owner-partitioned, hierarchical)
  kNodeRows,        // a node's summed rows on their way across nodes (hierarchical)
  kOwnerScratch,    // position lists and flags of the owner ranges (hierarchical)
  kReduceReceived,  // what every rank receives in the allreduce's reduce-scatter (ledger)
  kPeerReceived,    // what every rank receives in a row exchange's alltoallv (ledger)
  kOwnerMap,        // the owner of every global position, and its holders (owner maps)
  kRoutedPairs,     // (key, row) pairs a key-routed exchange receives
  kOwnerReports,    // what each owner of a key-routed exchange summed and received
  kOwnerKeys,       // the distinct keys an owner of a key-routed exchange sums
  kNodeLists,       // row lists of the hierarchical exchange's node and rail steps
  kStepWords,       // counts a step's kernels write for the host to fetch (exec/step_kernels)
  kUnreadWords,     // a count a step checks with its last read (SparseCall::unread)
  kBackendWords,    // a device step backend's own words (its counts as the kernels write them)
  kBackendTable,    // a device step backend's copy of the pair counts and offsets
  kHostUnique,      // the step words and distinct keys a device step reads back (host)
  kAppliedRows,     // rows read from or applied to a device table, on the host (exec/table_update)
  kTableRows,       // the row numbers of those rows in their table (a shard's local rows)
  kReduceRows,      // 0, 1, ...: the rows of an allreduce of rows, summed where they are
  kFeedback,        // an allreduce's values plus their residual, then what their encode left out
  kNumSlots
};

class Workspace {
 public:
  Workspace() = default;
  ~Workspace();
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  // Starts the accounting of a new call.
  void begin_call();

  // At least n elements of T in slot s; contents are unspecified. Throws std::bad_alloc.
  template <class T>
  T* get(Slot s, size_t n) {
    if (n > SIZE_MAX / sizeof(T)) throw std::bad_alloc();
    return static_cast<T*>(raw(s, n * sizeof(T)));
  }

  // Bytes the current call has requested (see above).
  size_t call_bytes() const;

 private:
  void* raw(Slot s, size_t bytes);

  struct Buffer {
    void* data = nullptr;
    size_t capacity = 0;
    size_t call_max = 0;
  };
  std::array<Buffer, static_cast<size_t>(Slot::kNumSlots)> buffers_{};
};

}  // namespace zfc
