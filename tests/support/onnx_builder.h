#pragma once
// Small ONNX models built in code, for import and control-flow tests.

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/temp_files.h"

namespace etc::testing::onnx_builder {

inline void add_value(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name,
                      std::vector<int64_t> dims, int elem_type = onnx::TensorProto::FLOAT) {
  auto* v = list->Add();
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem_type);
  t->mutable_shape();  // a scalar has a shape with no dims
  for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
}

inline onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op, std::vector<std::string> ins,
                                 std::vector<std::string> outs, const std::string& name) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (auto& i : ins) n->add_input(i);
  for (auto& o : outs) n->add_output(o);
  return n;
}

// A Constant node holding a bool scalar.
inline void bool_constant(onnx::GraphProto* g, const std::string& name, bool value) {
  auto* a = add_node(g, "Constant", {}, {name}, name + "_node")->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::BOOL);
  a->mutable_t()->add_int32_data(value ? 1 : 0);
}

inline void float_initializer(onnx::GraphProto* g, const std::string& name, std::vector<float> values) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (float v : values) t->add_float_data(v);
}

// An int64 scalar initializer.
inline void int_scalar(onnx::GraphProto* g, const std::string& name, int64_t value) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_int64_data(value);
}

// A 1-D int64 initializer.
inline void int_tensor(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& values) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) t->add_int64_data(v);
}

inline void int_attr(onnx::NodeProto* n, const std::string& name, int64_t value) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}

inline void add_graph_attr(onnx::NodeProto* n, const std::string& name, const onnx::GraphProto& g) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  a->mutable_g()->CopyFrom(g);
}

// An If node on `cond` with the two branches and one output `out`.
inline onnx::NodeProto* add_if(onnx::GraphProto* g, const std::string& cond,
                               const onnx::GraphProto& then_branch, const onnx::GraphProto& else_branch,
                               const std::string& out, const std::string& name) {
  auto* n = add_node(g, "If", {cond}, {out}, name);
  add_graph_attr(n, "then_branch", then_branch);
  add_graph_attr(n, "else_branch", else_branch);
  return n;
}

// A branch computing `op`(x) into `out` ([2, 3]), reading the outer graph's x.
inline onnx::GraphProto unary_branch(const std::string& op, const std::string& out) {
  onnx::GraphProto b;
  b.set_name(op + "_branch");
  add_node(&b, op, {"x"}, {out}, out + "_node");
  add_value(b.mutable_output(), out, {2, 3});
  return b;
}

// A model with input x [2, 3] and output y [2, 3], at `opset`.
inline onnx::ModelProto model_with_input(int64_t opset = 13) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(opset);
  m.mutable_graph()->set_name("control_test");
  add_value(m.mutable_graph()->mutable_input(), "x", {2, 3});
  add_value(m.mutable_graph()->mutable_output(), "y", {2, 3});
  return m;
}

// Writes the model to the temp folder; returns its path.
inline std::string save(const onnx::ModelProto& model, const std::string& file) {
  const std::filesystem::path p = test_temp_path("onnx_builder_" + file + ".onnx");
  std::ofstream out(p, std::ios::binary);
  model.SerializeToOstream(&out);
  return p.string();
}

}  // namespace etc::testing::onnx_builder
