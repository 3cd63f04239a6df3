// Row-major matrix products on CBLAS (OpenBLAS where installed), the only arithmetic
// kernels the trainer needs beyond elementwise loops.
#pragma once

#include <cblas.h>

namespace lm {

// C (m x n) = alpha * op(A) * op(B) + beta * C, with op(A) m x k and op(B) k x n;
// lda, ldb, ldc are the row strides of A, B and C as stored.
inline void gemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a,
                 int lda, const float* b, int ldb, float beta, float* c, int ldc) {
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace lm
