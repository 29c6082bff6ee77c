#include "runtime/kernels/portable/vector_math.h"

#include "runtime/kernels/portable/vector_math_eigen.h"

namespace etc {

namespace vector_math_isa {
void run_baseline(VectorFn f, const float* x, float* y, int64_t n) { vector_math_eigen(f, x, y, n); }

bool avx512_usable() {
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
  return avx512_built() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
#else
  return false;
#endif
}
}  // namespace vector_math_isa

void vector_math(VectorFn f, const float* x, float* y, int64_t n) {
  static const bool avx512 = vector_math_isa::avx512_usable();
  (avx512 ? vector_math_isa::run_avx512 : vector_math_isa::run_baseline)(f, x, y, n);
}

}  // namespace etc
