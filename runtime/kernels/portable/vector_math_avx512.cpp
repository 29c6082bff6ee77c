// vector_math built for AVX-512 (CMake sets -mavx512f -mavx512dq -mfma on this
// file only); vector_math.cpp calls in only after avx512_usable().
#include "runtime/kernels/portable/vector_math.h"

#if defined(__AVX512F__) && defined(__AVX512DQ__) && defined(__FMA__)
#define Eigen etc_eigen_avx512
#include "runtime/kernels/portable/vector_math_eigen.h"
#undef Eigen
#define ETC_VECTOR_MATH_AVX512 1
#else
#define ETC_VECTOR_MATH_AVX512 0
#endif

namespace etc::vector_math_isa {

bool avx512_built() { return ETC_VECTOR_MATH_AVX512 != 0; }

void run_avx512(VectorFn f, const float* x, float* y, int64_t n) {
#if ETC_VECTOR_MATH_AVX512
  vector_math_eigen(f, x, y, n);
#else
  run_baseline(f, x, y, n);
#endif
}

}  // namespace etc::vector_math_isa
