#pragma once
// Per-node checks of an XNNPACK blob: arity, tensor ids, which operands must
// be constants (weights that XNNPACK packs at runtime creation), allowed
// XNN_FLAG_* bits, parameters, and the output dims, recomputed here the way
// XNNPACK's operators compute them. This version of XNNPACK plans memory
// from the declared dims but writes what the operator computes, so a blob
// whose declared output dims disagree would make it write out of bounds.

#include <cstddef>
#include <string>

#include "runtime/backends/xnnpack/blob_reader.h"

namespace etc::xnnpack {

// "node 3 (Convolution2d)"
std::string node_name(const fb::Node& node, size_t index);

// Errors: InvalidProgram naming the node, the tensor and the reason.
// On success the node's input and output vectors exist and hold valid ids.
Status check_node(const BlobView& view, const fb::Node& node, size_t index);

// Whether XNNPACK copies (packs) input `position` of `node` when the runtime
// is created, so the blob need not outlive xnn_create_runtime_v2 for it.
bool input_is_packed(const fb::Node& node, size_t position);

}  // namespace etc::xnnpack
