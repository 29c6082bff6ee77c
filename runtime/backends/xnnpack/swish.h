#pragma once
// Activations of native epilogues, 16 floats at a time with AVX-512F.
// x * sigmoid(x) = x / (1 + exp(-x)) for the native swish (stages.h): 16
// floats at a time with AVX-512F. exp is 2^n * p(r), x = n ln2 + r,
// |r| <= ln2 / 2, p the degree-6 Taylor polynomial (relative error below
// 2e-7); _mm512_scalef_ps saturates to 0 and infinity, so every finite x is
// handled, and swish of -inf and NaN is NaN as x * sigmoid(x) is.

#include <cstddef>

#if defined(__x86_64__)
#include <immintrin.h>

// GCC 12 reports the undefined pass-through operand of the AVX-512
// intrinsics as maybe-uninitialized.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace etc::xnnpack {

__attribute__((target("avx512f"))) inline __m512 swish_ps(__m512 x) {
  const __m512 t =
      _mm512_min_ps(_mm512_max_ps(_mm512_sub_ps(_mm512_setzero_ps(), x), _mm512_set1_ps(-104.0f)),
                    _mm512_set1_ps(89.0f));  // -x, clamped where exp saturates anyway
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
  const __m512 e = _mm512_scalef_ps(p, n);  // exp(-x)
  return _mm512_div_ps(x, _mm512_add_ps(_mm512_set1_ps(1.0f), e));
}

// x * clamp(x / 6 + 1/2, 0, 1), as XNNPACK's hardswish.
__attribute__((target("avx512f"))) inline __m512 hardswish_ps(__m512 x) {
  const __m512 gate = _mm512_fmadd_ps(x, _mm512_set1_ps(1.0f / 6.0f), _mm512_set1_ps(0.5f));
  return _mm512_mul_ps(x, _mm512_min_ps(_mm512_max_ps(gate, _mm512_setzero_ps()), _mm512_set1_ps(1.0f)));
}

}  // namespace etc::xnnpack

#pragma GCC diagnostic pop
#endif
