#include "sparse_reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

SparseReference build_reference(const zfc::workload::StepSource& source,
                                const StepIndices& indices, int64_t step, int ranks,
                                size_t dim) {
  SparseReference ref;
  std::vector<std::vector<int32_t>> tokens(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    tokens[r] = indices(step, r);
    ref.indices.insert(ref.indices.end(), tokens[r].begin(), tokens[r].end());
  }
  std::sort(ref.indices.begin(), ref.indices.end());
  ref.indices.erase(std::unique(ref.indices.begin(), ref.indices.end()), ref.indices.end());
  const size_t ug = ref.indices.size();
  ref.rows.assign(ug * dim, 0.0f);
  ref.magnitude.assign(ug * dim, 0.0f);
  std::vector<float> partial(ug * dim, 0.0f);
  std::vector<char> touched(ug, 0);
  std::vector<size_t> list;
  for (int r = 0; r < ranks; ++r) {
    const std::vector<float> rows = source.rows(step, r, tokens[r].size(), dim);
    list.clear();
    for (size_t t = 0; t < tokens[r].size(); ++t) {
      const size_t p = static_cast<size_t>(
          std::lower_bound(ref.indices.begin(), ref.indices.end(), tokens[r][t]) -
          ref.indices.begin());
      if (!touched[p]) touched[p] = 1, list.push_back(p);
      for (size_t d = 0; d < dim; ++d) {
        partial[p * dim + d] += rows[t * dim + d];
        ref.magnitude[p * dim + d] += std::fabs(rows[t * dim + d]);
      }
    }
    for (size_t p : list) {
      for (size_t d = 0; d < dim; ++d) {
        ref.rows[p * dim + d] += partial[p * dim + d];
        partial[p * dim + d] = 0.0f;
      }
      touched[p] = 0;
    }
  }
  return ref;
}

double count_sparse_wrong(const SparseReference& ref, const zfcSparseResult_t& result,
                          zfcCompressionKind_t wire, float scale, int ranks) {
  const size_t ug = ref.indices.size();
  const size_t dim = result.dim;
  if (result.num_unique != ug || ref.rows.size() != ug * dim) {
    return static_cast<double>(std::max(ug, result.num_unique) * (dim + 1));
  }
  const double u = wire == zfcCompressNone ? 0.0
                   : wire == zfcCompressFp16 ? std::ldexp(1.0, -11)
                                             : std::ldexp(1.0, -8);
  const int32_t* idx = static_cast<const int32_t*>(result.indices);
  double wrong = result.overflowed ? 1 : 0;
  for (size_t p = 0; p < ug; ++p) {
    if (idx[p] != ref.indices[p]) wrong += 1;
  }
  for (size_t i = 0; i < ug * dim; ++i) {
    const double got = result.rows[i], want = ref.rows[i], mag = ref.magnitude[i];
    bool ok;
    if (u == 0) {
      ok = std::memcmp(&result.rows[i], &ref.rows[i], sizeof(float)) == 0;
    } else {
      // One rounding of every contribution (or partial sum) and of the result to the wire,
      // fp32 accumulation, and the absolute error of scaled values below fp16's normals.
      const double tol = u * (mag + std::fabs(want)) + std::ldexp(mag, -20) +
                         (ranks + 1) * std::ldexp(1.0, -24) / scale;
      ok = std::fabs(got - want) <= tol;
    }
    if (!ok) wrong += 1;
  }
  return wrong;
}

double formula_bytes(int algorithm, const ByteInputs& in) {
  const double g = in.ranks;
  if (in.ranks <= 1) return 0.0;
  const double k = in.vocab > 4294967296.0 ? 8 : 4;
  const double w = in.wire == zfcCompressNone ? 4 : 2;
  const double both_ways = 2.0 * (g - 1) / g;  // an allgatherv's sent + received, averaged
  const double header = 2.0 * 192.0 * (g - 1);
  switch (algorithm) {
    case zfcAlgoAllGather:
      return header + both_ways * in.tokens * (k + in.dim * w);
    case zfcAlgoUniqueAllReduce:
      return header + both_ways * in.local_unique * k +
             2.0 * both_ways * in.global_unique * in.dim * w;
    case zfcAlgoUniqueAllGather:
      return header + both_ways * in.local_unique * (k + in.dim * w);
    case zfcAlgoDenseVocab:
      return header + 2.0 * both_ways * in.vocab * (in.dim + 1) * w;
    default:
      return 0.0;
  }
}
