#include "kernels/rows.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "host_device/sum_order.hpp"
#include "kernels/cast.hpp"

namespace zfc {
namespace kernels {

void zero_rows(float* dst, size_t rows, size_t dim) {
  if (rows * dim != 0) std::memset(dst, 0, rows * dim * sizeof(float));
}

namespace {

// acc += fp32(row i) of `rows`, by the vector conversion loops (add_to).
class RowAdder {
 public:
  RowAdder(const void* rows, zfcDataType_t type, size_t dim)
      : rows_(static_cast<const char*>(rows)), type_(type), dim_(dim),
        row_bytes_(dim * float_type_bytes(type)) {}
  void operator()(size_t i, float* acc) const { add_to(rows_ + i * row_bytes_, type_, dim_, acc); }
  // acc = 0 + fp32(row i): a target's first row, written without a zero fill first.
  void first(size_t i, float* acc) const { sum_blocks(rows_ + i * row_bytes_, 1, dim_, type_, acc); }

 private:
  const char* rows_;
  zfcDataType_t type_;
  size_t dim_;
  size_t row_bytes_;
};

// The block sums of one scatter_add_rows call: how many rows each target has had, the block
// sum a target adds into now (once needed), each block sum's target in opening order, and
// the sums (block_target.size() x dim).
struct BlockSums {
  std::vector<uint32_t> seen;
  std::vector<uint32_t> open_block;
  std::vector<int32_t> block_target;
  std::vector<float> block_sum;
};

// Whether every position is above the one before: no target repeats. The rank-order sums
// (each rank's distinct ids at their global positions) are such calls.
bool strictly_increasing(const int32_t* pos, size_t n) {
  for (size_t i = 1; i < n; ++i) {
    if (pos[i] <= pos[i - 1]) return false;
  }
  return true;
}

// The order of host_device/sum_order.hpp. A call of at most kSumBlockRows rows, or one whose
// targets do not repeat, has no later block: it adds in input order directly. Any other
// counts each target's rows as they come (in memory of the largest position, at most the
// destination's rows); rows past a target's first block go to that block's own sum, and
// those sums are added onto their targets in the order they were opened, which is block
// order per target. With `touched` (a byte per target, 0 for one not yet written), a
// target's first row is written from +0 instead of added, and its byte set.
// Target p's row is at(p): dst + p * dim for a dense destination, anywhere for rows that lie
// apart (scatter_rows_to_targets).
template <class RowAt>
void scatter_rows(const void* rows, zfcDataType_t row_type, const int32_t* pos, size_t n,
                  size_t dim, RowAt&& at, uint8_t* touched) {
  const RowAdder add(rows, row_type, dim);
  auto put = [&](size_t i, size_t p) {
    if (touched != nullptr && touched[p] == 0) {
      touched[p] = 1;
      add.first(i, at(p));
    } else {
      add(i, at(p));
    }
  };
  if (n <= kSumBlockRows || strictly_increasing(pos, n)) {
    for (size_t i = 0; i < n; ++i) put(i, static_cast<size_t>(pos[i]));
    return;
  }
  int32_t top = 0;
  for (size_t i = 0; i < n; ++i) top = std::max(top, pos[i]);
  // Scratch kept per thread and reused: once grown, a steady step allocates nothing here.
  static thread_local BlockSums b;
  b.seen.assign(static_cast<size_t>(top) + 1, 0);
  b.block_target.clear();
  b.block_sum.clear();
  bool opened = false;
  for (size_t i = 0; i < n; ++i) {
    const int32_t p = pos[i];
    const uint32_t c = b.seen[p]++;
    if (c < kSumBlockRows) {
      put(i, static_cast<size_t>(p));
      continue;
    }
    if (c % kSumBlockRows == 0) {
      if (!opened) {
        b.open_block.resize(b.seen.size());
        opened = true;
      }
      b.open_block[p] = static_cast<uint32_t>(b.block_target.size());
      b.block_target.push_back(p);
      b.block_sum.resize(b.block_sum.size() + dim, 0.0f);
    }
    add(i, b.block_sum.data() + static_cast<size_t>(b.open_block[p]) * dim);
  }
  for (size_t t = 0; t < b.block_target.size(); ++t) {
    add_to(b.block_sum.data() + t * dim, zfcFloat32, dim,
           at(static_cast<size_t>(b.block_target[t])));
  }
}

// The rows of a dense destination.
struct DenseRows {
  float* dst;
  size_t dim;
  float* operator()(size_t p) const { return dst + p * dim; }
};

}  // namespace

void scatter_add_rows(const void* rows, zfcDataType_t row_type, const int32_t* pos, size_t n,
                      size_t dim, float* dst) {
  scatter_rows(rows, row_type, pos, n, dim, DenseRows{dst, dim}, nullptr);
}

void scatter_rows_first_touch(const void* rows, zfcDataType_t row_type, const int32_t* pos,
                              size_t n, size_t dim, float* dst, uint8_t* touched) {
  scatter_rows(rows, row_type, pos, n, dim, DenseRows{dst, dim}, touched);
}

void zero_untouched_rows(float* dst, size_t rows, size_t dim, const uint8_t* touched) {
  for (size_t p = 0; p < rows; ++p) {
    if (touched[p] == 0) zero_rows(dst + p * dim, 1, dim);
  }
}

namespace {
// The first-touch scatter into n_targets rows, each at(p), then +0 in every row no token
// reached: the bits of a zero fill and the adds, without the fill.
template <class RowAt>
void scatter_to_unfilled(const void* rows, zfcDataType_t row_type, const int32_t* pos, size_t n,
                         size_t dim, RowAt&& at, size_t n_targets) {
  static thread_local std::vector<uint8_t> touched;  // kept: a steady step allocates nothing
  touched.assign(n_targets, 0);
  scatter_rows(rows, row_type, pos, n, dim, at, touched.data());
  for (size_t p = 0; p < n_targets; ++p) {
    if (touched[p] == 0) zero_rows(at(p), 1, dim);
  }
}
}  // namespace

void scatter_rows_to_zeroed(const void* rows, zfcDataType_t row_type, const int32_t* pos,
                            size_t n, size_t dim, float* dst, size_t dst_rows) {
  scatter_to_unfilled(rows, row_type, pos, n, dim, DenseRows{dst, dim}, dst_rows);
}

void scatter_rows_to_targets(const void* rows, zfcDataType_t row_type, const int32_t* pos,
                             size_t n, size_t dim, float* const* targets, size_t n_targets) {
  scatter_to_unfilled(rows, row_type, pos, n, dim, [targets](size_t p) { return targets[p]; },
                      n_targets);
}

size_t find_bad_position(const int32_t* pos, size_t n, size_t bound) {
  for (size_t i = 0; i < n; ++i) {
    if (pos[i] < 0 || static_cast<size_t>(pos[i]) >= bound) return i;
  }
  return n;
}

template <class K>
void gather_rows(const float* src, const K* rows, size_t n, size_t dim, float* out) {
  for (size_t i = 0; i < n; ++i) {
    std::memcpy(out + i * dim, src + static_cast<size_t>(rows[i]) * dim, dim * sizeof(float));
  }
}

template void gather_rows<uint32_t>(const float*, const uint32_t*, size_t, size_t, float*);
template void gather_rows<uint64_t>(const float*, const uint64_t*, size_t, size_t, float*);

namespace {
template <class I>
void apply_typed(float* table, size_t dim, const I* idx, const float* rows, size_t n,
                 float alpha) {
  for (size_t p = 0; p < n; ++p) {
    float* t = table + static_cast<size_t>(idx[p]) * dim;
    const float* r = rows + p * dim;
    for (size_t k = 0; k < dim; ++k) t[k] += alpha * r[k];
  }
}
}  // namespace

void apply_rows(float* table, size_t dim, const void* idx, zfcDataType_t index_type,
                const float* rows, size_t n, float alpha) {
  if (index_type == zfcInt32) {
    apply_typed(table, dim, static_cast<const int32_t*>(idx), rows, n, alpha);
  } else {
    apply_typed(table, dim, static_cast<const int64_t*>(idx), rows, n, alpha);
  }
}

}  // namespace kernels
}  // namespace zfc
