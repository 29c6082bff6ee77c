#pragma once
// Single-precision GEMM on Eigen's cache-blocked, vectorized kernels.
// C[M,N] = alpha * op(A) * op(B) + beta * C, all row-major with leading dims.
// beta == 0 overwrites C without reading it (C may hold garbage or NaN).

#include <cstdint>

namespace etc {

void gemm_f32(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
              int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

// Double-precision variant (used by the conformance suite's float64 tests).
void gemm_f64(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
              int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc);

// C = op(A) * op(B) + beta * C for either element type, for kernels
// templated on it.
inline void gemm_typed(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                       const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  gemm_f32(ta, tb, m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
}
inline void gemm_typed(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda,
                       const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  gemm_f64(ta, tb, m, n, k, 1.0, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace etc
