// One merge of G sorted runs of distinct keys into their sorted union, with each run's
// positions in it: O(U log G) for U keys in all, where sorting the concatenation and then
// locating each run in the result (a walk from the start per run) costs O(U log U + G U_g).
// The routed exchanges' owners receive such runs (every sender's keys, sorted and distinct)
// and so does every rank from the owners (disjoint runs whose union is the global set).
#pragma once

#include <cstddef>
#include <cstdint>

namespace zfc {
namespace kernels {

// Two ways to the same output: a tournament of losers over the runs' heads (log2 G
// comparisons a key, whatever the keys' range), or, when the range is small next to the
// keys, a bitmap of the range marked by every run and read back in order, a key's place
// being a popcount (O(U + bound / 64), no comparison of keys).
enum class RunMerge { kTournament, kBitmap };

// The way merge_sorted_runs takes for keys below `bound`, `total` of them in all runs.
RunMerge run_merge_method(uint64_t bound, size_t total);

// Scratch bytes merge_sorted_runs needs (as CUB's temp-storage queries).
template <class K>
size_t merge_scratch_bytes(RunMerge m, int n_runs, uint64_t bound);

// Merges runs[r][0..counts[r]) for r in [0, n_runs), each sorted ascending and distinct and
// below `bound`, into out (room for the sum of counts) without repeats, and writes the index
// in out of runs[r][i] to positions[r][i] (positions[r] may be NULL: not wanted). scratch:
// merge_scratch_bytes(m, ...), 8-byte aligned. Returns the number of keys written.
template <class K>
size_t merge_sorted_runs(RunMerge m, const K* const* runs, const size_t* counts, int n_runs,
                         uint64_t bound, K* out, int32_t* const* positions, void* scratch);

}  // namespace kernels
}  // namespace zfc
