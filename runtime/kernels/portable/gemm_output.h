#pragma once
// The output pass of the GEMM-shaped kernels (conv, gemm, matmul): after the
// GEMM has written a block of the output, one pass adds the per-row bias and
// applies the fused activation while the block is still in cache.

#include <cstdint>
#include <limits>

namespace etc {

// A fused clamp activation: relu is [0, inf), relu6 / clip is [min, max].
// Values are clamped like the clip kernel (NaN stays NaN).
struct OutputClamp {
  float lo = -std::numeric_limits<float>::infinity();
  float hi = std::numeric_limits<float>::infinity();

  bool active() const {
    return lo != -std::numeric_limits<float>::infinity() || hi != std::numeric_limits<float>::infinity();
  }
};

// The compare-selects map onto max/min instructions and keep NaN, like the clip kernel.
template <typename T>
inline T clamp_value(T v, T lo, T hi) {
  v = v < lo ? lo : v;
  return v > hi ? hi : v;
}

// For each of `rows` rows of `cols` elements (row r at y + r * ld): adds bias[r]
// when bias is non-null, then clamps when `clamp` is active. Does nothing when
// there is neither.
template <typename T>
void bias_clamp_rows(T* y, int64_t rows, int64_t cols, int64_t ld, const T* bias, const OutputClamp& clamp) {
  const bool do_clamp = clamp.active();
  if (!bias && !do_clamp) return;
  const T lo = static_cast<T>(clamp.lo), hi = static_cast<T>(clamp.hi);
  for (int64_t r = 0; r < rows; ++r) {
    T* row = y + r * ld;
    if (!do_clamp) {
      const T b = bias[r];
      for (int64_t i = 0; i < cols; ++i) row[i] += b;
    } else if (bias) {
      const T b = bias[r];
      for (int64_t i = 0; i < cols; ++i) row[i] = clamp_value(row[i] + b, lo, hi);
    } else {
      for (int64_t i = 0; i < cols; ++i) row[i] = clamp_value(row[i], lo, hi);
    }
  }
}

}  // namespace etc
