#pragma once
// What a lowering function sees: one ONNX node, its inputs as IR values, and
// ways to emit edge nodes. One ONNX op family lowers in one file under ops/;
// each registers its op types with register_lowering().
//
// emit() types every new node with the op's shape function and folds it to a
// constant when all its inputs are constant, so shape subgraphs
// (Shape → Gather → Concat → Reshape) disappear during import.
// fail() throws a CompileError naming the model, the node and the reason.

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "compiler/import/onnx/importer.h"
#include "compiler/ir/graph.h"

namespace etc::onnx_import {

class LowerContext {
 public:
  LowerContext(Importer& importer, const onnx::NodeProto& node, int32_t debug_handle);

  const onnx::NodeProto& node() const { return node_; }
  int64_t opset() const;
  ir::Graph& graph();

  // ---- inputs ----
  int num_inputs() const { return node_.input_size(); }
  // True when input i exists and is not the empty name.
  bool has_input(int i) const;
  // IR value of input i; fails when it is required but missing.
  ir::ValueId input(int i) const;
  // By value: a reference into the graph would dangle once a lowering adds
  // a value (the graph's storage grows).
  TensorSpec spec(ir::ValueId v) const;
  TensorSpec input_spec(int i) const { return spec(input(i)); }
  bool is_constant(ir::ValueId v) const;
  // Constant input i converted to int64 / float values; fails naming the input
  // when it is not a compile-time constant.
  std::vector<int64_t> constant_ints(int i, const char* what) const;
  std::vector<float> constant_floats(int i, const char* what) const;
  // A constant input that must hold exactly one value (a scalar or [1]).
  int64_t constant_int(int i, const char* what) const;
  float constant_float(int i, const char* what) const;

  // ---- attributes (defaults as in the ONNX spec) ----
  bool has_attr(const std::string& name) const;
  int64_t attr_int(const std::string& name, int64_t fallback) const;
  int64_t attr_int(const std::string& name) const;  // required
  float attr_float(const std::string& name, float fallback) const;
  std::string attr_string(const std::string& name, const std::string& fallback) const;
  std::vector<int64_t> attr_ints(const std::string& name, std::vector<int64_t> fallback = {}) const;
  std::vector<float> attr_floats(const std::string& name, std::vector<float> fallback = {}) const;
  const onnx::TensorProto* attr_tensor(const std::string& name) const;
  const onnx::GraphProto* attr_graph(const std::string& name) const;

  // Lowers a subgraph (an If's branch) in place; returns its outputs' values.
  std::vector<ir::ValueId> lower_subgraph(const onnx::GraphProto& graph);
  // Lowers a control-flow body into a graph of its own (Importer::lower_body).
  LoweredBody lower_body(const onnx::GraphProto& body, const std::vector<TensorSpec>& bound);
  LoweredBody lower_body(const onnx::GraphProto& body, const std::vector<TensorSpec>& own,
                         const std::function<void(const std::vector<ir::ValueId>& own)>& bind);
  // Binds an ONNX name in the current graph (a body's input).
  void bind(const std::string& name, ir::ValueId value);
  // The IR value of an ONNX name in the current graph (capturing it from an
  // enclosing graph when needed); kNoValue when unknown.
  ir::ValueId lookup(const std::string& name);

  // Static type the model declares for output i (after ONNX shape inference),
  // when it has one. Lets an op whose shape argument is only known at run time
  // still compile: the declared shape is used, and the kernel checks at run
  // time that the argument agrees with it.
  std::optional<TensorSpec> declared_output_spec(int i) const;

  // ---- emission ----
  int num_outputs() const { return node_.output_size(); }
  // Emits an edge node producing `num_outputs` values and returns them.
  std::vector<ir::ValueId> emit(EdgeOp op, std::vector<ir::ValueId> inputs, ir::Attrs attrs = {},
                                int num_outputs = 1);
  ir::ValueId emit1(EdgeOp op, std::vector<ir::ValueId> inputs, ir::Attrs attrs = {}) {
    return emit(op, std::move(inputs), std::move(attrs), 1)[0];
  }
  // Emits a control-flow node (If, Loop) owning `bodies`; never folded.
  std::vector<ir::ValueId> emit_control(EdgeOp op, std::vector<ir::ValueId> inputs,
                                        const std::vector<TensorSpec>& output_specs, ir::Attrs attrs,
                                        std::vector<std::shared_ptr<ir::Graph>> bodies);
  // Meta for a node this ONNX node stands behind (its debug handle and name).
  ir::NodeMeta node_meta() const;
  ir::ValueId constant(const TensorSpec& spec, const void* data);
  ir::ValueId constant_ints(const std::vector<int64_t>& values, Shape shape);
  ir::ValueId constant_floats(const std::vector<float>& values, Shape shape);
  ir::ValueId scalar(DType dtype, double value);
  // Binds ONNX output i (if named) to an IR value.
  void set_output(int i, ir::ValueId value);

  // Axis in [-rank, rank) → [0, rank); fails naming the attribute otherwise.
  int64_t normalize_axis(int64_t axis, int64_t rank, const char* what = "axis") const;

  [[noreturn]] void fail(const std::string& reason) const;
  // Fails unless a constant input holds exactly one value.
  void require_one_value(size_t count, int i, const char* what) const;

 private:
  Importer& importer_;
  const onnx::NodeProto& node_;
  int32_t debug_handle_;
  int emitted_ = 0;
  std::vector<ir::ValueId> emitted_values_;  // values this node created
};

using LowerFn = std::function<void(LowerContext&)>;

// Registers the lowering of an ONNX op type (default domain) for opsets
// [min_opset, max_opset]. Called from each family's register function.
struct Lowering {
  LowerFn fn;
  int64_t min_opset = 1;
  int64_t max_opset = 1000;
};
void register_lowering(const std::string& op_type, Lowering lowering);
const Lowering* find_lowering(const std::string& op_type);

}  // namespace etc::onnx_import
