#pragma once
// Elementwise float functions over arrays, on Eigen's vectorised
// implementations (rational and polynomial approximations within a few ulp),
// compiled twice: for the project's baseline ISA and for AVX-512
// (vector_math_avx512.cpp); the first call picks the build this CPU runs.
// Used by the recurrent kernels' gates and the XNNPACK delegate's native
// unary nodes.

#include <cstdint>

namespace etc {

enum class VectorFn {
  Tanh,
  Sigmoid,  // 1 / (1 + e^-x), as (1 + tanh(x / 2)) / 2
  Erf,
  Exp,
  Log,
  Gelu,      // x/2 · (1 + erf(x / √2))
  GeluTanh,  // x/2 · (1 + tanh(√(2/π) · (x + 0.044715 x³)))
  Reciprocal,
  Softplus,  // log(1 + e^x), as max(x, 0) + log1p(e^-|x|): never overflows
};

// y[i] = f(x[i]) for i < n; y may be x.
void vector_math(VectorFn f, const float* x, float* y, int64_t n);

namespace vector_math_isa {
// The two builds, for tests that check they agree.
void run_baseline(VectorFn f, const float* x, float* y, int64_t n);
void run_avx512(VectorFn f, const float* x, float* y, int64_t n);  // only when avx512_usable()
bool avx512_built();   // vector_math_avx512.cpp was compiled for AVX-512
bool avx512_usable();  // ... and this CPU has it
}  // namespace vector_math_isa

}  // namespace etc
