#pragma once
// The Eigen GEMM body shared by gemm.cpp (baseline ISA) and gemm_avx2.cpp
// (-mavx2 -mfma). Include it from exactly those two files. Everything here has
// internal linkage, and gemm_avx2.cpp renames the Eigen namespace before
// including it, so no template or inline function compiled for AVX2 can be
// merged by the linker into the baseline code path (or the reverse).

#include <cstdint>

#define EIGEN_DONT_PARALLELIZE
#include <Eigen/Core>

namespace etc {
namespace {

// C[M,N] = alpha * op(A) * op(B) + beta * C, row-major; see gemm.h.
template <typename T>
void gemm_eigen(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
                const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  using RowMat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using ColMat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
  using Stride = Eigen::OuterStride<>;
  Eigen::Map<RowMat, 0, Stride> cm(c, m, n, Stride(ldc));
  if (m == 0 || n == 0) return;
  if (k == 0) {
    if (beta == T(0))
      cm.setZero();
    else if (beta != T(1))
      cm *= beta;
    return;
  }
  // A transposed row-major matrix is the same memory read column-major.
  auto run = [&](const auto& am, const auto& bm) {
    if (beta == T(0)) {
      cm.noalias() = alpha * (am * bm);
    } else {
      if (beta != T(1)) cm *= beta;
      cm.noalias() += alpha * (am * bm);
    }
  };
  if (!trans_a && !trans_b) {
    run(Eigen::Map<const RowMat, 0, Stride>(a, m, k, Stride(lda)),
        Eigen::Map<const RowMat, 0, Stride>(b, k, n, Stride(ldb)));
  } else if (!trans_a && trans_b) {
    run(Eigen::Map<const RowMat, 0, Stride>(a, m, k, Stride(lda)),
        Eigen::Map<const ColMat, 0, Stride>(b, k, n, Stride(ldb)));
  } else if (trans_a && !trans_b) {
    run(Eigen::Map<const ColMat, 0, Stride>(a, m, k, Stride(lda)),
        Eigen::Map<const RowMat, 0, Stride>(b, k, n, Stride(ldb)));
  } else {
    run(Eigen::Map<const ColMat, 0, Stride>(a, m, k, Stride(lda)),
        Eigen::Map<const ColMat, 0, Stride>(b, k, n, Stride(ldb)));
  }
}

}  // namespace
}  // namespace etc
