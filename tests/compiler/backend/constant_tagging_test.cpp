// tag_constant_data: constants follow their readers into partitions; shared
// ones are copied (or refused), outside readers keep the original.
#include "compiler/backend/constant_tagging.h"

#include <catch2/catch.hpp>

#include "compiler/common/compile_error.h"
#include "tests/support/graph_builder.h"

using namespace etc;
using Catch::Matchers::Contains;
using etc::testing::GraphBuilder;

namespace {

// x [2]; w [2] constant; a = x + w, m = x * w, r = relu(w).
struct Shared {
  ir::ExportedProgram program;
  ir::ValueId w = ir::kNoValue;
  ir::NodeId add = -1, mul = -1, relu = -1;
};

Shared shared_constant(bool w_is_output = false) {
  GraphBuilder b;
  Shared s;
  auto x = b.input("x", DType::Float32, {2});
  s.w = b.constant_f32("w", {2}, {1.0f, 2.0f});
  b.output(b.op(EdgeOp::Add, {x, s.w}));
  b.output(b.op(EdgeOp::Mul, {x, s.w}));
  b.output(b.op(EdgeOp::Relu, {s.w}));
  if (w_is_output) b.output(s.w);
  s.program = b.build();
  s.add = 0, s.mul = 1, s.relu = 2;
  return s;
}

void tag(ir::ExportedProgram& p, ir::NodeId n, const std::string& t) {
  p.graph.node(n).meta.delegation_tag = t;
}

}  // namespace

TEST_CASE("a constant read by one partition only takes its tag", "[backend][constants]") {
  Shared s = shared_constant();
  for (ir::NodeId n : {s.add, s.mul, s.relu}) tag(s.program, n, "demo_0");
  const size_t values = s.program.graph.values().size();
  tag_constant_data(s.program);
  CHECK(s.program.graph.value(s.w).delegation_tag == "demo_0");
  CHECK(s.program.graph.values().size() == values);
}

TEST_CASE("a constant read by two partitions is copied for the second", "[backend][constants]") {
  Shared s = shared_constant();
  tag(s.program, s.add, "demo_0");
  tag(s.program, s.mul, "demo_1");
  tag(s.program, s.relu, "demo_1");
  tag_constant_data(s.program);
  const ir::Graph& g = s.program.graph;
  CHECK(g.value(s.w).delegation_tag == "demo_0");
  CHECK(g.node(s.add).inputs[1] == s.w);
  const ir::ValueId copy = g.node(s.mul).inputs[1];
  REQUIRE(copy != s.w);
  CHECK(g.node(s.relu).inputs[0] == copy);
  const ir::Value& c = g.value(copy);
  CHECK(c.name == "w#demo_1");
  CHECK(c.delegation_tag == "demo_1");
  CHECK(c.constant == g.value(s.w).constant);  // the same bytes, not a second buffer
  CHECK(c.spec == g.value(s.w).spec);
  CHECK(c.producer == -1);
}

TEST_CASE("without copies a constant shared by partitions is refused", "[backend][constants]") {
  Shared s = shared_constant();
  tag(s.program, s.add, "demo_0");
  tag(s.program, s.mul, "demo_1");
  tag(s.program, s.relu, "xnnpack_0");
  ConstantTaggingOptions options;
  options.allow_copies = false;
  CHECK_THROWS_WITH(tag_constant_data(s.program, options),
                    Contains("builder.onnx") && Contains("constant 'w'") &&
                        Contains("'demo_0', 'demo_1', 'xnnpack_0'") && Contains("node 'mul_2' (mul)") &&
                        Contains("copies are not allowed"));
}

TEST_CASE("a constant also read outside keeps an untagged original", "[backend][constants]") {
  Shared s = shared_constant();
  tag(s.program, s.add, "demo_0");
  tag_constant_data(s.program);
  const ir::Graph& g = s.program.graph;
  CHECK(g.value(s.w).delegation_tag.empty());
  CHECK(g.node(s.mul).inputs[1] == s.w);
  CHECK(g.node(s.relu).inputs[0] == s.w);
  const ir::ValueId copy = g.node(s.add).inputs[1];
  REQUIRE(copy != s.w);
  CHECK(g.value(copy).name == "w#demo_0");
  CHECK(g.value(copy).delegation_tag == "demo_0");

  // Without copies it stays outside and reaches the partition as an input.
  Shared t = shared_constant();
  tag(t.program, t.add, "demo_0");
  ConstantTaggingOptions options;
  options.allow_copies = false;
  const size_t values = t.program.graph.values().size();
  tag_constant_data(t.program, options);
  CHECK(t.program.graph.value(t.w).delegation_tag.empty());
  CHECK(t.program.graph.values().size() == values);
}

TEST_CASE("a constant that is a graph output keeps an untagged original", "[backend][constants]") {
  Shared s = shared_constant(/*w_is_output=*/true);
  for (ir::NodeId n : {s.add, s.mul, s.relu}) tag(s.program, n, "demo_0");
  tag_constant_data(s.program);
  const ir::Graph& g = s.program.graph;
  CHECK(g.value(s.w).delegation_tag.empty());
  CHECK(g.outputs().back() == s.w);
  const ir::ValueId copy = g.node(s.add).inputs[1];
  CHECK(copy != s.w);
  CHECK(g.node(s.mul).inputs[1] == copy);
  CHECK(g.value(copy).delegation_tag == "demo_0");
}

TEST_CASE("a call_delegate reader counts as outside", "[backend][constants]") {
  Shared s = shared_constant();
  tag(s.program, s.add, "demo_0");
  tag(s.program, s.mul, "demo_0");
  s.program.graph.node(s.relu).delegate = 0;
  tag_constant_data(s.program);
  CHECK(s.program.graph.value(s.w).delegation_tag.empty());
  CHECK(s.program.graph.node(s.relu).inputs[0] == s.w);
  CHECK(s.program.graph.node(s.add).inputs[1] != s.w);
}

TEST_CASE("constants below min_bytes stay untagged", "[backend][constants]") {
  Shared s = shared_constant();
  for (ir::NodeId n : {s.add, s.mul, s.relu}) tag(s.program, n, "demo_0");
  ConstantTaggingOptions options;
  options.min_bytes = 9;  // w has 8
  tag_constant_data(s.program, options);
  CHECK(s.program.graph.value(s.w).delegation_tag.empty());
  options.min_bytes = 8;
  tag_constant_data(s.program, options);
  CHECK(s.program.graph.value(s.w).delegation_tag == "demo_0");
}

TEST_CASE("constants already tagged or read by untagged nodes only are left alone", "[backend][constants]") {
  Shared s = shared_constant();
  tag_constant_data(s.program);
  CHECK(s.program.graph.value(s.w).delegation_tag.empty());

  tag(s.program, s.add, "demo_0");
  tag(s.program, s.mul, "demo_1");
  s.program.graph.value(s.w).delegation_tag = "chosen";
  const size_t values = s.program.graph.values().size();
  tag_constant_data(s.program);
  CHECK(s.program.graph.value(s.w).delegation_tag == "chosen");
  CHECK(s.program.graph.values().size() == values);
}
