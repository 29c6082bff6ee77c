#pragma once
// ONNX model → edge-dialect ExportedProgram.
//
// Steps, in order:
//   1. load_model      read and parse the file, pull in external data files
//   2. check_model     libonnx's checker, then its shape inference
//   3. find_unsupported  every node whose op type has no lowering, all at once
//                      (control-flow bodies too)
//   4. bind_inputs     graph inputs with --input-shape overrides applied;
//                      a dynamic dim with no override is an error
//   5. lower_nodes     each ONNX node through its family's lowering, folding
//                      constant subgraphs as it goes
//   6. bind_outputs    graph outputs, then dead-code elimination and verify

#include <onnx/onnx_pb.h>

#include <functional>
#include <map>
#include <memory>
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
  // Graph input name → the smallest shape, for inputs that run at any size
  // between it and input_shapes (bounded dynamic shapes; compile_onnx).
  std::map<std::string, Shape> input_min_shapes;
};

// Throws CompileError naming the file, node and reason.
ir::ExportedProgram import_onnx(const std::string& path, const ImportOptions& options = {});

// Loads, checks and shape-infers a model (steps 1–2), with external data inlined.
onnx::ModelProto load_model(const std::string& path);

class LowerContext;

// A control-flow body lowered into a graph of its own (Importer::lower_body).
struct LoweredBody {
  std::shared_ptr<ir::Graph> graph;
  std::vector<ir::ValueId> outputs;         // the body's ONNX outputs, in `graph`
  std::vector<std::string> captured;        // names it reads from enclosing graphs
  std::vector<ir::ValueId> capture_inputs;  // the graph inputs standing for them
};

// Shared state of one import; lowerings reach it through LowerContext.
class Importer {
 public:
  Importer(const std::string& path, int64_t opset) : path_(path), opset_(opset) {
    scopes_.push_back(Scope{&program_.graph, {}, {}, {}});
  }

  ir::ExportedProgram& program() { return program_; }
  // The graph lowerings write into: the main graph, or the body being lowered.
  ir::Graph& graph() { return *scopes_.back().graph; }
  const std::string& path() const { return path_; }
  int64_t opset() const { return opset_; }
  // IR value bound to an ONNX tensor name; kNoValue when unknown. Inside a
  // body, a name bound in an enclosing graph becomes a new input of the body
  // (a constant is copied in instead), and so on through every level between.
  ir::ValueId lookup(const std::string& name);
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
  // Lowers a control-flow body into a new graph. `bound` types the body's
  // own ONNX inputs (a Loop's iteration, condition and carried values): they
  // become the graph's first inputs, in order; the values it reads from
  // enclosing graphs follow as further inputs.
  LoweredBody lower_body(const onnx::GraphProto& body, const std::vector<TensorSpec>& bound);
  // As above, but the graph's first inputs are typed by `own`, and `bind`,
  // called in the body's scope with their values, binds the body's ONNX
  // inputs (it may emit nodes into the body: a Scan's slices).
  LoweredBody lower_body(const onnx::GraphProto& body, const std::vector<TensorSpec>& own,
                         const std::function<void(const std::vector<ir::ValueId>& own)>& bind);
  // The first debug handle subgraph nodes take: the main graph's nodes have
  // 1..N.
  void set_next_handle(int32_t handle) { next_handle_ = handle; }

 private:
  std::string path_;
  int64_t opset_;
  struct Scope {
    ir::Graph* graph;
    std::unordered_map<std::string, ir::ValueId> names;
    std::vector<std::string> captured;
    std::vector<ir::ValueId> capture_inputs;
  };
  ir::ValueId lookup_at(size_t depth, const std::string& name);

  ir::ExportedProgram program_;
  std::vector<Scope> scopes_;  // [0]: the main graph
  std::unordered_map<std::string, int> name_counts_;
  std::unordered_map<std::string, TensorSpec> declared_;
  int32_t next_handle_ = 1;
};

}  // namespace etc::onnx_import
