#pragma once
// The backend's own NHWC max pooling, for CPUs that run the native kernels
// (AVX-512F, or AVX2): each output pixel takes the maximum of its window's
// valid taps (padding taps are skipped, not read), 64 channels at a time
// with AVX-512 (32 with AVX2), then the node's output clamp. Runs of output
// pixels, about eight a thread, are shared between threads.
//
// XNNPACK's max pooling on x86 has 4-lane SSE kernels only: on Zen 5 at one
// thread googlenet's 13 max poolings took ~550 us under it, ~330 on this
// kernel (ONNX Runtime ~330); resnet50's stem pooling 150 and 115 (ORT
// 93). Under
// native_convolution=off, or without the native kernels, XNNPACK runs them.

#include <pthreadpool.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "runtime/backends/xnnpack/blob_reader.h"

namespace etc::xnnpack {

// Whether the kernel can compute a checked node: a MaxPooling2d without
// flags (TensorFlow SAME padding stays on XNNPACK), on a CPU that runs the
// native kernels.
bool max_pool_can_run_natively(const fb::Node& node);

// The taps of a window along one axis that fall inside the input: taps
// [first, end), tap k at input position origin + k * dilation.
struct PoolTaps {
  uint32_t first = 0, end = 0;
  int64_t origin = 0;
};

// A checked MaxPooling2d, in a form that outlives the blob: the valid taps
// of each output row's and column's window, planned once.
struct MaxPoolOp {
  uint32_t input = 0, output = 0;
  size_t batch = 0, in_h = 0, in_w = 0, channels = 0, out_h = 0, out_w = 0;
  size_t dilation_h = 1, dilation_w = 1;
  std::vector<PoolTaps> rows, columns;  // out_h and out_w of them
  float lo = 0, hi = 0;                 // the output clamp
};

// `node` must have passed check_node and max_pool_can_run_natively.
MaxPoolOp compile_max_pool(const BlobView& view, const fb::Node& node);

// `data[t]` is where tensor t lives (float32).
void run_max_pool(const MaxPoolOp& op, float* const* data, pthreadpool_t pool);

}  // namespace etc::xnnpack
