#pragma once
// The backend's own NHWC depthwise convolution for CPUs with AVX-512F, with
// what follows it folded into its epilogue (stages.h ConvOutput: a clamp,
// x * sigmoid(x), hardswish, a scalar affine, a residual Add), saving the
// second pass over memory XNNPACK needs. It takes every depthwise
// convolution it can run (depthwise_can_run_natively) unless
// native_convolution=off: on a 2-vCPU Zen 4 VM a 112x112x32 3x3 one with a
// hardswish took 125-134 us against 276 for XNNPACK's kernel and hardswish
// (mobilenet_v3_small 0.85x, efficientnet_b0 0.92x, mobilenet_v2 0.95x at
// 1 thread); without AVX-512F, or with native_convolution=off, XNNPACK
// runs them all.
//
// Each output pixel sums its taps for 16 channels per vector (padding rows
// are skipped, not read). Windows of 3, 5 or 7 columns of stride 1 or 2 go
// eight pixels a strip along the whole row: each kernel row's input vectors
// are loaded once for all eight, so multiply-adds outnumber loads; a strip
// at the row's ends takes padding columns as zero vectors (not loaded)
// and stores only the row's pixels. Other windows go four pixels at
// a time inside the row, sharing each weight load (8 accumulators for 32
// channels), the row's edges 64 channels a pixel, their padding taps
// skipped. Rows of output pixels are shared between threads.

#include <pthreadpool.h>

#include <memory>

#include "runtime/backends/xnnpack/blob_reader.h"
#include "runtime/backends/xnnpack/stages.h"
#include "runtime/core/result.h"

namespace etc::xnnpack {

// Whether the kernel can compute a checked node: a DepthwiseConvolution2d
// with a depth multiplier of 1, at most 64 taps and no flags, on a CPU with
// AVX-512F.
bool depthwise_can_run_natively(const fb::Node& node);

struct NativeDepthwise;
struct NativeDepthwiseDeleter {
  void operator()(NativeDepthwise* conv) const;
};
using NativeDepthwisePtr = std::unique_ptr<NativeDepthwise, NativeDepthwiseDeleter>;

// `node` must have passed check_node and depthwise_can_run_natively. Copies
// the filter and bias (reading the blob, so it runs at init). Errors:
// DelegateMemoryAllocationFailed.
Result<NativeDepthwisePtr> compile_native_depthwise(const BlobView& view, const fb::Node& node);

// Where the convolution stores and what its epilogue does (stages.h).
NativeEpilogue& epilogue(NativeDepthwise& conv);

// `data[t]` is where tensor t lives (float32).
void run_native_depthwise(const NativeDepthwise& conv, float* const* data, pthreadpool_t pool);

// The sizes a row-by-row producer of the input needs (NHWC; rows are
// output rows of all images in order, r = image * out_h + oy).
struct DepthwiseShape {
  size_t batch, in_h, in_w, channels, out_h, out_w;
  size_t kernel_h, stride_h, dilation_h, pad_top;
};
DepthwiseShape shape(const NativeDepthwise& conv);

// Output rows [first, first + count) on the calling thread, reading input
// row iy (of the row's image) from ring + (iy % ring_rows) * in_w *
// channels: every row the window of those output rows covers must be there.
void run_native_depthwise_rows(const NativeDepthwise& conv, float* const* data, const float* ring,
                               size_t ring_rows, size_t first, size_t count);

}  // namespace etc::xnnpack
