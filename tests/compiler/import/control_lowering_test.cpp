// Import of ONNX If: a compile-time constant condition selects its branch,
// whose nodes (reading the outer graph's values, with initializers of their
// own, nested Ifs) lower in place of the If and run; a condition computed at
// run time, and an unsupported op inside a branch, are refused naming the
// node and the reason.
#include <onnx/onnx_pb.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "compiler/common/compile_error.h"
#include "compiler/import/onnx/importer.h"
#include "tests/support/run_program.h"

namespace {

namespace fs = std::filesystem;

void add_value(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name,
               std::vector<int64_t> dims, int elem_type = onnx::TensorProto::FLOAT) {
  auto* v = list->Add();
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem_type);
  t->mutable_shape();  // a scalar has a shape with no dims
  for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
}

onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op, std::vector<std::string> ins,
                          std::vector<std::string> outs, const std::string& name) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (auto& i : ins) n->add_input(i);
  for (auto& o : outs) n->add_output(o);
  return n;
}

// A Constant node holding a bool scalar.
void bool_constant(onnx::GraphProto* g, const std::string& name, bool value) {
  auto* a = add_node(g, "Constant", {}, {name}, name + "_node")->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::BOOL);
  a->mutable_t()->add_int32_data(value ? 1 : 0);
}

void float_initializer(onnx::GraphProto* g, const std::string& name, std::vector<float> values) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (float v : values) t->add_float_data(v);
}

// An If node on `cond` with the two branches, output `out` ([2, 3]).
onnx::NodeProto* add_if(onnx::GraphProto* g, const std::string& cond, onnx::GraphProto then_branch,
                        onnx::GraphProto else_branch, const std::string& out, const std::string& name) {
  auto* n = add_node(g, "If", {cond}, {out}, name);
  for (auto [attr, branch] :
       {std::pair{"then_branch", &then_branch}, std::pair{"else_branch", &else_branch}}) {
    auto* a = n->add_attribute();
    a->set_name(attr);
    a->set_type(onnx::AttributeProto::GRAPH);
    a->mutable_g()->CopyFrom(*branch);
  }
  return n;
}

// A branch computing `op`(x) into `out`, reading the outer graph's x.
onnx::GraphProto unary_branch(const std::string& op, const std::string& out) {
  onnx::GraphProto b;
  b.set_name(op + "_branch");
  add_node(&b, op, {"x"}, {out}, out + "_node");
  add_value(b.mutable_output(), out, {2, 3});
  return b;
}

std::string save(onnx::ModelProto& model, const std::string& file) {
  const fs::path p = fs::temp_directory_path() / ("etc_control_test_" + file + ".onnx");
  std::ofstream out(p, std::ios::binary);
  model.SerializeToOstream(&out);
  return p.string();
}

onnx::ModelProto model_with_input() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  m.mutable_graph()->set_name("control_test");
  add_value(m.mutable_graph()->mutable_input(), "x", {2, 3});
  add_value(m.mutable_graph()->mutable_output(), "y", {2, 3});
  return m;
}

const std::vector<float> kX = {-2.0f, -1.0f, 0.0f, 0.5f, 1.5f, 3.0f};

std::vector<float> run(const etc::ir::ExportedProgram& p) {
  return etc::testing::from_bytes<float>(etc::testing::run_program(p, {etc::testing::as_bytes(kX)})[0]);
}

}  // namespace

TEST_CASE("an If with a constant condition lowers to its taken branch", "[import][control]") {
  for (bool cond : {true, false}) {
    INFO("condition " << cond);
    onnx::ModelProto m = model_with_input();
    onnx::GraphProto* g = m.mutable_graph();
    bool_constant(g, "c", cond);
    add_if(g, "c", unary_branch("Relu", "t"), unary_branch("Neg", "e"), "y", "choose");
    const auto program = etc::onnx_import::import_onnx(save(m, cond ? "then" : "else"));
    const std::vector<float> y = run(program);
    for (size_t i = 0; i < kX.size(); ++i) CHECK(y[i] == (cond ? std::max(kX[i], 0.0f) : -kX[i]));
    // The branch's node has a debug handle of its own, after the main graph's.
    bool found = false;
    for (const auto& [handle, info] : program.debug_handles)
      if (info.onnx_name == (cond ? "t_node" : "e_node")) found = handle > 2;
    CHECK(found);
  }
}

TEST_CASE("a nested If and a branch's own initializers lower", "[import][control]") {
  onnx::ModelProto m = model_with_input();
  onnx::GraphProto* g = m.mutable_graph();
  bool_constant(g, "c", true);
  // then: inner If (constant false) -> x * 2 (else branch, own initializer), then + 1
  onnx::GraphProto inner_else;
  inner_else.set_name("inner_else");
  float_initializer(&inner_else, "two", {2.0f});
  add_node(&inner_else, "Mul", {"x", "two"}, {"doubled"}, "double");
  add_value(inner_else.mutable_output(), "doubled", {2, 3});
  onnx::GraphProto then_branch;
  then_branch.set_name("outer_then");
  bool_constant(&then_branch, "inner_c", false);
  add_if(&then_branch, "inner_c", unary_branch("Relu", "r"), inner_else, "inner_y", "inner");
  float_initializer(&then_branch, "one", {1.0f});
  add_node(&then_branch, "Add", {"inner_y", "one"}, {"t"}, "plus_one");
  add_value(then_branch.mutable_output(), "t", {2, 3});
  add_if(g, "c", then_branch, unary_branch("Neg", "e"), "y", "outer");
  const std::vector<float> y = run(etc::onnx_import::import_onnx(save(m, "nested")));
  for (size_t i = 0; i < kX.size(); ++i) CHECK(y[i] == kX[i] * 2.0f + 1.0f);
}

TEST_CASE("an If on a run-time condition, or with an unsupported op in a branch, is refused",
          "[import][control]") {
  {
    onnx::ModelProto m = model_with_input();
    add_value(m.mutable_graph()->mutable_input(), "flag", {}, onnx::TensorProto::BOOL);
    add_if(m.mutable_graph(), "flag", unary_branch("Relu", "t"), unary_branch("Neg", "e"), "y", "choose");
    CHECK_THROWS_WITH(etc::onnx_import::import_onnx(save(m, "runtime")),
                      Catch::Contains("choose") && Catch::Contains("computed at run time"));
  }
  {
    onnx::ModelProto m = model_with_input();
    bool_constant(m.mutable_graph(), "c", true);
    add_if(m.mutable_graph(), "c", unary_branch("Relu", "t"), unary_branch("Celu", "e"), "y", "choose");
    CHECK_THROWS_WITH(etc::onnx_import::import_onnx(save(m, "unsupported")),
                      Catch::Contains("e_node") && Catch::Contains("Celu"));
  }
}
