#include "runtime/kernels/portable/gemm.h"

#define EIGEN_DONT_PARALLELIZE
#include <Eigen/Core>

namespace etc {
namespace {

template <typename T>
void gemm_impl(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
               int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  using RowMat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using ColMat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
  using Stride = Eigen::OuterStride<>;
  Eigen::Map<RowMat, 0, Stride> cm(c, m, n, Stride(ldc));
  if (m == 0 || n == 0) return;
  if (k == 0) {
    if (beta == T(0)) cm.setZero();
    else cm *= beta;
    return;
  }
  // A transposed row-major matrix is the same memory read column-major.
  auto run = [&](const auto& am, const auto& bm) {
    if (beta == T(0)) {
      cm.noalias() = alpha * (am * bm);
    } else {
      cm *= beta;
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

void gemm_f32(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
              const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
              int64_t ldc) {
  gemm_impl<float>(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void gemm_f64(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
              const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c,
              int64_t ldc) {
  gemm_impl<double>(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace etc
