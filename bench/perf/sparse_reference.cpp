#include "sparse_reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace {

// Sums over a subset of rows, from +0, remembering which rows it touched.
class Accumulator {
 public:
  Accumulator(size_t rows, size_t dim) : dim_(dim), sum_(rows * dim, 0.0f), touched_(rows, 0) {}
  void add(size_t p, const float* row) {
    if (!touched_[p]) touched_[p] = 1, list_.push_back(p);
    for (size_t d = 0; d < dim_; ++d) sum_[p * dim_ + d] += row[d];
  }
  void drain_into(Accumulator* other) {
    for (size_t p : list_) other->add(p, &sum_[p * dim_]);
    clear();
  }
  // Adds row p into `other` and starts it again from +0 (a later sum block has ended).
  void move_row_into(size_t p, Accumulator* other) {
    other->add(p, &sum_[p * dim_]);
    std::fill(&sum_[p * dim_], &sum_[p * dim_] + dim_, 0.0f);
  }
  void drain_into(float* out) {
    for (size_t p : list_) {
      for (size_t d = 0; d < dim_; ++d) out[p * dim_ + d] += sum_[p * dim_ + d];
    }
    clear();
  }

 private:
  void clear() {
    for (size_t p : list_) {
      std::fill(&sum_[p * dim_], &sum_[p * dim_] + dim_, 0.0f);
      touched_[p] = 0;
    }
    list_.clear();
  }
  size_t dim_;
  std::vector<float> sum_;
  std::vector<char> touched_;
  std::vector<size_t> list_;
};

}  // namespace

SparseReference build_reference(const zfc::workload::StepSource& source,
                                const StepIndices& indices, int64_t step, int ranks,
                                size_t dim, int ranks_per_node) {
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
  // Per rank from +0 in token order in blocks of ZFC_SUM_BLOCK_ROWS rows per id (zipfcoll.h,
  // "Token order": the first block row by row, each later one on its own, added in order),
  // per node from +0 in rank order, then over nodes.
  Accumulator rank_sum(ug, dim), block_sum(ug, dim), node_sum(ug, dim);
  std::vector<size_t> seen(ug);
  const int per_node = ranks_per_node > 0 ? ranks_per_node : ranks;
  for (int r = 0; r < ranks; ++r) {
    const std::vector<float> rows = source.rows(step, r, tokens[r].size(), dim);
    std::fill(seen.begin(), seen.end(), size_t{0});
    for (size_t t = 0; t < tokens[r].size(); ++t) {
      const size_t p = static_cast<size_t>(
          std::lower_bound(ref.indices.begin(), ref.indices.end(), tokens[r][t]) -
          ref.indices.begin());
      const size_t c = seen[p]++;
      if (c < ZFC_SUM_BLOCK_ROWS) {
        rank_sum.add(p, &rows[t * dim]);
      } else {
        if (c % ZFC_SUM_BLOCK_ROWS == 0 && c > ZFC_SUM_BLOCK_ROWS) {
          block_sum.move_row_into(p, &rank_sum);
        }
        block_sum.add(p, &rows[t * dim]);
      }
      for (size_t d = 0; d < dim; ++d) ref.magnitude[p * dim + d] += std::fabs(rows[t * dim + d]);
    }
    block_sum.drain_into(&rank_sum);  // each id's last later block
    rank_sum.drain_into(&node_sum);
    if ((r + 1) % per_node == 0 || r + 1 == ranks) node_sum.drain_into(ref.rows.data());
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
  // Half a last place of the wire (a whole one when stochastic); int8's relative to its
  // row's largest magnitude, and fp8's with a floor below its subnormals, from the row's.
  const int format = wire & ~ZFC_COMPRESS_STOCHASTIC;
  const double u = (format == zfcCompressNone      ? 0.0
                    : format == zfcCompressFp16    ? std::ldexp(1.0, -11)
                    : format == zfcCompressBf16    ? std::ldexp(1.0, -8)
                    : format == zfcCompressFp8E4M3 ? std::ldexp(1.0, -4)
                    : format == zfcCompressFp8E5M2 ? std::ldexp(1.0, -3)
                                                   : 1.0 / 254.0) *
                   ((wire & ZFC_COMPRESS_STOCHASTIC) != 0 ? 2.0 : 1.0);
  const bool per_row = format >= zfcCompressFp8E4M3;
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
      // The hierarchical exchange rounds each node's sums to the wire once more.
      const double rounds = result.algorithm == zfcAlgoHierarchical ? 2.0 : 1.0;
      double tol = u * (rounds * mag + std::fabs(want)) + std::ldexp(mag, -20) +
                   (ranks + 1) * std::ldexp(1.0, -24) / scale;
      if (per_row) {
        double row = 0.0;  // the row's largest magnitude
        for (size_t k = i / dim * dim; k < (i / dim + 1) * dim; ++k) {
          row = std::max(row, static_cast<double>(ref.magnitude[k]));
        }
        // Each rank's row rounds to its own largest magnitude (at most `row`), so the first
        // rounding's errors add over the ranks; each later one is the sum's.
        const double roundings = ranks + rounds;
        tol = (format == zfcCompressInt8 ? u * roundings * row : tol) +
              std::ldexp(row, -16) * roundings;
      }
      ok = std::fabs(got - want) <= tol;
    }
    if (!ok) wrong += 1;
  }
  return wrong;
}

