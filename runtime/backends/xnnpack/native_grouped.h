#pragma once
// The backend's own NHWC grouped convolution for CPUs with AVX-512F (ResNeXt
// and RegNet blocks: many groups of 2 to 64 channels), with the epilogue of
// the other native convolutions (stages.h NativeEpilogue). XNNPACK runs a
// grouped convolution as one small GEMM a group, whose narrow panels (4 or
// 8 output channels) leave most of each vector idle.
//
// Here each 16-lane output vector covers whole groups of G = 2, 4 or 8
// channels: lane l of the vector at channel c0 reads input channel
// c0 + (l / G) * G + i at step i < G, one permute of the pixel's 16-channel
// input vector, then one multiply-add; four output pixels side by side
// share the weight load. Rows of output pixels are shared between threads.
// Taken where grouped_can_run_natively holds, unless native_convolution=off.
// Groups of 16 channels or more stay with XNNPACK, whose per-group GEMM
// reuses each weight over more pixels (ResNeXt-50's 14x14 and 7x7 layers ran
// 25-130% slower here).

#include <pthreadpool.h>

#include <memory>

#include "runtime/backends/xnnpack/blob_reader.h"
#include "runtime/backends/xnnpack/stages.h"
#include "runtime/core/result.h"

namespace etc::xnnpack {

// Whether the kernel can compute a checked node: a Convolution2d of more
// than one group, as many output channels as input channels in each, a
// group width G of 2, 4 or 8, a channel count that is a multiple of 16, at
// most 64 taps, no flags, on a CPU with AVX-512F.
bool grouped_can_run_natively(const fb::Node& node);

struct NativeGrouped;
struct NativeGroupedDeleter {
  void operator()(NativeGrouped* conv) const;
};
using NativeGroupedPtr = std::unique_ptr<NativeGrouped, NativeGroupedDeleter>;

// `node` must have passed check_node and grouped_can_run_natively. Lays the
// filter out for the kernel (reading the blob, so it runs at init). Errors:
// DelegateMemoryAllocationFailed.
Result<NativeGroupedPtr> compile_native_grouped(const BlobView& view, const fb::Node& node);

NativeEpilogue& epilogue(NativeGrouped& conv);

// `data[t]` is where tensor t lives (float32).
void run_native_grouped(const NativeGrouped& conv, float* const* data, pthreadpool_t pool);

}  // namespace etc::xnnpack
