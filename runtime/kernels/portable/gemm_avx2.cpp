// The GEMM compiled for AVX2 + FMA (CMake sets -mavx2 -mfma on this file only).
// Renaming the Eigen namespace gives every Eigen template instantiated here a
// mangled name of its own, so the linker cannot pick an AVX2 copy for the
// baseline build's callers; gemm.cpp calls in only after checking the CPU.
#include "runtime/kernels/portable/gemm_isa.h"

#if defined(__AVX2__) && defined(__FMA__)
#define Eigen etc_eigen_avx2
#include "runtime/kernels/portable/gemm_eigen.h"
#undef Eigen
#define ETC_GEMM_AVX2_BUILT 1
#else
#define ETC_GEMM_AVX2_BUILT 0
#endif

namespace etc::gemm_isa {

bool avx2_built() { return ETC_GEMM_AVX2_BUILT != 0; }

void gemm_f32_avx2(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                   int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
#if ETC_GEMM_AVX2_BUILT
  gemm_eigen<float>(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
#else
  gemm_f32_baseline(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
#endif
}

void gemm_f64_avx2(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
                   int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
#if ETC_GEMM_AVX2_BUILT
  gemm_eigen<double>(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
#else
  gemm_f64_baseline(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
#endif
}

}  // namespace etc::gemm_isa
