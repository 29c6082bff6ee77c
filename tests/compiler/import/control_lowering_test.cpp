// Import of ONNX If with a compile-time constant condition: it selects its
// branch, whose nodes (reading the outer graph's values, with initializers
// of their own, nested Ifs) lower in place of the If and run; an
// unsupported op inside a branch is refused naming the node and the reason.
// (Run-time conditions: tests/integration/control_flow_test.cpp.)
#include <onnx/onnx_pb.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "compiler/common/compile_error.h"
#include "compiler/import/onnx/importer.h"
#include "tests/support/onnx_builder.h"
#include "tests/support/run_program.h"

namespace {

using namespace etc::testing::onnx_builder;

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

TEST_CASE("an If with an unsupported op in a branch is refused", "[import][control]") {
  onnx::ModelProto m = model_with_input();
  bool_constant(m.mutable_graph(), "c", true);
  add_if(m.mutable_graph(), "c", unary_branch("Relu", "t"), unary_branch("RandomUniformLike", "e"), "y",
         "choose");
  CHECK_THROWS_WITH(etc::onnx_import::import_onnx(save(m, "unsupported")),
                    Catch::Contains("e_node") && Catch::Contains("RandomUniformLike"));
}
