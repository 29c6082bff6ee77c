#include "compiler/ir/verifier.h"

#include <catch2/catch.hpp>

#include "compiler/ir/printer.h"
#include "tests/support/graph_builder.h"

using namespace etc;
using etc::testing::GraphBuilder;

TEST_CASE("a well-formed graph verifies and prints one line per node", "[ir]") {
  GraphBuilder b;
  auto x = b.input("x", DType::Float32, {2, 3});
  auto y = b.op(EdgeOp::Relu, {b.op(EdgeOp::Neg, {x})});
  b.output(y, "y");
  const ir::ExportedProgram p = b.build();
  CHECK(ir::verify(p.graph).ok());
  const std::string text = ir::print(p.graph);
  CHECK(text.find("neg(%x)") != std::string::npos);
  CHECK(text.find("%y: float32[2, 3] = relu(") != std::string::npos);
  CHECK(text.find("@2") != std::string::npos);  // the relu's debug handle
}

TEST_CASE("the verifier names a node whose output type disagrees with its op", "[ir]") {
  GraphBuilder b;
  auto x = b.input("x", DType::Float32, {2, 3});
  auto y = b.op(EdgeOp::Relu, {x});
  b.output(y);
  ir::ExportedProgram p = b.build();
  p.graph.value(y).spec.shape = Shape{3, 2};
  const Status s = ir::verify(p.graph);
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().find("relu") != std::string::npos);
  CHECK(s.message().find("float32[2, 3]") != std::string::npos);
}

TEST_CASE("the verifier rejects a read before definition", "[ir]") {
  GraphBuilder b;
  auto x = b.input("x", DType::Float32, {4});
  auto a = b.op(EdgeOp::Neg, {x});
  auto c = b.op(EdgeOp::Abs, {a});
  b.output(c);
  ir::ExportedProgram p = b.build();
  std::swap(p.graph.nodes()[0], p.graph.nodes()[1]);  // abs now runs before neg
  const Status s = ir::verify(p.graph);
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().find("before it is defined") != std::string::npos);
}
