// read_pb in an executable without ONNX (see tensor_io.h): `etc run` hands
// a run with .pb inputs to etc-compiler before it loads anything, so this
// refusal is reached only by a caller that did not ask reads_tensor_proto().
#include "tools/etc/tensor_io.h"
#include "tools/etc/tool_error.h"

namespace etc::io {

OwnedTensor read_pb(const std::string& path) {
  throw cli::ToolError(path +
                       ": TensorProto (.pb) files are read by etc-compiler; this executable has no ONNX");
}

OwnedTensor read_tensor_file(const std::string& path) {
  if (is_tensor_proto_path(path)) return read_pb(path);
  return read_npy_file(path);
}

bool reads_tensor_proto() { return false; }

}  // namespace etc::io
