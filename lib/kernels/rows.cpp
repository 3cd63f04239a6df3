#include "kernels/rows.hpp"

#include <cstring>

#include "kernels/cast.hpp"

namespace zfc {
namespace kernels {

void zero_rows(float* dst, size_t rows, size_t dim) {
  if (rows * dim != 0) std::memset(dst, 0, rows * dim * sizeof(float));
}

void scatter_add_rows(const void* rows, zfcDataType_t row_type, const int32_t* pos, size_t n,
                      size_t dim, float* dst) {
  if (row_type == zfcFloat32) {
    const float* in = static_cast<const float*>(rows);
    for (size_t i = 0; i < n; ++i) {
      float* d = dst + static_cast<size_t>(pos[i]) * dim;
      const float* s = in + i * dim;
      for (size_t k = 0; k < dim; ++k) d[k] += s[k];
    }
    return;
  }
  // 16-bit rows: the vector conversion loops, one row at a time.
  const uint16_t* in = static_cast<const uint16_t*>(rows);
  for (size_t i = 0; i < n; ++i) {
    add_to(in + i * dim, row_type, dim, dst + static_cast<size_t>(pos[i]) * dim);
  }
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
