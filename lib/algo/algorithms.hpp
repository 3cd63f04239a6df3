// Every algorithm of zfcSparseReduce as one descriptor in one table: its name, what it needs
// and does, when zfcAlgoAuto weighs it, its runner and its cost formula. The runner
// (sparse_reduce.cpp), the cost model, zfcGetAlgorithmName and the plan checks read it; the
// Python module and the benchmarks take the names from zfcGetAlgorithmName. An algorithm is
// one file (its exchange and its price_* formula, as owner_exchange.cpp) and one row of
// kAlgorithmTable (algo/algorithms.cpp); docs/design.md gives the recipe.
#pragma once

#include <cstddef>

#include "algo/sparse_exchange.hpp"
#include "zipfcoll/zipfcoll.h"

namespace zfc {
namespace cost {
struct Cost;
// The algorithms' formulas (docs/algorithms.md), each beside its exchange.
void price_allgather(Cost& c);
void price_unique_allreduce(Cost& c);
void price_dense_vocab(Cost& c);
void price_unique_allgather(Cost& c);
void price_owner_partitioned(Cost& c);
void price_hierarchical(Cost& c);
void price_key_routed(Cost& c);
}  // namespace cost

// When zfcAlgoAuto weighs an algorithm: before the index exchange (one that needs none,
// chosen only if faster than every other at the smallest U_g), or after it, once U_g is
// known.
enum class AutoStage { kBeforeIndexExchange, kAfterIndexExchange };

template <class K>
using ExchangeFn = Status (*)(SparseCall<K>&);

struct AlgorithmInfo {
  zfcAlgorithm_t id;
  const char* name;              // what zfcGetAlgorithmName returns
  bool merges_first;             // every rank's distinct keys ride with the header and the
                                 // global set is merged before rows travel
  bool dedupes;                  // sends summed rows of distinct keys (all but the baseline)
  bool streams_apply;            // zfcSparseReduceApply streams its rows into the table
                                 // instead of applying a whole result
  bool needs_int32_positions;    // positions over the whole vocabulary: V <= INT32_MAX
  bool needs_node_map;           // several nodes of equal size (NodeMap::hierarchical)
  AutoStage auto_stage;
  ExchangeFn<uint32_t> run32;    // the exchange, after the header (and, when merges_first,
  ExchangeFn<uint64_t> run64;    // the index exchange and merge)
  void (*price)(cost::Cost&);    // its terms beyond the header and index merge

  template <class K>
  Status run(SparseCall<K>& call) const;
};

template <>
inline Status AlgorithmInfo::run<uint32_t>(SparseCall<uint32_t>& call) const {
  return run32(call);
}
template <>
inline Status AlgorithmInfo::run<uint64_t>(SparseCall<uint64_t>& call) const {
  return run64(call);
}

// The table, in the order zfcAlgoAuto weighs its rows.
struct AlgorithmTable {
  const AlgorithmInfo* first;
  size_t count;
  const AlgorithmInfo* begin() const { return first; }
  const AlgorithmInfo* end() const { return first + count; }
};
AlgorithmTable algorithm_table();

// The row of `id`; NULL for zfcAlgoAuto, zfcAlgoDefault and numbers no algorithm has.
const AlgorithmInfo* find_algorithm(int id);

}  // namespace zfc
