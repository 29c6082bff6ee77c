// read_pb with ONNX's TensorProto (see tensor_io.h).
#include "compiler/common/regular_file.h"
#include "compiler/import/onnx/tensor_proto.h"
#include "tools/etc/tensor_io.h"
#include "tools/etc/tool_error.h"

namespace etc::io {

OwnedTensor read_pb(const std::string& path) {
  std::string bytes;
  if (const std::string error = read_regular_file(path, bytes); !error.empty())
    throw cli::ToolError(path + ": " + error);
  onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes)) throw cli::ToolError(path + ": not an ONNX TensorProto file");
  auto decoded = onnx_import::decode_tensor(proto);
  if (!decoded.ok()) throw cli::ToolError(path + ": " + decoded.message());
  return OwnedTensor{decoded->spec, std::move(decoded->bytes)};
}

OwnedTensor read_tensor_file(const std::string& path) {
  if (is_tensor_proto_path(path)) return read_pb(path);
  return read_npy_file(path);
}

bool reads_tensor_proto() { return true; }

}  // namespace etc::io
