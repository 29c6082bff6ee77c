#pragma once
// Internal to the conv kernel family: what conv.cpp (shape functions, op
// defs) hands to the kernels in conv_forward.cpp and conv_transpose.cpp, and
// the im2col / col2im helpers they share.

#include <cstdint>
#include <memory>

#include "runtime/core/dtype.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/portable/conv_geometry.h"
#include "runtime/kernels/portable/gemm.h"
#include "runtime/kernels/portable/gemm_output.h"

namespace etc {

struct ConvParams {
  WindowGeometry g;  // for conv_transpose, `in` and `out` are the op's input and output
  int64_t batch = 1;
  int64_t in_channels = 1;
  int64_t out_channels = 1;
  int64_t group = 1;
  bool has_bias = false;
  OutputClamp clamp;  // fused activation (conv only): attributes clamp_min / clamp_max
};

// Kernels for float32 or float64 (infer rejects other dtypes).
std::unique_ptr<Kernel> make_conv_kernel(DType dtype, const ConvParams& p);
std::unique_ptr<Kernel> make_conv_transpose_kernel(DType dtype, const ConvParams& p);

// Writes the im2col rows of `channels` input channels (each g.in_size()
// elements, contiguous) for the output lines [line_begin, line_end), where a
// line is one (out[0], out[1]) pair of out[2] positions. Row r = (c, kernel
// offset) holds (line_end - line_begin) * out[2] values; padding reads as 0.
template <typename T>
void im2col(const WindowGeometry& g, const T* x, int64_t channels, int64_t line_begin, int64_t line_end,
            T* col);

// Adds the columns of `col` ([channels * kernel_size, in_size], the conv_transpose
// GEMM result) into `y` ([channels, out_size]), dropping cropped positions.
template <typename T>
void col2im(const WindowGeometry& g, const T* col, int64_t channels, T* y);

// Sets each of `channels` rows of `size` elements of y to bias[c].
template <typename T>
void fill_bias(const T* bias, int64_t channels, int64_t size, T* y) {
  for (int64_t c = 0; c < channels; ++c) {
    T* row = y + c * size;
    const T b = bias[c];
    for (int64_t i = 0; i < size; ++i) row[i] = b;
  }
}

inline void gemm_typed(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                       const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  gemm_f32(ta, tb, m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
}
inline void gemm_typed(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda,
                       const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  gemm_f64(ta, tb, m, n, k, 1.0, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace etc
