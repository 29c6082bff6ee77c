#pragma once
// A pointwise convolution whose output only a depthwise convolution reads
// (the expansion of mobilenet's and efficientnet's inverted residual
// blocks), run as one native op: each thread takes a range of the depthwise
// convolution's output rows and computes the expansion's rows just before
// the window first covers them, into a ring of kernel-height rows of its
// own that stays in cache. The expanded tensor, the block's largest (6x its
// input), is then never written to memory and read back.
//
// Threads recompute the expanded rows their ranges share (kernel height
// minus stride rows per boundary); a single thread computes each row once.

#include <pthreadpool.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "runtime/backends/xnnpack/native_conv.h"
#include "runtime/backends/xnnpack/native_depthwise.h"
#include "runtime/core/aligned_buffer.h"
#include "runtime/core/result.h"

namespace etc::xnnpack {

struct ExpandDepthwiseOp {
  NativeConvPtr expand;
  NativeDepthwisePtr depthwise;
  size_t ring_rows = 0, chunks = 1;
  std::vector<AlignedBuffer> rings;  // one per chunk of output rows
};

// `expand` must be pointwise (native_conv.h is_pointwise) with as many
// output channels as `depthwise` has, and pixels in the depthwise
// convolution's input shape; both with their epilogues applied. `threads`:
// the pool's (1 on the calling thread). Errors:
// DelegateMemoryAllocationFailed.
Result<ExpandDepthwiseOp> compile_expand_depthwise(NativeConvPtr expand, NativeDepthwisePtr depthwise,
                                                   size_t threads);

// `data[t]` is where tensor t lives (float32).
void run_expand_depthwise(const ExpandDepthwiseOp& op, float* const* data, pthreadpool_t pool);

}  // namespace etc::xnnpack
