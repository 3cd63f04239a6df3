#include "algo/cost_model.hpp"

#include <algorithm>
#include <climits>

namespace zfc {
namespace {

int collectives(zfcAlgorithm_t algorithm) {
  switch (algorithm) {
    case zfcAlgoAllGather: return 2;        // indices, rows
    case zfcAlgoUniqueAllReduce: return 3;  // indices, reduce-scatter, gather
    case zfcAlgoUniqueAllGather: return 2;  // indices, rows
    case zfcAlgoDenseVocab: return 2;       // reduce-scatter, gather
    default: return 0;
  }
}

}  // namespace

double estimated_bytes(zfcAlgorithm_t algorithm, const CostInputs& in) {
  const double g = in.ranks;
  // A gather moves each rank's block to G-1 peers and brings G-1 blocks in; averaged over
  // ranks that is 2 (G-1)/G of the total per rank. A reduce-scatter + gather of n elements
  // sends and receives (G-1)/G n twice each: 4 (G-1)/G n.
  const double gather = 2.0 * (g - 1.0) / g;
  const double reduce = 4.0 * (g - 1.0) / g;
  const double d = static_cast<double>(in.dim);
  const double kb = static_cast<double>(in.key_bytes);
  const double rb = static_cast<double>(in.row_bytes);
  const double index_exchange = gather * static_cast<double>(in.local_unique) * kb;
  switch (algorithm) {
    case zfcAlgoAllGather:
      return gather * static_cast<double>(in.tokens) * (kb + d * rb);
    case zfcAlgoUniqueAllReduce:
      return index_exchange + reduce * static_cast<double>(in.global_unique) * d * rb;
    case zfcAlgoUniqueAllGather:
      return index_exchange + gather * static_cast<double>(in.local_unique) * d * rb;
    case zfcAlgoDenseVocab:  // V rows and a presence column; no index exchange
      return reduce * static_cast<double>(in.vocab) * (d + 1.0) * rb;
    default:
      return 0.0;
  }
}

double local_matrix_bytes(zfcAlgorithm_t algorithm, const CostInputs& in) {
  const double row = 4.0 * static_cast<double>(in.dim);
  switch (algorithm) {
    case zfcAlgoAllGather: return static_cast<double>(in.tokens) * row;
    case zfcAlgoUniqueAllReduce: return static_cast<double>(in.global_unique) * row;
    case zfcAlgoUniqueAllGather: return static_cast<double>(in.local_unique) * row;
    case zfcAlgoDenseVocab: return static_cast<double>(in.vocab) * (row + 4.0);
    default: return 0.0;
  }
}

double estimated_cost(zfcAlgorithm_t algorithm, const CostInputs& in) {
  const double latency = in.ranks > 1 ? kCollectiveLatencyBytes * collectives(algorithm) : 0.0;
  return estimated_bytes(algorithm, in) + latency +
         kLocalByteWeight * local_matrix_bytes(algorithm, in);
}

zfcAlgorithm_t choose_before_index_exchange(const CostInputs& in) {
  if (in.vocab > INT32_MAX) return zfcAlgoAuto;
  CostInputs best_case = in;
  best_case.global_unique = in.max_local_unique;
  const double unique_best = std::min(estimated_cost(zfcAlgoUniqueAllReduce, best_case),
                                      estimated_cost(zfcAlgoUniqueAllGather, best_case));
  return estimated_cost(zfcAlgoDenseVocab, in) <= unique_best ? zfcAlgoDenseVocab : zfcAlgoAuto;
}

zfcAlgorithm_t choose_after_index_exchange(const CostInputs& in) {
  return estimated_cost(zfcAlgoUniqueAllGather, in) < estimated_cost(zfcAlgoUniqueAllReduce, in)
             ? zfcAlgoUniqueAllGather
             : zfcAlgoUniqueAllReduce;
}

}  // namespace zfc
