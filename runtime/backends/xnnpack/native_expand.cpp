#include "runtime/backends/xnnpack/native_expand.h"

#include <algorithm>
#include <cstdint>

namespace etc::xnnpack {

Result<ExpandDepthwiseOp> compile_expand_depthwise(NativeConvPtr expand, NativeDepthwisePtr depthwise,
                                                   size_t threads) {
  ExpandDepthwiseOp op;
  const DepthwiseShape s = shape(*depthwise);
  op.ring_rows = (s.kernel_h - 1) * s.dilation_h + 1;
  op.chunks = std::max<size_t>(1, std::min(threads, s.batch * s.out_h));
  op.rings.resize(op.chunks);
  for (AlignedBuffer& ring : op.rings) {
    ring = AlignedBuffer::allocate(op.ring_rows * s.in_w * s.channels * sizeof(float));
    if (!ring)
      return fail(Error::DelegateMemoryAllocationFailed,
                  "xnnpack: cannot allocate the rows of an expansion streamed into a depthwise convolution");
  }
  op.expand = std::move(expand);
  op.depthwise = std::move(depthwise);
  return op;
}

namespace {

struct ChunkTask {
  const ExpandDepthwiseOp* op;
  float* const* data;
};

void run_chunk(void* context, size_t chunk) {
  const auto& [op, data] = *static_cast<const ChunkTask*>(context);
  const DepthwiseShape s = shape(*op->depthwise);
  const size_t total = s.batch * s.out_h;
  const size_t first = total * chunk / op->chunks, end = total * (chunk + 1) / op->chunks;
  float* ring = op->rings[chunk].as<float>();
  const size_t row_floats = s.in_w * s.channels;
  const float* x = data[input_tensor(*op->expand)];
  size_t image = SIZE_MAX;
  int64_t next = 0;  // the first input row of `image` not yet in the ring
  for (size_t r = first; r < end; ++r) {
    const size_t b = r / s.out_h, oy = r % s.out_h;
    // The window's input rows [top, bottom), within the image.
    const int64_t top = static_cast<int64_t>(oy * s.stride_h) - static_cast<int64_t>(s.pad_top);
    const int64_t lo = std::max<int64_t>(top, 0);
    const int64_t hi =
        std::min<int64_t>(top + static_cast<int64_t>(op->ring_rows), static_cast<int64_t>(s.in_h));
    if (b != image) image = b, next = lo;
    next = std::max(next, lo);
    for (; next < hi; ++next) {
      const auto iy = static_cast<size_t>(next);
      run_native_pointwise(*op->expand, x, (b * s.in_h + iy) * s.in_w, s.in_w,
                           ring + (iy % op->ring_rows) * row_floats);
    }
    run_native_depthwise_rows(*op->depthwise, data, ring, op->ring_rows, r, 1);
  }
}

}  // namespace

void run_expand_depthwise(const ExpandDepthwiseOp& op, float* const* data, pthreadpool_t pool) {
  ChunkTask task{&op, data};
  pthreadpool_parallelize_1d(pool, run_chunk, &task, op.chunks, 0);
}

}  // namespace etc::xnnpack
