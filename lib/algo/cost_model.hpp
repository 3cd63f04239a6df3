// The cost model behind zfcAlgoAuto: bytes each rank sends plus receives, on average, for
// each exchange, from the step's agreed sizes. Every input is known identically on every
// rank after the index exchange, so every rank makes the same choice. See
// docs/algorithms.md for the formulas.
#pragma once

#include <cstddef>
#include <cstdint>

#include "zipfcoll/zipfcoll.h"

namespace zfc {

struct CostInputs {
  int ranks = 1;                  // G
  uint64_t tokens = 0;            // sum over ranks of K_i
  uint64_t local_unique = 0;      // sum over ranks of U_i
  uint64_t global_unique = 0;     // U_g
  int64_t vocab = 0;              // V
  size_t dim = 0;                 // D
  size_t key_bytes = 4;           // bytes per index on the wire
  size_t row_bytes = 4;           // bytes per row element on the wire
};

// Average bytes sent + received per rank by `algorithm` (not zfcAlgoAuto), headers excluded.
double estimated_bytes(zfcAlgorithm_t algorithm, const CostInputs& in);

// The cheapest exchange once the global index set is known: zfcAlgoUniqueAllReduce,
// zfcAlgoUniqueAllGather or zfcAlgoDenseVocab (ties go in that order).
zfcAlgorithm_t choose_exchange(const CostInputs& in);

}  // namespace zfc