double wire_value_bytes(zfcCompressionKind_t wire, double dim) {
  switch (wire & ~ZFC_COMPRESS_STOCHASTIC) {
    case zfcCompressNone: return 4.0;
    case zfcCompressFp16:
    case zfcCompressBf16: return 2.0;
    default: return 1.0 + 4.0 / dim;  // a byte per value and the row's fp32 scale
  }
}

double formula_bytes(int algorithm, const ByteInputs& in) {
  const double g = in.ranks;
  if (in.ranks <= 1) return 0.0;
  const double k = in.vocab > 4294967296.0 ? 8 : 4;
  const double w = wire_value_bytes(in.wire, in.dim);
  const double both_ways = 2.0 * (g - 1) / g;  // an allgatherv's sent + received, averaged
  const double header = 2.0 * 96.0 * (g - 1);  // algo/agreement.hpp
  switch (algorithm) {
    case zfcAlgoAllGather:
      return header + both_ways * in.tokens * (k + in.dim * w);
    case zfcAlgoUniqueAllReduce:
      return header + both_ways * in.local_unique * k +
             2.0 * both_ways * in.global_unique * in.dim * w;
    case zfcAlgoUniqueAllGather:
      return header + both_ways * in.local_unique * (k + in.dim * w);
    case zfcAlgoDenseVocab:  // eight bits: the presence marks in fp32, an allreduce apart
      return header + 2.0 * both_ways * in.vocab *
                          (w < 2.0 ? in.dim * w + 4.0 : (in.dim + 1) * w);
    case zfcAlgoOwnerPartitioned:  // every row owned by one of its holders
      return header + both_ways * in.local_unique * k +
             2.0 / g * (in.local_unique + (g - 2) * in.global_unique) * in.dim * w;
    case zfcAlgoKeyRouted:  // each rank's keys spread evenly over the owners; no padding
      return header + 2.0 * (8.0 + 16.0) * (g - 1) +
             both_ways * (in.local_unique / g + in.global_unique) * (k + in.dim * w);
    default:
      return 0.0;
  }
}

double bounded_formula_bytes(const ByteInputs& in, double capacity) {
  const double g = in.ranks;
  if (in.ranks <= 1) return 0.0;
  const double k = in.vocab >= 4294967296.0 ? 8 : 4;  // keys hold vocab itself, the sentinel
  const double w = wire_value_bytes(in.wire, in.dim);
  const double both_ways = 2.0 * (g - 1) / g;
  const double header = 2.0 * 96.0 * (g - 1);
  const double block = 24.0 + std::ceil(capacity * k / 8.0) * 8.0;  // lead, padded indices
  return header + 2.0 * (g - 1) * block + 2.0 * both_ways * capacity * in.dim * w;
}
