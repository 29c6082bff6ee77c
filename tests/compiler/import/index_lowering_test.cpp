// Import of ONNX Einsum, TopK, CumSum, ReduceSum, Softmax and the indexed
// gathers and scatters: equations are normalized to the explicit edge form,
// shape-setting inputs are constant or checked at run time against the
// declared output type, constant indices are checked at compile time, and
// opset-dependent semantics pick the right edge attributes.
#include <onnx/onnx_pb.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "compiler/common/compile_error.h"
#include "compiler/import/onnx/importer.h"
#include "tests/support/temp_files.h"

namespace {

namespace fs = std::filesystem;
using etc::EdgeOp;

struct Model {
  onnx::ModelProto model;
  onnx::GraphProto* g = model.mutable_graph();

  explicit Model(int64_t opset) {
    model.set_ir_version(8);
    model.add_opset_import()->set_version(opset);
    g->set_name("index_test");
  }
  static void value(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name,
                    std::vector<int64_t> dims, int32_t type = onnx::TensorProto::FLOAT) {
    auto* v = list->Add();
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(type);
    t->mutable_shape();  // present even for a scalar
    for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
  }
  void input(const std::string& name, std::vector<int64_t> dims, int32_t type = onnx::TensorProto::FLOAT) {
    value(g->mutable_input(), name, dims, type);
  }
  void output(const std::string& name, std::vector<int64_t> dims, int32_t type = onnx::TensorProto::FLOAT) {
    value(g->mutable_output(), name, dims, type);
  }
  onnx::NodeProto* node(const std::string& op, std::vector<std::string> ins, std::vector<std::string> outs) {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(op + "_node");
    for (auto& i : ins) n->add_input(i);
    for (auto& o : outs) n->add_output(o);
    return n;
  }
  static void attr(onnx::NodeProto* n, const std::string& name, const std::string& s) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(s);
  }
  static void attr(onnx::NodeProto* n, const std::string& name, int64_t i) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(i);
  }
  void int64s(const std::string& name, std::vector<int64_t> dims, const std::vector<int64_t>& values) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    for (int64_t d : dims) t->add_dims(d);
    for (int64_t v : values) t->add_int64_data(v);
  }
  etc::ir::ExportedProgram import(const std::string& file) {
    const fs::path p = etc::testing::test_temp_path("index_test_" + file + ".onnx");
    {
      std::ofstream out(p, std::ios::binary);
      model.SerializeToOstream(&out);
    }
    return etc::onnx_import::import_onnx(p.string());
  }
};

const etc::ir::Node& only_node(const etc::ir::ExportedProgram& p, EdgeOp op) {
  const etc::ir::Node* found = nullptr;
  for (const auto& n : p.graph.nodes())
    if (!n.dead && n.op == op) {
      REQUIRE(found == nullptr);
      found = &n;
    }
  REQUIRE(found != nullptr);
  return *found;
}

// int64 operands: float32 ones of a matrix product lower to MatMul instead.
etc::ir::ExportedProgram einsum_program(const std::string& eq, std::vector<std::vector<int64_t>> shapes,
                                        std::vector<int64_t> out_shape, int32_t type) {
  Model m(12);
  std::vector<std::string> ins;
  for (size_t i = 0; i < shapes.size(); ++i) {
    ins.push_back("x" + std::to_string(i));
    m.input(ins.back(), shapes[i], type);
  }
  Model::attr(m.node("Einsum", ins, {"y"}), "equation", eq);
  m.output("y", out_shape, type);
  return m.import("einsum");
}

std::string equation_of(const std::string& eq, std::vector<std::vector<int64_t>> shapes,
                        std::vector<int64_t> out_shape) {
  const auto p = einsum_program(eq, std::move(shapes), std::move(out_shape), onnx::TensorProto::INT64);
  const auto* v = only_node(p, EdgeOp::Einsum).attrs.find("equation");
  REQUIRE(v != nullptr);
  return std::get<std::string>(*v);
}

}  // namespace

TEST_CASE("einsum equations are normalized to the explicit edge form", "[import][index]") {
  CHECK(equation_of("ij,jk", {{2, 3}, {3, 4}}, {2, 4}) == "ij,jk->ik");
  CHECK(equation_of("ba", {{2, 3}}, {3, 2}) == "ba->ab");  // implicit output sorts: a transpose
  CHECK(equation_of("i, i", {{5}, {5}}, {}) == "i,i->");
  CHECK(equation_of("...ii ->...i", {{3, 5, 5}}, {3, 5}) == "Aii->Ai");
  // Ellipsis dims align right: the rank-1 batch of x1 is the last of x0's two.
  CHECK(equation_of("...ij,...jk", {{7, 2, 2, 3}, {2, 3, 4}}, {7, 2, 2, 4}) == "ABij,Bjk->ABik");
}

