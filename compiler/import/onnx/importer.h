#pragma once
// ONNX model → edge-dialect ExportedProgram.
//
// Steps, in order:
//   1. load_model      read and parse the file, pull in external data files
//   2. check_model     libonnx's checker, then its shape inference
//   3. find_unsupported  every node whose op type has no lowering, all at once
//   4. bind_inputs     graph inputs with --input-shape overrides applied;
//                      a dynamic dim with no override is an error
//   5. lower_nodes     each ONNX node through its family's lowering, folding
//                      constant subgraphs as it goes
//   6. bind_outputs    graph outputs, then dead-code elimination and verify

#include <onnx/onnx_pb.h>

#include <map>
#include <optional>
#include <string>
#include <unordered_map>

#include "compiler/ir/graph.h"
#include "runtime/core/shape.h"
#include "runtime/core/tensor.h"

namespace etc::onnx_import {

struct ImportOptions {
  // Graph input name → static shape (replaces dynamic dims).
  std::map<std::string, Shape> input_shapes;
};

// Throws CompileError naming the file, node and reason.
ir::ExportedProgram import_onnx(const std::string& path, const ImportOptions& options = {});

// Loads, checks and shape-infers a model (steps 1–2), with external data inlined.
onnx::ModelProto load_model(const std::string& path);

class LowerContext;

// Shared state of one import; lowerings reach it through LowerContext.
class Importer {
 public:
  Importer(const std::string& path, int64_t opset) : path_(path), opset_(opset) {}

  ir::ExportedProgram& program() { return program_; }
  const std::string& path() const { return path_; }
  int64_t opset() const { return opset_; }
  // IR value bound to an ONNX tensor name; kNoValue when unknown.
  ir::ValueId lookup(const std::string& name) const;
  void bind(const std::string& name, ir::ValueId value);
  std::string unique_name(const std::string& base);
  // Static type the model declares (value_info / graph outputs, after ONNX
  // shape inference) for a tensor name; nullopt when unknown or not static.
  std::optional<TensorSpec> declared_spec(const std::string& name) const;
  void record_declared_types(const onnx::GraphProto& graph);

 private:
  std::string path_;
  int64_t opset_;
  ir::ExportedProgram program_;
  std::unordered_map<std::string, ir::ValueId> names_;
  std::unordered_map<std::string, int> name_counts_;
  std::unordered_map<std::string, TensorSpec> declared_;
};

}  // namespace etc::onnx_import
