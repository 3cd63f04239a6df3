// Single-process references the multi-rank tests compare against. They are written as
// plainly as possible (maps and loops), independent of the library's kernels, but follow
// the library's documented summation order so fp32 results can be compared bit for bit.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <vector>

#include "zipfcoll/zipfcoll.h"

namespace zfc {
namespace test {

// IEEE binary16 bits of x, rounded to nearest even: the compiler's own conversion where it
// has _Float16 (GCC 12, clang 15 and later), else the same rounding done in double
// arithmetic, where every step is exact but the one rounding to integer.
inline uint16_t reference_fp16_bits(float x) {
#ifdef __FLT16_MAX__
  const _Float16 h = static_cast<_Float16>(x);
  uint16_t u;
  std::memcpy(&u, &h, 2);
  return u;
#else
  uint32_t fb;
  std::memcpy(&fb, &x, 4);
  const uint16_t sign = static_cast<uint16_t>((fb >> 16) & 0x8000u);
  if (std::isnan(x)) return sign | 0x7e00u;
  const double a = std::fabs(static_cast<double>(x));
  if (a >= 65520.0) return sign | 0x7c00u;  // at or past the midpoint above 65504
  if (a < std::ldexp(1.0, -14)) {
    // Subnormal: whole units of 2^-24 (1024 units is the smallest normal, encoded alike).
    return sign | static_cast<uint16_t>(std::nearbyint(a * 16777216.0));
  }
  int e = 0;
  std::frexp(a, &e);
  int exp = e - 1;
  double m = std::nearbyint(std::ldexp(a, 10 - exp));  // in [1024, 2048]
  if (m == 2048.0) {
    m = 1024.0;
    ++exp;
  }
  if (exp > 15) return sign | 0x7c00u;
  return sign | static_cast<uint16_t>((exp + 15) << 10) | static_cast<uint16_t>(m - 1024.0);
#endif
}

// The value of binary16 bits.
inline float reference_fp16_value(uint16_t h) {
#ifdef __FLT16_MAX__
  _Float16 v;
  std::memcpy(&v, &h, 2);
  return static_cast<float>(v);
#else
  const float sign = (h & 0x8000u) != 0 ? -1.0f : 1.0f;
  const int exp = (h >> 10) & 0x1f;
  const int man = h & 0x3ff;
  if (exp == 31) return man != 0 ? std::numeric_limits<float>::quiet_NaN()
                                 : sign * std::numeric_limits<float>::infinity();
  if (exp == 0) return sign * static_cast<float>(std::ldexp(man, -24));
  return sign * static_cast<float>(std::ldexp(1024 + man, exp - 25));
#endif
}

// IEEE binary16 and bfloat16 round trips.
inline float round_fp16(float x) { return reference_fp16_value(reference_fp16_bits(x)); }
inline float round_bf16(float x) {
  // bf16 is not a GCC arithmetic type on every target: round to nearest even by hand.
  uint32_t u;
  std::memcpy(&u, &x, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return x;
  u += 0x7fffu + ((u >> 16) & 1u);
  u &= 0xffff0000u;
  float r;
  std::memcpy(&r, &u, 4);
  return r;
}
inline float wire_round(float x, zfcCompressionKind_t kind) {
  if (kind == zfcCompressFp16) return round_fp16(x);
  if (kind == zfcCompressBf16) return round_bf16(x);
  return x;
}

struct RankInput {
  std::vector<int64_t> indices;
  std::vector<float> rows;  // indices.size() x dim
};

struct SparseReference {
  std::vector<int64_t> unique;
  std::vector<float> rows;  // unique.size() x dim
};

// The rows a rank sums per index, from +0 in token order in blocks of kBlockRows
// (host_device/sum_order.hpp): the first block row by row, every later block from +0 on its
// own, then the later blocks' sums in order onto the first's.
inline std::map<int64_t, std::vector<float>> reference_rank_sums(const RankInput& in,
                                                                 size_t dim) {
  constexpr size_t kBlockRows = 1024;
  static_assert(kBlockRows == ZFC_SUM_BLOCK_ROWS, "the reference follows the header's order");
  struct Sum {
    std::vector<float> first, block;
    size_t rows = 0;
  };
  std::map<int64_t, Sum> sums;
  for (size_t t = 0; t < in.indices.size(); ++t) {
    Sum& s = sums[in.indices[t]];
    if (s.rows == 0) s.first.assign(dim, 0.0f);
    if (s.rows >= kBlockRows && s.rows % kBlockRows == 0) {
      if (s.rows > kBlockRows) {
        for (size_t k = 0; k < dim; ++k) s.first[k] += s.block[k];
      }
      s.block.assign(dim, 0.0f);
    }
    std::vector<float>& into = s.rows < kBlockRows ? s.first : s.block;
    for (size_t k = 0; k < dim; ++k) into[k] += in.rows[t * dim + k];
    ++s.rows;
  }
  std::map<int64_t, std::vector<float>> out;
  for (auto& [index, s] : sums) {
    if (s.rows > kBlockRows) {
      for (size_t k = 0; k < dim; ++k) s.first[k] += s.block[k];
    }
    out[index] = std::move(s.first);
  }
  return out;
}

// Sum per index: per rank as reference_rank_sums, then over ranks from +0 in rank order; each
// rank's sum first rounded to `wire` when it travels compressed (unscaled).
inline SparseReference reference_sparse(const std::vector<RankInput>& ranks, size_t dim,
                                        zfcCompressionKind_t wire = zfcCompressNone) {
  std::map<int64_t, std::vector<float>> total;
  for (const RankInput& in : ranks) {
    const std::map<int64_t, std::vector<float>> partial = reference_rank_sums(in, dim);
    for (auto& [index, p] : partial) {
      std::vector<float>& acc = total[index];
      if (acc.empty()) acc.assign(dim, 0.0f);
      for (size_t k = 0; k < dim; ++k) acc[k] += wire_round(p[k], wire);
    }
  }
  SparseReference ref;
  for (auto& [index, acc] : total) {
    ref.unique.push_back(index);
    ref.rows.insert(ref.rows.end(), acc.begin(), acc.end());
  }
  return ref;
}

// The same with ranks [0, n), [n, 2n), ... grouped into nodes of n = ranks_per_node: each
// node's ranks summed from +0 in rank order, then the node sums from +0 in node order.
inline SparseReference reference_sparse_nodes(const std::vector<RankInput>& ranks, size_t dim,
                                              size_t ranks_per_node) {
  std::map<int64_t, std::vector<float>> total;
  for (size_t first = 0; first < ranks.size(); first += ranks_per_node) {
    std::vector<RankInput> members;
    for (size_t r = first; r < ranks.size() && r < first + ranks_per_node; ++r) {
      members.push_back(ranks[r]);
    }
    const SparseReference node = reference_sparse(members, dim);
    for (size_t u = 0; u < node.unique.size(); ++u) {
      std::vector<float>& acc = total[node.unique[u]];
      if (acc.empty()) acc.assign(dim, 0.0f);
      for (size_t k = 0; k < dim; ++k) acc[k] += node.rows[u * dim + k];
    }
  }
  SparseReference ref;
  for (auto& [index, acc] : total) {
    ref.unique.push_back(index);
    ref.rows.insert(ref.rows.end(), acc.begin(), acc.end());
  }
  return ref;
}

// acc = sum over ranks in order of wire(x_r * scale); result = wire(acc) / scale.
inline std::vector<float> reference_allreduce(const std::vector<std::vector<float>>& ranks,
                                              zfcCompressionKind_t kind, float scale) {
  const size_t n = ranks.empty() ? 0 : ranks[0].size();
  const float f = kind == zfcCompressNone ? 1.0f : scale;
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i) {
    float acc = 0.0f;
    for (const auto& r : ranks) acc += wire_round(r[i] * f, kind);
    out[i] = kind == zfcCompressNone ? acc : wire_round(acc, kind) / f;
  }
  return out;
}

// The same with ranks grouped into nodes of ranks_per_node: each node's wire values summed
// from +0 in rank order, then the node sums from +0 in node order.
inline std::vector<float> reference_allreduce_nodes(
    const std::vector<std::vector<float>>& ranks, zfcCompressionKind_t kind, float scale,
    size_t ranks_per_node) {
  const size_t n = ranks.empty() ? 0 : ranks[0].size();
  const float f = kind == zfcCompressNone ? 1.0f : scale;
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i) {
    float acc = 0.0f;
    for (size_t first = 0; first < ranks.size(); first += ranks_per_node) {
      float node = 0.0f;
      for (size_t r = first; r < ranks.size() && r < first + ranks_per_node; ++r) {
        node += wire_round(ranks[r][i] * f, kind);
      }
      acc += node;
    }
    out[i] = kind == zfcCompressNone ? acc : wire_round(acc, kind) / f;
  }
  return out;
}

// FNV-1a over raw bytes, for comparing outputs across ranks.
inline uint64_t fnv1a(const void* data, size_t bytes, uint64_t h = 0xcbf29ce484222325ull) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

}  // namespace test
}  // namespace zfc
