// Differential: 1-D convolutions rewritten as 2-D ones of height 1 keep their
// outputs (strides, pads, dilations, groups, a fused clamp, a weight computed
// at run time), and back-to-back ones meet with no reshape between them.
#include "compiler/passes/conv1d_as_2d.h"

#include <catch2/catch.hpp>
#include <random>

#include "compiler/ir/verifier.h"
#include "compiler/passes/dead_code.h"
#include "tests/support/differential.h"
#include "tests/support/graph_builder.h"
#include "tests/support/random.h"

using namespace etc;
using etc::testing::GraphBuilder;
using etc::testing::random_floats;

namespace {

ir::Attrs conv1d_attrs(int64_t stride, int64_t pad_begin, int64_t pad_end, int64_t dilation, int64_t group) {
  return {{"strides", std::vector<int64_t>{stride}},
          {"pads", std::vector<int64_t>{pad_begin, pad_end}},
          {"dilations", std::vector<int64_t>{dilation}},
          {"group", group}};
}

size_t count_op(const ir::Graph& g, EdgeOp op) {
  size_t n = 0;
  for (const ir::Node& node : g.nodes()) n += !node.dead && node.op == op;
  return n;
}

ir::ExportedProgram rewritten(ir::ExportedProgram p, size_t expect_rewritten) {
  CHECK(passes::conv1d_as_2d(p.graph) == expect_rewritten);
  passes::collapse_reshapes(p.graph);
  passes::eliminate_dead_code(p.graph);
  REQUIRE(ir::verify(p.graph).ok());
  return p;
}

}  // namespace

TEST_CASE("conv1d_as_2d keeps the outputs of 1-D convolutions", "[passes][conv1d]") {
  struct Case {
    int64_t stride, pad_begin, pad_end, dilation, group;
    bool clamp, runtime_weight;
  };
  for (const Case& c : {Case{1, 0, 0, 1, 1, false, false}, Case{2, 1, 2, 1, 1, true, false},
                        Case{1, 2, 2, 2, 2, false, false}, Case{3, 1, 0, 1, 4, true, false},
                        Case{1, 1, 1, 1, 1, false, true}}) {
    INFO("stride " << c.stride << " pads " << c.pad_begin << "," << c.pad_end << " dilation " << c.dilation
                   << " group " << c.group << " clamp " << c.clamp << " runtime weight " << c.runtime_weight);
    std::mt19937 rng(7);
    GraphBuilder b;
    auto x = b.input("x", DType::Float32, {2, 4, 19});
    auto w = c.runtime_weight
                 ? b.input("w", DType::Float32, {8, 4 / c.group, 3})
                 : b.constant_f32("w", {8, 4 / c.group, 3}, random_floats(8 * (4 / c.group) * 3, rng));
    auto bias = b.constant_f32("b", {8}, random_floats(8, rng));
    ir::Attrs attrs = conv1d_attrs(c.stride, c.pad_begin, c.pad_end, c.dilation, c.group);
    if (c.clamp) attrs.set("clamp_min", 0.0f).set("clamp_max", 0.5f);
    b.output(b.op(EdgeOp::Conv, {x, w, bias}, attrs), "y");
    const ir::ExportedProgram before = b.build();
    const ir::ExportedProgram after = rewritten(before, 1);
    for (const ir::Node& n : after.graph.nodes())
      if (n.op == EdgeOp::Conv) CHECK(after.graph.value(n.inputs[0]).spec.shape.rank() == 4);
    std::vector<std::vector<uint8_t>> inputs{testing::as_bytes(random_floats(2 * 4 * 19, rng, -2, 2))};
    if (c.runtime_weight) inputs.push_back(testing::as_bytes(random_floats(8 * 4 * 3, rng, -1, 1)));
    testing::check_same_float_outputs(before, after, inputs, 1e-6);
  }
}

TEST_CASE("back-to-back 1-D convolutions meet as 2-D ones", "[passes][conv1d]") {
  std::mt19937 rng(8);
  GraphBuilder b;
  auto x = b.input("x", DType::Float32, {1, 3, 32});
  auto w1 = b.constant_f32("w1", {8, 3, 5}, random_floats(8 * 3 * 5, rng));
  auto w2 = b.constant_f32("w2", {4, 8, 3}, random_floats(4 * 8 * 3, rng));
  auto h = b.op(EdgeOp::Conv, {x, w1}, conv1d_attrs(2, 2, 2, 1, 1));
  b.output(b.op(EdgeOp::Conv, {h, w2}, conv1d_attrs(1, 1, 1, 1, 1)), "y");
  const ir::ExportedProgram before = b.build();
  const ir::ExportedProgram after = rewritten(before, 2);
  // One reshape in, one out: the pair between the convolutions collapsed away.
  CHECK(count_op(after.graph, EdgeOp::Reshape) == 2);
  testing::check_same_float_outputs(before, after, {testing::as_bytes(random_floats(3 * 32, rng, -2, 2))},
                                    1e-6);
}

TEST_CASE("collapse_reshapes keeps a reshape whose middle value is read elsewhere", "[passes][conv1d]") {
  GraphBuilder b;
  auto x = b.input("x", DType::Float32, {2, 6});
  auto mid = b.op(EdgeOp::Reshape, {x}, ir::Attrs{{"shape", std::vector<int64_t>{3, 4}}});
  auto back = b.op(EdgeOp::Reshape, {mid}, ir::Attrs{{"shape", std::vector<int64_t>{2, 6}}});
  b.output(b.op(EdgeOp::Add, {back, x}), "y");
  b.output(b.op(EdgeOp::Relu, {mid}), "z");
  ir::ExportedProgram p = b.build();
  // `back` reshapes `mid` back to x's shape: it is x, and goes; `mid` has
  // another reader: it stays.
  CHECK(passes::collapse_reshapes(p.graph) == 1);
  passes::eliminate_dead_code(p.graph);
  CHECK(count_op(p.graph, EdgeOp::Reshape) == 1);
  REQUIRE(ir::verify(p.graph).ok());
}
