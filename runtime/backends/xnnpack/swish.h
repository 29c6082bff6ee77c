#pragma once
// Activations of native epilogues, 16 floats at a time with AVX-512F and 8
// with AVX2 + FMA3, and the exp they and the native softmax share.
// exp(t) is 2^n * p(r), t = n ln2 + r, |r| <= ln2 / 2, p the degree-6
// Taylor polynomial (relative error below 2e-7), t first clamped to where
// exp saturates anyway (a NaN stays NaN: max and min return their second
// operand when either is NaN); _mm512_scalef_ps saturates to 0 and infinity, so
// every finite t is handled. x * sigmoid(x) = x / (1 + exp(-x)) for the
// native swish (stages.h): swish of -inf and NaN is NaN as x * sigmoid(x)
// is.

#include <cstddef>

#if defined(__x86_64__)
#include <immintrin.h>

// GCC 12 reports the undefined pass-through operand of the AVX-512
// intrinsics as maybe-uninitialized.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace etc::xnnpack {

__attribute__((target("avx512f"))) inline __m512 exp_ps(__m512 t) {
  t = _mm512_min_ps(_mm512_set1_ps(89.0f), _mm512_max_ps(_mm512_set1_ps(-104.0f), t));  // NaN stays NaN
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(t, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693145751953125f), t);  // ln2, high bits
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(1.428606765330187045e-06f), r);  // ln2, low bits
  __m512 p = _mm512_set1_ps(1.0f / 720.0f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, n);
}

__attribute__((target("avx512f"))) inline __m512 swish_ps(__m512 x) {
  const __m512 e = exp_ps(_mm512_sub_ps(_mm512_setzero_ps(), x));  // exp(-x)
  return _mm512_div_ps(x, _mm512_add_ps(_mm512_set1_ps(1.0f), e));
}

// x * clamp(x / 6 + 1/2, 0, 1), as XNNPACK's hardswish.
__attribute__((target("avx512f"))) inline __m512 hardswish_ps(__m512 x) {
  const __m512 gate = _mm512_fmadd_ps(x, _mm512_set1_ps(1.0f / 6.0f), _mm512_set1_ps(0.5f));
  return _mm512_mul_ps(x, _mm512_min_ps(_mm512_max_ps(gate, _mm512_setzero_ps()), _mm512_set1_ps(1.0f)));
}

// The same 8 floats at a time with AVX2 + FMA3. Without scalef, 2^n is
// built in the exponent field, so t is clamped to [-87, 89]: 2^n stays a
// normal float below and is infinity at the top (swish of -inf is NaN as
// above); swish of x > 87 is x either way.
__attribute__((target("avx2,fma"))) inline __m256 exp_ps(__m256 t) {
  t = _mm256_min_ps(_mm256_set1_ps(89.0f), _mm256_max_ps(_mm256_set1_ps(-87.0f), t));  // NaN stays NaN
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(t, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693145751953125f), t);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(1.428606765330187045e-06f), r);
  __m256 p = _mm256_set1_ps(1.0f / 720.0f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  const __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(bits));
}

__attribute__((target("avx2,fma"))) inline __m256 swish_ps(__m256 x) {
  const __m256 e = exp_ps(_mm256_sub_ps(_mm256_setzero_ps(), x));  // exp(-x)
  return _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}

__attribute__((target("avx2,fma"))) inline __m256 hardswish_ps(__m256 x) {
  const __m256 gate = _mm256_fmadd_ps(x, _mm256_set1_ps(1.0f / 6.0f), _mm256_set1_ps(0.5f));
  return _mm256_mul_ps(x, _mm256_min_ps(_mm256_max_ps(gate, _mm256_setzero_ps()), _mm256_set1_ps(1.0f)));
}

}  // namespace etc::xnnpack

#pragma GCC diagnostic pop
#endif
