#include "algo/cost_model.hpp"

#include <cstdint>

namespace zfc {

double estimated_bytes(zfcAlgorithm_t algorithm, const CostInputs& in) {
  const double g = in.ranks;
  // A gather moves each rank's block to G-1 peers and brings G-1 blocks in; averaged over
  // ranks that is 2 (G-1)/G of the total per rank. A reduce-scatter + allgather of n
  // elements sends and receives (G-1)/G n twice each: 4 (G-1)/G n.
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
    case zfcAlgoDenseVocab:
      return index_exchange + reduce * static_cast<double>(in.vocab) * d * rb;
    case zfcAlgoUniqueAllGather:
      return index_exchange + gather * static_cast<double>(in.local_unique) * d * rb;
    default:
      return 0.0;
  }
}

zfcAlgorithm_t choose_exchange(const CostInputs& in) {
  zfcAlgorithm_t best = zfcAlgoUniqueAllReduce;
  double best_bytes = estimated_bytes(best, in);
  const double gather = estimated_bytes(zfcAlgoUniqueAllGather, in);
  if (gather < best_bytes) {
    best = zfcAlgoUniqueAllGather;
    best_bytes = gather;
  }
  // The dense matrix is indexed by int32 positions.
  if (in.vocab <= INT32_MAX && estimated_bytes(zfcAlgoDenseVocab, in) < best_bytes) {
    best = zfcAlgoDenseVocab;
  }
  return best;
}

}  // namespace zfc
