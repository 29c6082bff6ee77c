#pragma once
// An XNNPACK blob at other input sizes (bounded dynamic shapes). The blob
// is written for the largest sizes; resize_graph gives every activation the
// dims that follow from new delegate input dims, node by node as XNNPACK's
// operators and the native nodes compute them, and rewrites the parameters
// that hold sizes:
//   StaticReshape           new_shape, with `infer_dim` taking what the
//                           other dims leave, or the input's dims in `perm`
//                           order (a layout change of a one-channel tensor)
//   StaticResizeBilinear2d  new_shape = floor(input * scales) with `scales`
//   ResizeNearest           the same, and the source indices recomputed with
//                           the blob's coordinate and nearest modes
//   Slice                   output dims listed in `to_end` run to the input's end
//   BatchMatMul             strides, mnk and batch from `stride_axes`
// Everything else keeps its parameters. The result is a blob graph like any
// other: the runtime reads and checks it (blob_reader.h) before use, and
// the compiler checks, at the smallest and middle sizes of the ranges, that
// resizing the largest blob gives the blob compiled for that size.
//
// Only flatbuffers and the resize sampling plan are used, so the compiler
// (which does not link XNNPACK) shares this code.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/backends/xnnpack/xnnpack_blob.h"
#include "runtime/core/result.h"

namespace etc::xnnpack {

// Dims of one tensor, in blob order.
using BlobDims = std::vector<uint64_t>;

// A BatchMatMul's strides, mnk and batch for its operands' dims (A, B, then
// the product C, in blob order) and its stride_axes (xnnpack_blob.fbs).
struct MatmulLayout {
  std::vector<uint64_t> strides, mnk, batch;
};
// Errors: InvalidArgument when an axis is outside its operand or the
// entries do not describe three operands of the same batch rank.
Result<MatmulLayout> batch_matmul_layout(const std::vector<int8_t>& stride_axes,
                                         const std::array<const BlobDims*, 3>& dims);

// Sets the dims of `graph`'s delegate inputs to `input_dims` (one per
// input, blob order: NHWC for an input converted from NCHW) and re-derives
// every activation and size parameter. Errors: InvalidArgument naming the
// node when a size cannot follow (a window larger than its padded input, a
// reshape whose element count no longer fits, a parameter the blob gives
// no rule for); the graph is then partly rewritten and must be discarded.
Status resize_graph(fb::GraphT& graph, const std::vector<BlobDims>& input_dims);

// The first difference between two blob graphs ("tensor 12: dims [1, 40,
// 40, 96] against [1, 40, 41, 96]", "node 7 (Slice): its parameters
// differ"), empty when they are equal.
std::string first_difference(const fb::GraphT& a, const fb::GraphT& b);

}  // namespace etc::xnnpack
