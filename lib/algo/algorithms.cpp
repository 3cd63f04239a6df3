#include "algo/algorithms.hpp"

namespace zfc {
namespace {

// The hierarchical exchange runs over the node and cross-node transports its call carries.
template <class K>
Status run_hierarchical(SparseCall<K>& call) {
  return exchange_hierarchical(call, *call.hierarchy.node, *call.hierarchy.rail);
}

constexpr bool kMergesFirst = true, kDedupes = true, kStreams = true, kInt32 = true,
               kNodes = true;
constexpr AutoStage kBefore = AutoStage::kBeforeIndexExchange;
constexpr AutoStage kAfter = AutoStage::kAfterIndexExchange;

// One row per algorithm. The order is the order zfcAlgoAuto weighs them at each stage (the
// first of equal predictions wins).
const AlgorithmInfo kAlgorithmTable[] = {
    {zfcAlgoUniqueAllReduce, "unique_allreduce", kMergesFirst, kDedupes, !kStreams, !kInt32,
     !kNodes, kAfter, exchange_unique_allreduce<uint32_t>, exchange_unique_allreduce<uint64_t>,
     cost::price_unique_allreduce},
    {zfcAlgoUniqueAllGather, "unique_allgather", kMergesFirst, kDedupes, !kStreams, !kInt32,
     !kNodes, kAfter, exchange_unique_allgather<uint32_t>, exchange_unique_allgather<uint64_t>,
     cost::price_unique_allgather},
    {zfcAlgoOwnerPartitioned, "owner_partitioned", kMergesFirst, kDedupes, !kStreams, !kInt32,
     !kNodes, kAfter, exchange_owner_partitioned<uint32_t>,
     exchange_owner_partitioned<uint64_t>, cost::price_owner_partitioned},
    {zfcAlgoHierarchical, "hierarchical", kMergesFirst, kDedupes, !kStreams, !kInt32, kNodes,
     kAfter, run_hierarchical<uint32_t>, run_hierarchical<uint64_t>,
     cost::price_hierarchical},
    {zfcAlgoKeyRouted, "key_routed", !kMergesFirst, kDedupes, kStreams, !kInt32, !kNodes,
     kBefore, exchange_key_routed<uint32_t>, exchange_key_routed<uint64_t>,
     cost::price_key_routed},
    {zfcAlgoAllGather, "allgather", !kMergesFirst, !kDedupes, !kStreams, !kInt32, !kNodes,
     kBefore, exchange_allgather<uint32_t>, exchange_allgather<uint64_t>,
     cost::price_allgather},
    {zfcAlgoDenseVocab, "dense_vocab", !kMergesFirst, kDedupes, !kStreams, kInt32, !kNodes,
     kBefore, exchange_dense_vocab<uint32_t>, exchange_dense_vocab<uint64_t>,
     cost::price_dense_vocab},
};

}  // namespace

AlgorithmTable algorithm_table() {
  return {kAlgorithmTable, sizeof kAlgorithmTable / sizeof kAlgorithmTable[0]};
}

const AlgorithmInfo* find_algorithm(int id) {
  for (const AlgorithmInfo& a : algorithm_table()) {
    if (a.id == id) return &a;
  }
  return nullptr;
}

}  // namespace zfc
