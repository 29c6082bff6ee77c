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

// One call's operands: x, w, optional bias, y and the scratch, with the
// batch image n of x and y and its channel group grp.
template <typename T>
struct ConvOperands {
  const T* x;
  const T* w;
  const T* bias;  // null without a bias input
  T* y;
  T* col;  // the kernel scratch
  int64_t x_image_size;
  int64_t y_image_size;
  int64_t x_group_size;
  int64_t y_group_size;

  const T* x_image(int64_t n) const { return x + n * x_image_size; }
  T* y_image(int64_t n) const { return y + n * y_image_size; }
  const T* x_group(int64_t n, int64_t grp) const { return x_image(n) + grp * x_group_size; }
  T* y_group(int64_t n, int64_t grp) const { return y_image(n) + grp * y_group_size; }
};

template <typename T>
ConvOperands<T> conv_operands(const ConvParams& p, const KernelArgs& args) {
  return {args.inputs[0]->data_as<const T>(),
          args.inputs[1]->data_as<const T>(),
          p.has_bias ? args.inputs[2]->data_as<const T>() : nullptr,
          args.outputs[0]->data_as<T>(),
          static_cast<T*>(args.scratch),
          p.in_channels * p.g.in_size(),
          p.out_channels * p.g.out_size(),
          p.in_channels / p.group * p.g.in_size(),
          p.out_channels / p.group * p.g.out_size()};
}

}  // namespace etc
