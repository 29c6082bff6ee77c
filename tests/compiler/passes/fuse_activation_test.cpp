// Differential: fusing relu / clip into conv, gemm and matmul keeps outputs and removes the node.
#include "compiler/passes/fuse_activation.h"

#include <catch2/catch.hpp>
#include <random>

#include "compiler/passes/dead_code.h"
#include "tests/support/differential.h"
#include "tests/support/graph_builder.h"
#include "tests/support/random.h"
#include "tests/support/run_program.h"

using namespace etc;
using etc::testing::GraphBuilder;
using etc::testing::random_floats;

namespace {

ir::Attrs conv_attrs(int64_t group) {
  return {{"strides", std::vector<int64_t>{1, 1}},
          {"pads", std::vector<int64_t>{1, 1, 1, 1}},
          {"dilations", std::vector<int64_t>{1, 1}},
          {"group", group}};
}

// x [1,4,6,6] -> conv (dense or depthwise) -> activation -> y; optionally also returns the conv output.
ir::ExportedProgram conv_act(EdgeOp act, ir::Attrs act_attrs, int64_t group, bool conv_output_also_returned) {
  std::mt19937 rng(3);
  GraphBuilder b;
  auto x = b.input("x", DType::Float32, {1, 4, 6, 6});
  const int64_t per_group = 4 / group;
  auto w = b.constant_f32("w", {4, per_group, 3, 3}, random_floats(4 * per_group * 9, rng));
  auto bias = b.constant_f32("b", {4}, random_floats(4, rng));
  auto conv = b.op(EdgeOp::Conv, {x, w, bias}, conv_attrs(group));
  auto y = b.op(act, {conv}, std::move(act_attrs));
  b.output(y, "y");
  if (conv_output_also_returned) b.output(conv, "conv_out");
  return b.build();
}

// x [3,8] -> gemm or matmul with a constant [8,5] -> activation -> y.
ir::ExportedProgram linear_act(EdgeOp producer, EdgeOp act, ir::Attrs act_attrs) {
  std::mt19937 rng(4);
  GraphBuilder b;
  auto x = b.input("x", DType::Float32, {3, 8});
  auto w = b.constant_f32("w", {8, 5}, random_floats(40, rng));
  std::vector<ir::ValueId> inputs = {x, w};
  if (producer == EdgeOp::Gemm) inputs.push_back(b.constant_f32("c", {5}, random_floats(5, rng)));
  auto y = b.op(act, {b.op(producer, inputs)}, std::move(act_attrs));
  b.output(y, "y");
  return b.build();
}

void check_same_outputs(const ir::ExportedProgram& before, const ir::ExportedProgram& after,
                        size_t inputs_n) {
  std::mt19937 rng(9);
  testing::check_same_float_outputs(before, after, {testing::as_bytes(random_floats(inputs_n, rng, -2, 2))},
                                    1e-6);
}

const ir::Attrs kRelu6{{"min", 0.0f}, {"max", 6.0f}};
const ir::Attrs kNarrowClip{{"min", -0.3f}, {"max", 0.2f}};

}  // namespace

TEST_CASE("relu and clip after conv fuse into the conv", "[passes][fuse_activation]") {
  for (int64_t group : {int64_t{1}, int64_t{4}}) {
    for (const auto& [act, attrs] : {std::pair{EdgeOp::Relu, ir::Attrs{}}, std::pair{EdgeOp::Clip, kRelu6},
                                     std::pair{EdgeOp::Clip, kNarrowClip}}) {
      const ir::ExportedProgram before = conv_act(act, attrs, group, false);
      ir::ExportedProgram after = conv_act(act, attrs, group, false);
      CHECK(passes::fuse_activation(after.graph) == 1);
      passes::eliminate_dead_code(after.graph);
      REQUIRE(after.graph.num_live_nodes() == 1);
      const ir::Node& conv = after.graph.nodes()[0];
      CHECK(conv.op == EdgeOp::Conv);
      CHECK(conv.attrs.find("clamp_min") != nullptr);
      CHECK((conv.attrs.find("clamp_max") != nullptr) == (act == EdgeOp::Clip));
      CHECK(conv.meta.debug_handles == std::vector<int32_t>{1, 2});  // conv's and the activation's
      check_same_outputs(before, after, 4 * 36);
    }
  }
}

TEST_CASE("relu and clip after gemm and matmul fuse into them", "[passes][fuse_activation]") {
  for (EdgeOp producer : {EdgeOp::Gemm, EdgeOp::MatMul}) {
    for (const auto& [act, attrs] :
         {std::pair{EdgeOp::Relu, ir::Attrs{}}, std::pair{EdgeOp::Clip, kNarrowClip}}) {
      const ir::ExportedProgram before = linear_act(producer, act, attrs);
      ir::ExportedProgram after = linear_act(producer, act, attrs);
      CHECK(passes::fuse_activation(after.graph) == 1);
      passes::eliminate_dead_code(after.graph);
      REQUIRE(after.graph.num_live_nodes() == 1);
      CHECK(after.graph.nodes()[0].op == producer);
      check_same_outputs(before, after, 3 * 8);
    }
  }
}

TEST_CASE("an activation is not fused when the producer output is read elsewhere",
          "[passes][fuse_activation]") {
  ir::ExportedProgram p = conv_act(EdgeOp::Relu, {}, 1, true);
  CHECK(passes::fuse_activation(p.graph) == 0);
  CHECK(p.graph.num_live_nodes() == 2);
}

TEST_CASE("a clip with min above max is not fused", "[passes][fuse_activation]") {
  ir::ExportedProgram p = conv_act(EdgeOp::Clip, {{"min", 1.0f}, {"max", 0.0f}}, 1, false);
  CHECK(passes::fuse_activation(p.graph) == 0);
  CHECK(p.graph.num_live_nodes() == 2);
}

TEST_CASE("a second activation is not fused into an already clamped producer", "[passes][fuse_activation]") {
  std::mt19937 rng(5);
  GraphBuilder b;
  auto x = b.input("x", DType::Float32, {2, 4});
  auto w = b.constant_f32("w", {4, 4}, random_floats(16, rng));
  auto y = b.op(EdgeOp::Clip, {b.op(EdgeOp::Relu, {b.op(EdgeOp::MatMul, {x, w})})}, kNarrowClip);
  b.output(y, "y");
  const ir::ExportedProgram before = b.build();
  ir::ExportedProgram after = before;
  CHECK(passes::fuse_activation(after.graph) == 1);
  passes::eliminate_dead_code(after.graph);
  CHECK(after.graph.num_live_nodes() == 2);
  check_same_outputs(before, after, 2 * 4);
}
