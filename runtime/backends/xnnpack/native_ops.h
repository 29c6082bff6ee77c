#pragma once
// The blob's native nodes (xnnpack_blob.h is_native_node): data movement that
// this XNNPACK's subgraph API cannot express — concatenate, slice, channel
// shuffle — and the compute nodes of native_math.h, computed by the backend
// itself between XNNPACK subgraphs, so a partition need not end (and convert
// layout) at each of them. Convolutions the backend's own kernel takes
// (native_conv.h) and max poolings (native_pool.h) run as native ops too.
//
// check_native_node verifies one node of an untrusted blob; compile_native_op
// turns a checked node into a NativeOp that owns everything it needs after the
// blob is freed; run_native_op runs it on the shared pthreadpool. Running does
// not allocate.

#include <pthreadpool.h>

#include <cstddef>
#include <cstdint>
#include <variant>
#include <vector>

#include "runtime/backends/xnnpack/blob_reader.h"
#include "runtime/backends/xnnpack/native_conv.h"
#include "runtime/backends/xnnpack/native_deconv.h"
#include "runtime/backends/xnnpack/native_depthwise.h"
#include "runtime/backends/xnnpack/native_expand.h"
#include "runtime/backends/xnnpack/native_grouped.h"
#include "runtime/backends/xnnpack/native_math.h"
#include "runtime/backends/xnnpack/native_pool.h"
#include "runtime/core/result.h"

namespace etc::xnnpack {

// More inputs than this make a concatenate invalid.
inline constexpr size_t kMaxConcatInputs = 256;

// Errors: InvalidProgram naming the node, tensor and reason. On success the
// node's inputs and outputs exist and hold valid tensor ids.
Status check_native_node(const BlobView& view, const fb::Node& node, size_t index);

// A checked native node, in a form that outlives the blob: one struct per
// kind. Each copies `rows` rows; what a row is depends on the kind.

// Row r of the output is row r of each input in turn, input i contributing
// row_elements[i] floats. in_place: inputs a native convolution already
// wrote into the output (stages.h ConvOutput); empty when none.
struct ConcatenateOp {
  std::vector<uint32_t> inputs;  // tensor ids
  uint32_t output = 0;
  size_t rows = 0;
  std::vector<size_t> row_elements;
  std::vector<bool> in_place;
};

// Output row r (of row_elements floats) starts at input element start +
// sum_d index_d(r) * in_stride[d], for d over the output's outer dimensions
// (out_dims: the output's dims without the last).
struct SliceOp {
  uint32_t input = 0, output = 0;
  size_t rows = 0, row_elements = 0, start = 0;
  std::vector<size_t> out_dims, in_stride;
};

// One row per pixel: `channels` floats in `groups` groups, transposed.
struct ChannelShuffleOp {
  uint32_t input = 0, output = 0;
  size_t rows = 0, channels = 0, groups = 1;
};

// y = x * sigmoid(x) over `total` floats, in rows of row_elements (the last
// one shorter) that split the work for threads.
struct SwishOp {
  uint32_t input = 0, output = 0;
  size_t rows = 0, row_elements = 0, total = 0;
};

// A Convolution2d (or FullyConnected) run by native_conv.h.
struct ConvolutionOp {
  NativeConvPtr conv;
};

// A Deconvolution2d run by native_deconv.h.
struct DeconvolutionOp {
  NativeDeconvPtr deconv;
};

// A DepthwiseConvolution2d run by native_depthwise.h.
struct DepthwiseOp {
  NativeDepthwisePtr conv;
};

// A Convolution2d of several groups run by native_grouped.h.
struct GroupedOp {
  NativeGroupedPtr conv;
};

using NativeOp = std::variant<ConcatenateOp, SliceOp, ChannelShuffleOp, SwishOp, ConvolutionOp,
                              DeconvolutionOp, DepthwiseOp, GroupedOp, ExpandDepthwiseOp, MaxPoolOp,
                              TransposeOp, BatchMatMulOp, AxisSoftmaxOp, LayerNormOp, ReduceOp, UnaryMathOp,
                              ResizeNearestOp, ChannelScaleOp, ResizeBilinearNchwOp>;

// x * sigmoid(x) of tensor x into tensor y (same element count), in one
// pass (stages.h swish_input); needs native_convolution_available().
NativeOp swish_op(const BlobView& view, uint32_t x, uint32_t y);

// `conv` says how convolutions are built. Errors:
// DelegateMemoryAllocationFailed.
Result<NativeOp> compile_native_op(const BlobView& view, const fb::Node& node,
                                   const NativeConvOptions& conv = {});

// `data[t]` is where tensor t lives (float32).
void run_native_op(const NativeOp& op, float* const* data, pthreadpool_t pool);

}  // namespace etc::xnnpack
