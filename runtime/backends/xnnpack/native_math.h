#pragma once
// The blob's native compute nodes (xnnpack_blob.fbs): what transformers,
// recurrent heads and detectors need that this XNNPACK's subgraph API lacks —
// a transpose of any rank, a batched matrix product of two activations (with
// the transposes around it folded into strides), softmax along any axis,
// layer normalisation, reductions, elementwise functions (tanh, erf, gelu…)
// and nearest-neighbour resize. native_ops.h dispatches to them; like the
// other native nodes they run between XNNPACK subgraphs on the shared
// pthreadpool and never allocate while running.
//
// Reductions (softmax denominators, layer-norm statistics, Reduce) sum in
// blocks, so their rounding error grows with the logarithm of the length,
// not the length.

#include <pthreadpool.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "runtime/backends/xnnpack/blob_reader.h"
#include "runtime/core/result.h"

namespace etc::xnnpack {

// Output index (i_0 .. i_{r-1}) reads input element sum_j i_j * in_stride[j].
// Dims of size 1 are dropped and runs of dims that stay contiguous merged.
struct TransposeOp {
  uint32_t input = 0, output = 0;
  std::vector<size_t> out_dims, in_stride;
  size_t rows = 0;  // product of all out_dims but the last
};

// One operand's addressing: a stride per batch dim, then row and column.
struct MatrixStrides {
  std::vector<size_t> batch;
  size_t row = 0, col = 0;
};

struct BatchMatMulOp {
  uint32_t a = 0, b = 0, c = 0;
  std::vector<size_t> batch;  // batch dims
  size_t batches = 1, m = 0, n = 0, k = 0;
  MatrixStrides sa, sb, sc;
  size_t m_tile = 0;
  // On the convolution's micro-kernel (native_matmul.h), B packed into
  // `packed` (scratch the delegate's products share, given before the
  // first run); otherwise on the portable GEMM.
  bool on_kernel = false;
  float* packed = nullptr;
};

// Along the middle of (outer, n, inner).
struct AxisSoftmaxOp {
  uint32_t input = 0, output = 0;
  size_t outer = 0, n = 0, inner = 0;
  bool log = false;
  // Rows of the last axis (inner 1) on vector code (native_rows.h).
  bool vector_rows = false;
};

struct LayerNormOp {
  uint32_t input = 0, scale = 0, output = 0;
  int64_t bias = -1;
  size_t rows = 0, width = 0;
  float epsilon = 0;
  bool vector_rows = false;  // rows on vector code (native_rows.h)
};

// Over the middle of (outer, n, inner); the output is (outer, inner).
struct ReduceOp {
  uint32_t input = 0, output = 0;
  size_t outer = 0, n = 0, inner = 0;
  fb::ReduceOp op = fb::ReduceOp::Mean;
};

struct UnaryMathOp {
  uint32_t input = 0, output = 0;
  size_t total = 0;
  fb::UnaryOp op = fb::UnaryOp::Tanh;
};

struct ResizeNearestOp {
  uint32_t input = 0, output = 0;
  size_t batch = 0, in_h = 0, in_w = 0, channels = 0;
  std::vector<size_t> rows, cols;  // source row of each output row, column of each column
  // With an addend (a folded Add, stages.h ConvOutput::residual): output =
  // clamp(resized + addend, lo, hi), the addend laid out as the output.
  int64_t addend = -1;
  float lo = -INFINITY, hi = INFINITY;
};

// A StaticResizeBilinear2d whose output is a delegate output in NCHW: it
// reads the NHWC input and writes the argument's NCHW layout itself
// (stages.h StagePlan::nchw_output), so the output needs no staging buffer
// and no transpose after the run. Per output row y, input rows y0 and y1
// with weights wy0, wy1; per output column the same along x (the portable
// kernel's sampling plan, runtime/kernels/portable/resize_plan.h).
struct ResizeBilinearNchwOp {
  uint32_t input = 0, output = 0;
  size_t batch = 0, in_h = 0, in_w = 0, channels = 0, out_h = 0, out_w = 0;
  std::vector<uint32_t> y0, y1, x0, x1;
  std::vector<float> wy0, wy1, wx0, wx1;
};

// y[b, p, c] = clamp(x[b, p, c] * s[b * s_batch_stride + c]) over batches b,
// pixels p (every middle dim) and channels c.
struct ChannelScaleOp {
  uint32_t input = 0, scale = 0, output = 0;
  size_t batch = 0, pixels = 0, channels = 0, s_batch_stride = 0;
  float lo = -INFINITY, hi = INFINITY;
};

// Errors: InvalidProgram naming the node, tensor and reason. Called by
// check_native_node after it checked arity and tensor ids.
Status check_math_node(const BlobView& view, const fb::Node& node, size_t index);

TransposeOp compile_transpose(const BlobView& view, const fb::Node& node);
BatchMatMulOp compile_batch_matmul(const BlobView& view, const fb::Node& node);
AxisSoftmaxOp compile_axis_softmax(const BlobView& view, const fb::Node& node);
// XNNPACK's Softmax (the last axis), when the backend runs it itself
// (native_rows.h softmax_runs_natively).
AxisSoftmaxOp compile_last_axis_softmax(const BlobView& view, const fb::Node& node);
LayerNormOp compile_layer_norm(const BlobView& view, const fb::Node& node);
ReduceOp compile_reduce(const BlobView& view, const fb::Node& node);
UnaryMathOp compile_unary_math(const BlobView& view, const fb::Node& node);
ResizeNearestOp compile_resize_nearest(const BlobView& view, const fb::Node& node);
ChannelScaleOp compile_channel_scale(const BlobView& view, const fb::Node& node);
// `node` a checked StaticResizeBilinear2d with input width and height at
// least 1.
ResizeBilinearNchwOp compile_resize_bilinear_nchw(const BlobView& view, const fb::Node& node);

// `data[t]` is where tensor t lives (float32).
void run_math_op(const TransposeOp& op, float* const* data, pthreadpool_t pool);
void run_math_op(const BatchMatMulOp& op, float* const* data, pthreadpool_t pool);
void run_math_op(const AxisSoftmaxOp& op, float* const* data, pthreadpool_t pool);
void run_math_op(const LayerNormOp& op, float* const* data, pthreadpool_t pool);
void run_math_op(const ReduceOp& op, float* const* data, pthreadpool_t pool);
void run_math_op(const UnaryMathOp& op, float* const* data, pthreadpool_t pool);
void run_math_op(const ResizeNearestOp& op, float* const* data, pthreadpool_t pool);
void run_math_op(const ChannelScaleOp& op, float* const* data, pthreadpool_t pool);
void run_math_op(const ResizeBilinearNchwOp& op, float* const* data, pthreadpool_t pool);

// The sum of x[0], x[stride], ... (n terms), in blocks: error O(log n).
float blocked_sum(const float* x, size_t n, size_t stride = 1);

}  // namespace etc::xnnpack
