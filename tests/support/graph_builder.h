#pragma once
// A small fluent builder for edge-IR graphs in tests: values are typed with
// the ops' own shape functions, so a test states only what it cares about.
//
//   GraphBuilder b;
//   auto x = b.input("x", DType::Float32, {2, 3});
//   auto y = b.op(EdgeOp::Relu, {x});
//   b.output(y);
//   ir::ExportedProgram p = b.build();

#include <stdexcept>
#include <string>
#include <vector>

#include "compiler/ir/graph.h"
#include "runtime/kernels/kernel.h"

namespace etc::testing {

class GraphBuilder {
 public:
  ir::ValueId input(const std::string& name, DType dtype, Shape shape) {
    const ir::ValueId v = program_.graph.add_value(name, TensorSpec{dtype, shape});
    program_.graph.inputs().push_back(v);
    return v;
  }

  ir::ValueId constant_f32(const std::string& name, Shape shape, const std::vector<float>& values) {
    const auto* p = reinterpret_cast<const uint8_t*>(values.data());
    auto data = std::make_shared<const std::vector<uint8_t>>(p, p + values.size() * sizeof(float));
    return program_.graph.add_constant(name, TensorSpec{DType::Float32, shape}, data);
  }

  std::vector<ir::ValueId> op_n(EdgeOp op, std::vector<ir::ValueId> inputs, int num_outputs,
                                ir::Attrs attrs = {}) {
    const OpDef* def = find_op_def(op);
    if (!def) throw std::runtime_error(std::string("no kernel for ") + edge_op_name(op));
    std::vector<TensorSpec> in, out(num_outputs);
    for (ir::ValueId v : inputs)
      in.push_back(v == ir::kNoValue ? TensorSpec{} : program_.graph.value(v).spec);
    const auto views = attrs.views();
    Status s = infer_outputs(*def, AttrList(views), in, out);
    if (!s.ok()) throw std::runtime_error(s.message());
    std::vector<ir::ValueId> outs;
    for (const TensorSpec& spec : out)
      outs.push_back(program_.graph.add_value("v" + std::to_string(program_.graph.values().size()), spec));
    const int32_t handle = next_handle_++;
    ir::NodeMeta meta;
    meta.debug_handles = {handle};
    meta.onnx_name = std::string(edge_op_name(op)) + "_" + std::to_string(handle);
    meta.onnx_op_type = edge_op_name(op);
    program_.debug_handles[handle] = {meta.onnx_name, meta.onnx_op_type};
    program_.graph.add_node(op, std::move(inputs), outs, std::move(attrs), std::move(meta));
    return outs;
  }

  ir::ValueId op(EdgeOp op, std::vector<ir::ValueId> inputs, ir::Attrs attrs = {}) {
    return op_n(op, std::move(inputs), 1, std::move(attrs))[0];
  }

  void output(ir::ValueId v, const std::string& name = "") {
    if (!name.empty()) program_.graph.value(v).name = name;
    program_.graph.outputs().push_back(v);
  }

  ir::ExportedProgram build() {
    program_.source_path = "builder.onnx";
    return std::move(program_);
  }

 private:
  ir::ExportedProgram program_;
  int32_t next_handle_ = 1;
};

}  // namespace etc::testing
