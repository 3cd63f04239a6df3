// What zfc_perf sparse checks and compares against: the exact reduced rows of a step, built
// from every rank's regenerated tokens and rows in the library's documented order, and each
// algorithm's byte formula (docs/algorithms.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "workload/step_source.hpp"
#include "zipfcoll/zipfcoll.h"

struct SparseReference {
  std::vector<int32_t> indices;   // U_g sorted distinct indices
  std::vector<float> rows;        // U_g x D: ((+0 + p_0) + p_1) + ..., p_r in token order (per node)
  std::vector<float> magnitude;   // U_g x D: sum of |value| over every contribution
};

// Rank r's indices at a step (its tokens, and its sampled candidates if any).
using StepIndices = std::function<std::vector<int32_t>(int64_t step, int rank)>;

// ranks_per_node > 0: ranks [0, n), [n, 2n), ... are nodes, summed inside first (the
// library's order of sums on a communicator with nodes).
SparseReference build_reference(const zfc::workload::StepSource& source,
                                const StepIndices& indices, int64_t step, int ranks,
                                size_t dim, int ranks_per_node);

// Elements of `result` (indices and rows) that differ from the reference: exactly for an
// uncompressed wire, beyond the wire's rounding bound otherwise. All of them if the sizes
// differ.
double count_sparse_wrong(const SparseReference& ref, const zfcSparseResult_t& result,
                          zfcCompressionKind_t wire, float scale, int ranks);

struct ByteInputs {
  int ranks;
  double tokens;         // sum over ranks of K_i
  double local_unique;   // sum over ranks of U_i
  double global_unique;  // U_g
  double dim;
  double vocab;
  zfcCompressionKind_t wire;
};

// Bytes per row value on `wire` (a per-row scale spread over the row's dim values).
double wire_value_bytes(zfcCompressionKind_t wire, double dim);
// Bytes sent + received per rank, averaged over ranks, of one call of `algorithm`.
double formula_bytes(int algorithm, const ByteInputs& in);
// The same of one zfcSparseReduceBounded with `capacity` (docs/algorithms.md).
double bounded_formula_bytes(const ByteInputs& in, double capacity);
