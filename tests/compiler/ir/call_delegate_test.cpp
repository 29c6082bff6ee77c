// call_delegate nodes in the IR: the program verifier checks them against
// their lowered module, the printer shows them readably.
#include <catch2/catch.hpp>

#include "compiler/ir/printer.h"
#include "compiler/ir/verifier.h"
#include "tests/support/graph_builder.h"

namespace etc {
namespace {

using testing::GraphBuilder;

// The partition: add(x, w) → relu, as its own program.
std::shared_ptr<const ir::ExportedProgram> partition_program() {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {2, 3});
  const auto w = b.input("w", DType::Float32, {2, 3});
  b.output(b.op(EdgeOp::Relu, {b.op(EdgeOp::Add, {x, w})}), "r");
  return std::make_shared<const ir::ExportedProgram>(b.build());
}

// x, w → call_delegate[demo_0 → demo] → r → neg.
ir::ExportedProgram program_with_delegate() {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {2, 3});
  const auto w = b.constant_f32("w", {2, 3}, std::vector<float>(6, 1.f));
  b.output(b.op(EdgeOp::Neg, {x}), "out");
  ir::ExportedProgram p = b.build();
  ir::Graph& g = p.graph;
  // Put the delegate before the neg and make the neg read its output.
  const ir::ValueId r = g.add_value("r", TensorSpec{DType::Float32, Shape{2, 3}});
  ir::NodeMeta meta;
  meta.debug_handles = {7};
  meta.onnx_name = "demo_0";
  meta.onnx_op_type = "call_delegate";
  g.add_node(EdgeOp{}, {x, w}, {r}, {}, meta);
  std::swap(g.nodes()[0], g.nodes()[1]);
  g.nodes()[0].id = 0;
  g.nodes()[0].delegate = 0;
  g.nodes()[1].id = 1;
  g.nodes()[1].inputs = {r};
  g.value(r).producer = 0;
  g.value(g.nodes()[1].outputs[0]).producer = 1;
  p.delegates.push_back(ir::LoweredBackendModule{"demo", "demo_0", {1, 2, 3}, {}, {}, partition_program()});
  return p;
}

TEST_CASE("the verifier accepts a call_delegate node matching its lowered module", "[ir][backend]") {
  const ir::ExportedProgram p = program_with_delegate();
  const Status s = ir::verify(p);
  CHECK(s.message() == "");
  CHECK(s.ok());
  CHECK(ir::verify(p.graph).ok());
}

TEST_CASE("the verifier rejects a call_delegate node naming a missing delegate", "[ir][backend]") {
  ir::ExportedProgram p = program_with_delegate();
  p.graph.nodes()[0].delegate = 3;
  const Status s = ir::verify(p);
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.message(), Catch::Contains("calls delegate 3"));
  CHECK_THAT(s.message(), Catch::Contains("demo_0"));
}

TEST_CASE("the verifier rejects a call_delegate node whose inputs disagree with its module",
          "[ir][backend]") {
  ir::ExportedProgram count = program_with_delegate();
  count.graph.nodes()[0].inputs.pop_back();
  Status s = ir::verify(count);
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.message(), Catch::Contains("has 1 input but its lowered module's program has 2 inputs"));

  ir::ExportedProgram type = program_with_delegate();
  type.graph.nodes()[0].inputs = {0, 0};
  type.graph.value(0).spec = TensorSpec{DType::Int64, Shape{2, 3}};
  s = ir::verify(type);
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.message(),
             Catch::Contains("input 0 ('x') is int64[2, 3] but its lowered module expects float32[2, 3]"));
}

TEST_CASE("the verifier rejects a call_delegate node whose outputs disagree with its module",
          "[ir][backend]") {
  ir::ExportedProgram p = program_with_delegate();
  p.graph.value(p.graph.nodes()[0].outputs[0]).spec.shape = Shape{3, 2};
  p.graph.value(p.graph.nodes()[1].outputs[0]).spec.shape = Shape{3, 2};
  const Status s = ir::verify(p);
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.message(), Catch::Contains("output 0 ('r') is float32[3, 2]"));
}

TEST_CASE("the verifier rejects an absent call_delegate input", "[ir][backend]") {
  ir::ExportedProgram p = program_with_delegate();
  p.graph.nodes()[0].inputs[1] = ir::kNoValue;
  const Status s = ir::verify(p.graph);
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.message(), Catch::Contains("absent"));
}

TEST_CASE("the printer shows call_delegate nodes with their tag and backend", "[ir][backend]") {
  const ir::ExportedProgram p = program_with_delegate();
  const std::string text = ir::print(p);
  CHECK_THAT(text, Catch::Contains("%r: float32[2, 3] = call_delegate[demo_0 \u2192 demo](%x, %w)"));
  CHECK_THAT(text, Catch::Contains("# demo_0 (call_delegate) @7"));
  CHECK_THAT(text, Catch::Contains("delegate 0: demo_0 \u2192 demo, 3 bytes"));
  CHECK_THAT(ir::print(p.graph), Catch::Contains("= call_delegate[#0](%x, %w)"));
  CHECK(ir::describe(p.graph.nodes()[0]) == "call_delegate demo_0 (call_delegate)");
  CHECK(ir::node_ref(p.graph.nodes()[0]) == "'demo_0' (call_delegate)");
}

TEST_CASE("node_ref falls back to the edge op and node id", "[ir]") {
  ir::Node n;
  n.id = 4;
  n.op = EdgeOp::Relu;
  CHECK(ir::node_ref(n) == "#4 (relu)");
  n.meta.onnx_name = "Relu_9";
  n.meta.onnx_op_type = "Relu";
  CHECK(ir::node_ref(n) == "'Relu_9' (Relu)");
}

}  // namespace
}  // namespace etc
