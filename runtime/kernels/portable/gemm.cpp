// Dispatch between the GEMM builds (gemm_isa.h): the AVX2 + FMA build when the
// CPU has both, else the baseline build. The choice is made once.
#include "runtime/kernels/portable/gemm.h"

#include "runtime/kernels/portable/gemm_eigen.h"
#include "runtime/kernels/portable/gemm_isa.h"

namespace etc {
namespace gemm_isa {

void gemm_f32_baseline(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                       const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                       int64_t ldc) {
  gemm_eigen<float>(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void gemm_f64_baseline(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
                       const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c,
                       int64_t ldc) {
  gemm_eigen<double>(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

bool avx2_supported() {
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

}  // namespace gemm_isa

namespace {

bool use_avx2() {
  static const bool use = gemm_isa::avx2_built() && gemm_isa::avx2_supported();
  return use;
}

}  // namespace

void gemm_f32(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
              int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  const auto gemm = use_avx2() ? gemm_isa::gemm_f32_avx2 : gemm_isa::gemm_f32_baseline;
  gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void gemm_f64(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
              int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  const auto gemm = use_avx2() ? gemm_isa::gemm_f64_avx2 : gemm_isa::gemm_f64_baseline;
  gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace etc