// The live nodes' ops, in order.
std::vector<EdgeOp> ops_of(const etc::ir::ExportedProgram& p) {
  std::vector<EdgeOp> ops;
  for (const auto& n : p.graph.nodes())
    if (!n.dead) ops.push_back(n.op);
  return ops;
}

TEST_CASE("float einsums that are matrix products lower to MatMul", "[import][index]") {
  constexpr int32_t kFloat = onnx::TensorProto::FLOAT;
  using V = std::vector<EdgeOp>;
  // Attention scores (MaxViT): the second operand transposed, then a batched MatMul.
  CHECK(ops_of(einsum_program("bghid,bghjd->bghij", {{1, 2, 3, 5, 8}, {1, 2, 3, 7, 8}}, {1, 2, 3, 5, 7},
                              kFloat)) == V{EdgeOp::Transpose, EdgeOp::MatMul});
  CHECK(ops_of(einsum_program("bhij,bhjd->bhid", {{2, 3, 5, 7}, {2, 3, 7, 4}}, {2, 3, 5, 4}, kFloat)) ==
        V{EdgeOp::MatMul});
  // Two contracted labels merge into one K; the output order needs a transpose.
  CHECK(ops_of(einsum_program("ikl,klj->ji", {{2, 3, 4}, {3, 4, 5}}, {5, 2}, kFloat)) ==
        V{EdgeOp::Reshape, EdgeOp::Reshape, EdgeOp::MatMul, EdgeOp::Transpose});
  // Not matrix products: a diagonal, a label summed over one operand alone.
  CHECK(ops_of(einsum_program("ii,ij->ij", {{3, 3}, {3, 4}}, {3, 4}, kFloat)) == V{EdgeOp::Einsum});
  CHECK(ops_of(einsum_program("ij,kl->ik", {{2, 3}, {4, 5}}, {2, 4}, kFloat)) == V{EdgeOp::Einsum});
}

TEST_CASE("einsum with a term that does not match its input's rank is rejected", "[import][index]") {
  REQUIRE_THROWS_AS(equation_of("ijk,jk", {{2, 3}, {3, 4}}, {2, 4}), etc::CompileError);
}

TEST_CASE("TopK with a computed k takes k from the declared output and keeps the input", "[import][index]") {
  Model m(11);
  m.input("x", {3, 4});
  m.input("k", {1}, onnx::TensorProto::INT64);
  m.node("TopK", {"x", "k"}, {"v", "i"});
  m.output("v", {3, 2});
  m.output("i", {3, 2}, onnx::TensorProto::INT64);
  const auto p = m.import("topk");
  const auto& n = only_node(p, EdgeOp::TopK);
  REQUIRE(n.inputs.size() == 2);
  REQUIRE(std::get<int64_t>(*n.attrs.find("k")) == 2);
}

TEST_CASE("TopK with a computed k and no declared output type is rejected naming k", "[import][index]") {
  Model m(11);
  m.input("x", {3, 4});
  m.input("k", {1}, onnx::TensorProto::INT64);
  m.node("TopK", {"x", "k"}, {"v", "i"});
  m.output("v", {3, 2});
  m.output("i", {3, 2}, onnx::TensorProto::INT64);
  for (auto& out : *m.g->mutable_output())
    out.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_param("k");
  REQUIRE_THROWS_WITH(m.import("topk_undeclared"),
                      Catch::Contains("k (input 1)") && Catch::Contains("undeclared"));
}

TEST_CASE("CumSum with a computed axis keeps the axis as a kernel input", "[import][index]") {
  Model m(14);
  m.input("x", {2, 3});
  m.input("axis", {}, onnx::TensorProto::INT32);
  m.node("CumSum", {"x", "axis"}, {"y"});
  m.output("y", {2, 3});
  const auto p = m.import("cumsum");
  REQUIRE(only_node(p, EdgeOp::CumSum).inputs.size() == 2);
}

