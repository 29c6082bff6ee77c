#pragma once
// The epilogue of the native depthwise and grouped convolutions on 16 lanes
// (AVX-512F), and the dispatch to their kernels specialised for a residual
// and an activation (stages.h NativeEpilogue).

#include "runtime/backends/xnnpack/stages.h"
#include "runtime/backends/xnnpack/swish.h"

namespace etc::xnnpack {

// Calls f.template operator()<Residual, Act>() for `residual` and `act`.
template <typename F>
void with_epilogue(ConvActivation act, bool residual, F&& f) {
  using A = ConvActivation;
  switch (act) {
    case A::kSwish:
      residual ? f.template operator()<true, A::kSwish>() : f.template operator()<false, A::kSwish>();
      break;
    case A::kHardSwish:
      residual ? f.template operator()<true, A::kHardSwish>() : f.template operator()<false, A::kHardSwish>();
      break;
    default:
      residual ? f.template operator()<true, A::kNone>() : f.template operator()<false, A::kNone>();
      break;
  }
}

#if defined(__x86_64__)
// Sums already clamped to the convolution's range, then: plus `res` (read
// only where Residual) clamped to the residual's range, the activation, the
// affine.
template <bool Residual, ConvActivation Act>
__attribute__((target("avx512f"))) inline __m512 finish_ps(const NativeEpilogue& e, __m512 r, __m512 res) {
  if constexpr (Residual)
    r = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(r, res), _mm512_set1_ps(e.residual_lo)),
                      _mm512_set1_ps(e.residual_hi));
  if constexpr (Act == ConvActivation::kSwish) r = swish_ps(r);
  if constexpr (Act == ConvActivation::kHardSwish) r = hardswish_ps(r);
  if (e.affine) r = _mm512_fmadd_ps(r, _mm512_set1_ps(e.scale), _mm512_set1_ps(e.shift));
  return r;
}
#endif

}  // namespace etc::xnnpack
