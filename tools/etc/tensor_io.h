#pragma once
// Reading and writing tensors as .npy files and ONNX TensorProto (.pb) files.
// Errors are cli::ToolError (tool_error.h) with the path and the reason.

#include <string>
#include <vector>

#include "runtime/core/tensor.h"

namespace etc::io {

struct OwnedTensor {
  TensorSpec spec;
  std::vector<uint8_t> bytes;
};

// Reads .npy (little-endian, C order) or .pb (TensorProto), chosen by extension.
OwnedTensor read_tensor_file(const std::string& path);
OwnedTensor read_npy(const std::string& path);
OwnedTensor read_pb(const std::string& path);
// Writes a .npy file atomically (temp file + rename).
void write_npy(const std::string& path, const TensorSpec& spec, const void* data);
// Encodes .npy bytes (exposed for tests).
std::vector<uint8_t> encode_npy(const TensorSpec& spec, const void* data);

}  // namespace etc::io
