// The cost model behind zfcAlgoAuto: bytes each rank sends plus receives, on average, plus a
// fixed charge per collective for its latency, from the step's agreed sizes. Every input is
// known identically on every rank (from the headers, then from the index exchange), so every
// rank makes the same choice. docs/algorithms.md gives the formulas.
#pragma once

#include <cstddef>
#include <cstdint>

#include "zipfcoll/zipfcoll.h"

namespace zfc {

struct CostInputs {
  int ranks = 1;                  // G
  uint64_t tokens = 0;            // sum over ranks of K_i
  uint64_t local_unique = 0;      // sum over ranks of U_i
  uint64_t max_local_unique = 0;  // max over ranks of U_i: a lower bound on U_g
  uint64_t global_unique = 0;     // U_g, once known
  int64_t vocab = 0;              // V
  size_t dim = 0;                 // D
  size_t key_bytes = 4;           // bytes per index on the wire
  size_t row_bytes = 4;           // bytes per row element on the wire
};

// What one collective's latency is worth, in bytes of traffic.
constexpr double kCollectiveLatencyBytes = 8192.0;
// What a byte of the reduced matrix that a rank builds and scans locally is worth, relative
// to a byte on the network (memory is roughly an order of magnitude faster). This keeps a
// single rank, which moves no bytes, from choosing the V x D matrix.
constexpr double kLocalByteWeight = 0.125;

// Bytes of the fp32 matrix each rank builds and reads locally for `algorithm`.
double local_matrix_bytes(zfcAlgorithm_t algorithm, const CostInputs& in);

// Average bytes sent + received per rank by `algorithm` (not auto), headers excluded.
double estimated_bytes(zfcAlgorithm_t algorithm, const CostInputs& in);

// estimated_bytes plus the latency charge for the algorithm's collectives and the weighted
// local matrix bytes.
double estimated_cost(zfcAlgorithm_t algorithm, const CostInputs& in);

// Before the index exchange (U_g unknown): zfcAlgoDenseVocab when the dense matrix costs no
// more than the unique exchanges would even at the smallest possible U_g, else zfcAlgoAuto
// (decide after the exchange).
zfcAlgorithm_t choose_before_index_exchange(const CostInputs& in);

// After the index exchange: zfcAlgoUniqueAllReduce or zfcAlgoUniqueAllGather (ties go to
// the first, whose memory does not grow with G).
zfcAlgorithm_t choose_after_index_exchange(const CostInputs& in);

}  // namespace zfc
