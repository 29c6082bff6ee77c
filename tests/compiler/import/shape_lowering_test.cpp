// Import of ONNX shape ops: shape subgraphs fold away at import, ops that do
// not move data create no nodes, shape arguments computed at run time take
// the declared output shape (or are rejected when it is undeclared).
#include <onnx/onnx_pb.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "compiler/common/compile_error.h"
#include "compiler/import/onnx/importer.h"
#include "tests/support/run_program.h"
#include "tests/support/temp_files.h"

namespace {

namespace fs = std::filesystem;
using etc::EdgeOp;

// A one-graph model under construction; save() writes it to a temp file.
struct ModelBuilder {
  onnx::ModelProto model;
  onnx::GraphProto* g = model.mutable_graph();

  explicit ModelBuilder(int64_t opset) {
    model.set_ir_version(8);
    model.add_opset_import()->set_version(opset);
    g->set_name("shape_test");
  }
  void value(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name,
             std::vector<int64_t> dims) {
    auto* v = list->Add();
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
  }
  void input(const std::string& name, std::vector<int64_t> dims) { value(g->mutable_input(), name, dims); }
  void int_input(const std::string& name, std::vector<int64_t> dims) {
    value(g->mutable_input(), name, dims);
    g->mutable_input()->rbegin()->mutable_type()->mutable_tensor_type()->set_elem_type(
        onnx::TensorProto::INT64);
  }
  void output(const std::string& name, std::vector<int64_t> dims) { value(g->mutable_output(), name, dims); }
  void ints(const std::string& name, std::vector<int64_t> values, bool scalar = false) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    if (!scalar) t->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
  }
  onnx::NodeProto* node(const std::string& op, std::vector<std::string> ins, std::vector<std::string> outs) {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(op + "_" + std::to_string(g->node_size()));
    for (auto& i : ins) n->add_input(i);
    for (auto& o : outs) n->add_output(o);
    return n;
  }
  std::string save(const std::string& file) {
    const fs::path p = etc::testing::test_temp_path("shape_test_" + file + ".onnx");
    std::ofstream out(p, std::ios::binary);
    model.SerializeToOstream(&out);
    return p.string();
  }
};

std::vector<const etc::ir::Node*> live_nodes(const etc::ir::ExportedProgram& p) {
  std::vector<const etc::ir::Node*> nodes;
  for (const auto& n : p.graph.nodes())
    if (!n.dead) nodes.push_back(&n);
  return nodes;
}

}  // namespace

TEST_CASE("Shape -> Gather -> Unsqueeze -> Concat -> Reshape folds to one reshape", "[import][shape]") {
  ModelBuilder m(13);
  m.input("x", {2, 3, 4});
  m.ints("zero", {0}, true);
  m.ints("axes", {0});
  m.ints("minus_one", {-1});
  m.node("Shape", {"x"}, {"s"});
  m.node("Gather", {"s", "zero"}, {"batch"});
  m.node("Unsqueeze", {"batch", "axes"}, {"batch1"});
  m.node("Concat", {"batch1", "minus_one"}, {"target"})->add_attribute()->CopyFrom([] {
    onnx::AttributeProto a;
    a.set_name("axis");
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(0);
    return a;
  }());
  m.node("Reshape", {"x", "target"}, {"y"});
  m.output("y", {2, 12});
  const auto program = etc::onnx_import::import_onnx(m.save("fold"));
  const auto nodes = live_nodes(program);
  REQUIRE(nodes.size() == 1);
  CHECK(nodes[0]->op == EdgeOp::Reshape);
  const auto* shape = std::get_if<std::vector<int64_t>>(nodes[0]->attrs.find("shape"));
  REQUIRE(shape != nullptr);
  CHECK(*shape == std::vector<int64_t>{2, 12});
}

