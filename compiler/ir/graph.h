#pragma once
// The edge IR: plain data. A Graph owns flat vectors of values and nodes
// addressed by ids; nodes are kept in a valid topological order. Ops come
// from the closed edge op set (runtime/kernels/edge_ops.def); their shape and
// dtype functions are the portable kernels' infer functions, so the compiler
// and the runtime can never disagree on a type.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "compiler/ir/attrs.h"
#include "compiler/ir/compile_spec.h"
#include "compiler/ir/delegate_debug_map.h"
#include "runtime/core/tensor.h"
#include "runtime/kernels/edge_ops.h"

namespace etc::ir {

using ValueId = int32_t;
using NodeId = int32_t;
inline constexpr ValueId kNoValue = -1;

// Immutable constant bytes, shared between values that hold the same data.
using ConstantData = std::shared_ptr<const std::vector<uint8_t>>;

struct Value {
  ValueId id = kNoValue;
  std::string name;
  TensorSpec spec;
  NodeId producer = -1;   // -1 for graph inputs and constants
  ConstantData constant;  // set for constants (spec.nbytes() bytes)
  // Constants only: the partition this constant moves into (set by
  // tag_constant_data or a partitioner). Untagged constants stay in the
  // outer program and reach a delegate as an input.
  std::string delegation_tag;

  bool is_constant() const { return constant != nullptr; }
  template <typename T>
  const T* constant_as() const {
    return reinterpret_cast<const T*>(constant->data());
  }
};

struct NodeMeta {
  std::vector<int32_t> debug_handles;  // every ONNX node this node stands for
  std::string onnx_name;
  std::string onnx_op_type;
  std::string delegation_tag;  // set by partitioners
};

class Graph;

struct Node {
  NodeId id = -1;
  EdgeOp op{};
  std::vector<ValueId> inputs;  // kNoValue for an absent optional input
  std::vector<ValueId> outputs;
  Attrs attrs;
  NodeMeta meta;
  // -1 for an edge op. Otherwise this node is a call_delegate of
  // ExportedProgram::delegates[delegate] (`op` is then meaningless): its
  // inputs and outputs are the lowered module's graph inputs and outputs.
  int32_t delegate = -1;
  bool dead = false;  // removed; compacted away by Graph::compact()
  // Control flow (op If or Loop): the bodies, each a whole graph whose
  // inputs and outputs follow the op's convention in edge_ops.def; values
  // from outside reach a body only as explicit inputs. Shared and never
  // changed in place: a pass that rewrites a body stores a new graph.
  std::vector<std::shared_ptr<const Graph>> subgraphs;

  bool is_delegate_call() const { return delegate >= 0; }
  bool is_control() const { return delegate < 0 && (op == EdgeOp::If || op == EdgeOp::Loop); }
};

class Graph {
 public:
  ValueId add_value(std::string name, TensorSpec spec);
  ValueId add_constant(std::string name, TensorSpec spec, ConstantData data);
  // Appends a node; its outputs must already exist. Sets their producer.
  NodeId add_node(EdgeOp op, std::vector<ValueId> inputs, std::vector<ValueId> outputs, Attrs attrs,
                  NodeMeta meta);

  Value& value(ValueId id) { return values_[id]; }
  const Value& value(ValueId id) const { return values_[id]; }
  Node& node(NodeId id) { return nodes_[id]; }
  const Node& node(NodeId id) const { return nodes_[id]; }
  std::vector<Value>& values() { return values_; }
  const std::vector<Value>& values() const { return values_; }
  std::vector<Node>& nodes() { return nodes_; }
  const std::vector<Node>& nodes() const { return nodes_; }

  std::vector<ValueId>& inputs() { return inputs_; }
  const std::vector<ValueId>& inputs() const { return inputs_; }
  std::vector<ValueId>& outputs() { return outputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }

  // Replaces every use of `from` (node inputs and graph outputs) by `to`.
  void replace_uses(ValueId from, ValueId to);
  // Node ids that read each value (index: value id).
  std::vector<std::vector<NodeId>> users() const;
  // Drops dead nodes and values nothing refers to; renumbers ids densely.
  void compact();
  size_t num_live_nodes() const;

 private:
  std::vector<Value> values_;
  std::vector<Node> nodes_;
  std::vector<ValueId> inputs_;
  std::vector<ValueId> outputs_;
};

struct DebugHandleInfo {
  std::string onnx_name;
  std::string onnx_op_type;
};

struct ExportedProgram;

// Weights a backend's processed bytes hold in one layout ("plain",
// "packed for the native kernel", ...): how many constants and bytes. For
// the compile summary (`etc preprocess`), which says what the program's
// size is made of.
struct WeightLayoutSummary {
  std::string layout;
  size_t tensors = 0;
  uint64_t bytes = 0;
};

// One partition after to_backend: what its backend's preprocess produced,
// and the edge subgraph it replaced (kept for debugging and reports).
struct LoweredBackendModule {
  std::string backend_id;
  std::string tag;  // the partition tag it came from ("demo_0")
  std::vector<uint8_t> processed_bytes;
  std::vector<CompileSpec> compile_specs;
  DelegateDebugMap debug_handle_map;
  std::shared_ptr<const ExportedProgram> original_program;
  std::vector<WeightLayoutSummary> weights;  // may be empty
};

// A whole model in edge dialect, plus where it came from.
struct ExportedProgram {
  Graph graph;
  std::string source_path;
  int64_t opset = 0;
  std::map<int32_t, DebugHandleInfo> debug_handles;  // handle → ONNX node
  std::vector<LoweredBackendModule> delegates;       // call_delegate targets
  // Inputs compiled with a range of sizes, by their index in graph.inputs():
  // the smallest shape (graph input values hold the largest).
  std::map<size_t, Shape> input_min_shapes;
};

// A control-flow body as a program of its own (for partitioning and
// lowering it): the body's graph with the outer program's source, opset
// and debug handles.
ExportedProgram body_program(const ExportedProgram& outer, const Node& node, size_t body);
// Where a body sits: "If_0/then", "If_0/else", "Loop_3/body" (the node's
// ONNX name, else its op).
std::string body_scope(const Node& node, size_t body);

}  // namespace etc::ir
