#pragma once
// Reads and verifies an XNNPACK delegate blob (xnnpack_blob.fbs) once, at
// init. The blob is untrusted: the flatbuffer is verified, then every tensor
// id, constant range, dimension, external mapping and node (arity, roles,
// flags and shapes, node_checks.h) is checked, so that nothing XNNPACK is
// given can make it read or write out of bounds.
//
// The BlobView borrows the blob's bytes: `graph` and every `constant` pointer
// are valid only while the processed buffer is alive.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/backends/xnnpack/xnnpack_blob.h"
#include "runtime/core/result.h"
#include "runtime/core/span.h"

namespace etc::xnnpack {

inline constexpr size_t kMaxTensorRank = 6;  // XNN_MAX_TENSOR_DIMS
// Larger tensors are refused (4 GiB of float32), which also keeps every size
// product below overflow.
inline constexpr uint64_t kMaxTensorElements = uint64_t{1} << 30;

struct TensorInfo {
  size_t rank = 0;
  size_t dims[kMaxTensorRank] = {};
  size_t numel = 1;
  const uint8_t* constant = nullptr;  // into the blob; null when not a constant
  int32_t external_input = -1;
  int32_t external_output = -1;
  fb::BoundaryLayout layout = fb::BoundaryLayout::Same;
  bool nhwc = false;  // a 4-D tensor in NHWC order (not marked nchw)
  // A constant's layout: NativePanels is read in place by the native
  // convolution, unpacked for XNNPACK (xnnpack_blob.fbs).
  fb::WeightPacking packing = fb::WeightPacking::Plain;

  bool is_constant() const { return constant != nullptr; }
  bool is_external() const { return external_input >= 0 || external_output >= 0; }
};

struct BlobView {
  const fb::Graph* graph = nullptr;
  std::vector<TensorInfo> tensors;
  std::vector<uint32_t> input_tensors;   // tensor id of each delegate input
  std::vector<uint32_t> output_tensors;  // tensor id of each delegate output
};

// Errors: DelegateInvalidCompatibility for a blob of another format version;
// InvalidProgram for any defect, naming the node or tensor index.
Result<BlobView> read_xnnpack_blob(const void* data, size_t size);

// The same for a size-prefixed flatbuffer of `size` bytes whose constant
// data is held apart (a blob resized by blob_resize.h, whose constants stay
// those of the blob it was resized from).
Result<BlobView> read_xnnpack_graph(const void* flatbuffer, size_t size, Span<const uint8_t> constants);

// "[1, 8, 8, 3]"
std::string dims_string(const TensorInfo& tensor);

// Entry i of a checked node's window parameter (kernel, stride, dilation,
// padding), or `fill` where the node leaves it out.
inline size_t node_param(const flatbuffers::Vector<uint32_t>* v, flatbuffers::uoffset_t i, uint32_t fill) {
  return v == nullptr ? fill : v->Get(i);
}

}  // namespace etc::xnnpack