TEST_CASE("Identity, Dropout and unit-dim transposes create no copies", "[import][shape]") {
  ModelBuilder m(13);
  m.input("x", {1, 3, 1, 4});
  m.node("Identity", {"x"}, {"a"});
  m.node("Dropout", {"a"}, {"b"});
  auto* t = m.node("Transpose", {"b"}, {"c"});
  auto* perm = t->add_attribute();
  perm->set_name("perm");
  perm->set_type(onnx::AttributeProto::INTS);
  for (int64_t p : {2, 1, 0, 3}) perm->add_ints(p);
  m.node("Relu", {"c"}, {"y"});
  m.output("y", {1, 3, 1, 4});
  const auto program = etc::onnx_import::import_onnx(m.save("alias"));
  const auto nodes = live_nodes(program);
  REQUIRE(nodes.size() == 1);
  CHECK(nodes[0]->op == EdgeOp::Relu);
  CHECK(nodes[0]->inputs[0] == program.graph.inputs()[0]);
}

TEST_CASE("a slice with runtime starts and no static output type is rejected naming the node and input",
          "[import][shape]") {
  ModelBuilder m(13);
  m.input("x", {4});
  m.int_input("starts", {1});
  m.ints("ends", {3});
  m.node("Slice", {"x", "starts", "ends"}, {"y"});
  auto* y = m.g->add_output();
  y->set_name("y");
  y->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  y->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_param("n");  // not static
  try {
    etc::onnx_import::import_onnx(m.save("slice"));
    FAIL("import should have failed");
  } catch (const etc::CompileError& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(what.find("Slice_1") != std::string::npos);
    CHECK(what.find("starts") != std::string::npos);
    CHECK(what.find("undeclared") != std::string::npos);
  }
}

TEST_CASE("reshape, slice and pad with run-time arguments run with the declared output shapes",
          "[import][shape][runtime_args]") {
  ModelBuilder m(13);
  m.input("x", {4, 2, 3});
  m.int_input("shape", {2});
  m.int_input("starts", {1});
  m.int_input("pads", {4});
  m.ints("ends", {1000});
  m.ints("axes", {1});
  m.node("Reshape", {"x", "shape"}, {"r"});
  m.node("Slice", {"r", "starts", "ends", "axes"}, {"s"});
  m.node("Pad", {"s", "pads"}, {"y"});
  m.value(m.g->mutable_value_info(), "r", {4, 6});
  m.value(m.g->mutable_value_info(), "s", {4, 4});
  m.output("y", {5, 4});
  const auto program = etc::onnx_import::import_onnx(m.save("runtime_args"));
  std::vector<float> x(24);
  std::iota(x.begin(), x.end(), 0.0f);
  using etc::testing::as_bytes;
  // r = x as [4, 6]; s = r[:, 2:] ([4, 4]); y = s with one row of zeros on top.
  const auto run = [&](std::vector<int64_t> shape, std::vector<int64_t> starts, std::vector<int64_t> pads) {
    return etc::testing::run_program(program,
                                     {as_bytes(x), as_bytes(shape), as_bytes(starts), as_bytes(pads)});
  };
  const auto y = etc::testing::from_bytes<float>(run({0, -1}, {-4}, {1, 0, 0, 0})[0]);
  REQUIRE(y.size() == 20);
  for (int j = 0; j < 4; ++j) CHECK(y[j] == 0.0f);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) CHECK(y[4 + i * 4 + j] == static_cast<float>(i * 6 + 2 + j));
  // Arguments that disagree with the declared shapes fail at run time naming the op.
  CHECK_THROWS_WITH(run({3, -1}, {2}, {1, 0, 0, 0}), Catch::Contains("reshape"));
  CHECK_THROWS_WITH(run({4, 6}, {1}, {1, 0, 0, 0}), Catch::Contains("slice"));
  CHECK_THROWS_WITH(run({4, 6}, {2}, {0, 1, 1, 0}), Catch::Contains("pad: run-time pads [0, 1, 1, 0]"));
}
