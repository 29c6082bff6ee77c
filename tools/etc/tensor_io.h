#pragma once
// Reading and writing tensors as .npy files and ONNX TensorProto (.pb) files.
// Errors are cli::ToolError (tool_error.h) with the path and the reason.
//
// TensorProto needs ONNX and protobuf. An executable links one of two
// definitions of read_tensor_file, read_pb and reads_tensor_proto():
// tensor_pb.cpp (etc-compiler, tests) or tensor_pb_absent.cpp (etc, which
// hands runs with .pb inputs to etc-compiler rather than load ONNX and
// protobuf at every start).

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
// Whether read_tensor_file takes `path` for a TensorProto (.pb) file.
bool is_tensor_proto_path(const std::string& path);
// read_npy for a .npy path; any other name is refused as an unknown type.
OwnedTensor read_npy_file(const std::string& path);
// Whether this executable reads TensorProto files.
bool reads_tensor_proto();
// Writes a .npy file atomically (temp file + rename).
void write_npy(const std::string& path, const TensorSpec& spec, const void* data);
// Encodes .npy bytes (exposed for tests).
std::vector<uint8_t> encode_npy(const TensorSpec& spec, const void* data);

}  // namespace etc::io
