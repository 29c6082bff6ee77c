#pragma once
// The backend's own deconvolution for CPUs with AVX-512F or AVX2 + FMA3 (as
// native_conv.h), for the case the
// upsampling heads of feature pyramids and segmentation networks use: kernel
// equal to stride, no padding, adjustment or dilation (2x2 stride 2). Each
// output pixel then takes exactly one tap, so the deconvolution is a GEMM of
// the input's pixels by each tap's filter on the native convolution's
// micro-kernel (native_conv.h native_gemm_panel), stored straight into that
// tap's pixels; where taps x output channels fit one 32-channel panel (a
// one-channel map), one GEMM computes every tap through a scratch tile.
// Every other deconvolution, and every CPU without either, stays on
// XNNPACK.

#include <pthreadpool.h>

#include <memory>

#include "runtime/backends/xnnpack/blob_reader.h"
#include "runtime/core/result.h"

namespace etc::xnnpack {

// Whether a checked Deconvolution2d runs natively: one group, no flags,
// kernel equal to stride, no padding, adjustment or dilation, on a CPU
// with the native convolution (native_convolution_available; PP-OCRv4
// det's 24->24 and 24->1 ones: 2.7 -> 1.9 and 3.3 -> 2.8 ms against
// XNNPACK with AVX-512).
bool deconv_runs_natively(const fb::Node& node);

struct NativeDeconv;
struct NativeDeconvDeleter {
  void operator()(NativeDeconv* deconv) const;
};
using NativeDeconvPtr = std::unique_ptr<NativeDeconv, NativeDeconvDeleter>;

// `node` must have passed check_node and deconv_runs_natively. Packs the
// filter and bias (reading the blob, so it runs at init). Errors:
// DelegateMemoryAllocationFailed, Internal when the output is not the input
// times the kernel.
Result<NativeDeconvPtr> compile_native_deconv(const BlobView& view, const fb::Node& node);

// `data[t]` is where tensor t lives (float32).
void run_native_deconv(const NativeDeconv& deconv, float* const* data, pthreadpool_t pool);

}  // namespace etc::xnnpack
