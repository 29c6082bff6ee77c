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

namespace {

// The Eigen GEMM of this file's build; the baseline one where this file could
// not be built for AVX2 (avx2_built() then keeps callers away).
template <typename T>
void gemm_here(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
               const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
#if ETC_GEMM_AVX2_BUILT
  gemm_eigen<T>(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
#else
  if constexpr (sizeof(T) == sizeof(float))
    gemm_f32_baseline(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  else
    gemm_f64_baseline(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
#endif
}

}  // namespace

void gemm_f32_avx2(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                   int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  gemm_here<float>(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void gemm_f64_avx2(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
                   int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  gemm_here<double>(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace etc::gemm_isa