TEST_CASE("ReduceSum with an axes input known to be empty honours noop_with_empty_axes", "[import][reduce]") {
  for (int64_t noop : {0, 1}) {
    Model m(13);
    m.input("x", {2, 3});
    m.input("axes", {0}, onnx::TensorProto::INT64);
    Model::attr(m.node("ReduceSum", {"x", "axes"}, {"y"}), "noop_with_empty_axes", noop);
    m.output("y", noop ? std::vector<int64_t>{2, 3} : std::vector<int64_t>{1, 1});
    const auto p = m.import("reduce_sum");
    const auto& axes = std::get<std::vector<int64_t>>(*only_node(p, EdgeOp::ReduceSum).attrs.find("axes"));
    REQUIRE(axes == (noop ? std::vector<int64_t>{} : std::vector<int64_t>{0, 1}));
  }
}

TEST_CASE("ReduceSum with computed axes takes the declared output shape", "[import][reduce]") {
  Model m(13);
  m.input("x", {2, 3});
  m.input("axes", {1}, onnx::TensorProto::INT64);
  Model::attr(m.node("ReduceSum", {"x", "axes"}, {"y"}), "keepdims", int64_t{0});
  m.output("y", {2});
  const auto p = m.import("reduce_sum_runtime");
  const auto& n = only_node(p, EdgeOp::ReduceSum);
  REQUIRE(n.inputs.size() == 2);
  REQUIRE(std::get<std::vector<int64_t>>(*n.attrs.find("shape")) == std::vector<int64_t>{2});
}

TEST_CASE("ReduceSum with computed axes and no declared output type is rejected", "[import][reduce]") {
  Model m(13);
  m.input("x", {2, 3});
  m.input("axes", {1}, onnx::TensorProto::INT64);
  m.node("ReduceSum", {"x", "axes"}, {"y"});
  m.output("y", {2, 1});
  m.g->mutable_output(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(1)
      ->set_dim_param("n");
  REQUIRE_THROWS_WITH(m.import("reduce_sum_undeclared"),
                      Catch::Contains("axes") && Catch::Contains("undeclared"));
}

TEST_CASE("Softmax before opset 13 flattens from the axis; from 13 it is per-axis", "[import][softmax]") {
  for (int64_t opset : {11, 13}) {
    Model m(opset);
    m.input("x", {2, 3, 4});
    m.node("Softmax", {"x"}, {"y"});
    m.output("y", {2, 3, 4});
    const auto p = m.import("softmax");
    const auto& n = only_node(p, EdgeOp::Softmax);
    const int64_t axis = std::get<int64_t>(*n.attrs.find("axis"));
    const int64_t flatten = std::get<int64_t>(*n.attrs.find("flatten"));
    if (opset == 11) {
      REQUIRE(axis == 1);
      REQUIRE(flatten == 1);
    } else {
      REQUIRE(axis == 2);
      REQUIRE(flatten == 0);
    }
  }
}

TEST_CASE("ScatterND and ScatterElements take their reduction from opset 16, none before",
          "[import][index]") {
  for (int64_t opset : {13, 16}) {
    for (const char* op : {"ScatterND", "ScatterElements"}) {
      Model m(opset);
      m.input("x", {4, 2});
      m.input("i", {1, 1}, onnx::TensorProto::INT64);
      m.input("u", std::string(op) == "ScatterND" ? std::vector<int64_t>{1, 2} : std::vector<int64_t>{1, 1});
      auto* n = m.node(op, {"x", "i", "u"}, {"y"});
      if (opset >= 16) Model::attr(n, "reduction", std::string("mul"));
      m.output("y", {4, 2});
      const auto p = m.import(std::string("scatter_") + op);
      const EdgeOp edge = std::string(op) == "ScatterND" ? EdgeOp::ScatterNd : EdgeOp::ScatterElements;
      REQUIRE(std::get<std::string>(*only_node(p, edge).attrs.find("reduction")) ==
              (opset >= 16 ? "mul" : "none"));
    }
  }
}

TEST_CASE("GatherElements and GatherND with constant indices out of range fail to compile",
          "[import][index]") {
  {
    Model m(13);
    m.input("x", {2, 3});
    m.int64s("i", {2, 1}, {2, -4});
    Model::attr(m.node("GatherElements", {"x", "i"}, {"y"}), "axis", int64_t{-1});
    m.output("y", {2, 1});
    REQUIRE_THROWS_WITH(
        m.import("gather_elements_bad"),
        Catch::Contains("GatherElements_node") && Catch::Contains("index -4 is out of range for axis 1"));
  }
  {
    Model m(13);
    m.input("x", {2, 3});
    m.int64s("i", {1, 2}, {1, 3});
    m.node("GatherND", {"x", "i"}, {"y"});
    m.output("y", {1});
    REQUIRE_THROWS_WITH(
        m.import("gather_nd_bad"),
        Catch::Contains("GatherND_node") && Catch::Contains("index 3 is out of range for data dim 1"));
  }
}
