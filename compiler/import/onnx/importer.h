#pragma once
// ONNX model → edge-dialect ExportedProgram.
//
// Steps, in order:
//   1. load_model      read and parse the file, pull in external data files
//   2. check_model     libonnx's checker, then its shape inference
//   3. find_unsupported  every node whose op type has no lowering, all at once
//                      (an If's branches too)
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
#include <vector>

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
  // Lowers a subgraph's initializers and nodes in place (an If's taken
  // branch): its nodes read the enclosing graphs' values by name, and get
  // debug handles after the main graph's. Returns the IR values of its
  // outputs; throws CompileError naming a node or output.
  std::vector<ir::ValueId> lower_subgraph(const onnx::GraphProto& graph);
  // The first debug handle subgraph nodes take: the main graph's nodes have
  // 1..N.
  void set_next_handle(int32_t handle) { next_handle_ = handle; }

 private:
  std::string path_;
  int64_t opset_;
  ir::ExportedProgram program_;
  std::unordered_map<std::string, ir::ValueId> names_;
  std::unordered_map<std::string, int> name_counts_;
  std::unordered_map<std::string, TensorSpec> declared_;
  int32_t next_handle_ = 1;
};

}  // namespace etc::onnx_import
