#pragma once
// The XNNPACK backend's ahead-of-time half: turns one partition tagged by
// XnnpackPartitioner into the blob described by
// runtime/backends/xnnpack/xnnpack_blob.fbs.
//
// - Tensors: external inputs (delegate inputs, in order) and outputs
//   (delegate outputs, in order), intermediates, and constants in XNNPACK's
//   layouts (OHWI convolution filters, [1, kh, kw, C*m] depthwise filters,
//   [g*M/g, kh, kw, C/g] deconvolution filters, [OC, IC] fully connected
//   filters, per-channel biases).
// - Layout: 4-D activations are NHWC inside the partition; 4-D externals are
//   marked for conversion at the boundary.
// - Fusion: a standalone relu/clip folds into the node before it when nothing
//   else reads that node's output.
// - Debug handle map: generated identifiers 0, 1, … one per XNNPACK node (its
//   debug_id), mapping to the handles of every edge node it computes. A node
//   without any ONNX origin gets debug_id kNoDebugId (xnnpack_blob.h) and no
//   entry.
// Errors: CompileError naming the node when a node is not one the
// partitioner accepts.

#include <cstdint>

#include "compiler/backend/backend_details.h"

namespace etc::xnnpack {

class XnnpackBackendDetails : public BackendDetails {
 public:
  PreprocessResult preprocess(const ir::ExportedProgram& partition,
                              std::span<const CompileSpec> compile_specs) const override;
  // Resizes `largest` to `other`'s input dims (blob_resize.h) and compares.
  std::string check_resize(std::span<const uint8_t> largest, std::span<const uint8_t> other) const override;
};

}  // namespace etc::xnnpack
