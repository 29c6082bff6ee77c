#pragma once
// Reads and verifies a oneDNN delegate blob (onednn_blob.fbs) once, at init.
// The blob is untrusted: the flatbuffer is verified, then every tensor id,
// dimension, constant range, external mapping and node (arity per kind,
// window sizes, operand shapes, order: a tensor is read only after it is
// written) is checked. oneDNN then checks each primitive's parameters as it
// creates it, and the reader's dims are compared with the primitives'.
//
// The BlobView borrows the blob's bytes: `graph` and every `constant` are
// valid only while the processed buffer is alive.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/backends/onednn/onednn_blob.h"
#include "runtime/core/result.h"

namespace etc::onednn {

inline constexpr size_t kMaxTensorRank = 5;
// Larger tensors are refused (4 GiB of float32), which also keeps every size
// product below overflow.
inline constexpr int64_t kMaxTensorElements = int64_t{1} << 30;

struct TensorInfo {
  std::vector<int64_t> dims;
  int64_t numel = 1;
  const float* constant = nullptr;  // into the blob; null when not a constant
  uint64_t constant_bytes = 0;
  // Prepacked weights (onednn_blob.fbs): the descriptor's raw bytes, of
  // sizeof(dnnl_memory_desc_t); null when the data is row-major.
  const uint8_t* packed_desc = nullptr;
  std::string packed_for;
  int32_t external_input = -1;
  int32_t external_output = -1;
  bool is_constant() const { return constant != nullptr; }
};

struct BlobView {
  bool has_packed = false;  // some constant is prepacked
  uint32_t packed_threads = 0;
  const fb::Graph* graph = nullptr;
  std::vector<TensorInfo> tensors;
  std::vector<uint32_t> input_tensors;   // tensor id of each delegate input
  std::vector<uint32_t> output_tensors;  // tensor id of each delegate output
  // The last node reading each tensor (as an input or a sum operand); -1:
  // none.
  std::vector<int32_t> last_reader;
};

// Errors: DelegateInvalidCompatibility for a blob of another format version;
// InvalidProgram for any defect, naming the node or tensor index.
// Precondition: `data` is aligned to 8 bytes.
Result<BlobView> read_onednn_blob(const void* data, size_t size);

// "[1, 64, 56, 56]"
std::string dims_string(const std::vector<int64_t>& dims);

}  // namespace etc::onednn
