// Differential: folding batch_norm into conv keeps outputs and removes the node.
#include "compiler/passes/fold_batch_norm.h"

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

ir::ExportedProgram conv_bn(bool with_bias, bool conv_output_also_returned) {
  std::mt19937 rng(3);
  GraphBuilder b;
  auto x = b.input("x", DType::Float32, {1, 3, 6, 6});
  auto w = b.constant_f32("w", {4, 3, 3, 3}, random_floats(4 * 27, rng));
  std::vector<ir::ValueId> conv_inputs = {x, w};
  if (with_bias) conv_inputs.push_back(b.constant_f32("b", {4}, random_floats(4, rng)));
  auto conv = b.op(EdgeOp::Conv, conv_inputs,
                   {{"strides", std::vector<int64_t>{1, 1}},
                    {"pads", std::vector<int64_t>{1, 1, 1, 1}},
                    {"dilations", std::vector<int64_t>{1, 1}},
                    {"group", int64_t{1}}});
  auto y = b.op(
      EdgeOp::BatchNorm,
      {conv, b.constant_f32("gamma", {4}, random_floats(4, rng, 0.5f, 1.5f)),
       b.constant_f32("beta", {4}, random_floats(4, rng)), b.constant_f32("mean", {4}, random_floats(4, rng)),
       b.constant_f32("var", {4}, random_floats(4, rng, 0.2f, 2.0f))},
      {{"epsilon", 1e-5f}});
  b.output(y, "y");
  if (conv_output_also_returned) b.output(conv, "conv_out");
  return b.build();
}

void check_same_outputs(const ir::ExportedProgram& before, const ir::ExportedProgram& after) {
  std::mt19937 rng(9);
  testing::check_same_float_outputs(before, after, {testing::as_bytes(random_floats(3 * 36, rng))}, 1e-5);
}

}  // namespace

TEST_CASE("batch_norm after conv folds into the conv's weights", "[passes][fold_batch_norm]") {
  for (bool with_bias : {false, true}) {
    const ir::ExportedProgram before = conv_bn(with_bias, false);
    ir::ExportedProgram after = conv_bn(with_bias, false);
    CHECK(passes::fold_batch_norm(after.graph) == 1);
    passes::eliminate_dead_code(after.graph);
    REQUIRE(after.graph.num_live_nodes() == 1);
    const ir::Node& conv = after.graph.nodes()[0];
    CHECK(conv.op == EdgeOp::Conv);
    CHECK(conv.meta.debug_handles == std::vector<int32_t>{1, 2});  // conv's and batch_norm's
    check_same_outputs(before, after);
  }
}

TEST_CASE("batch_norm is not folded when the conv output is read elsewhere", "[passes][fold_batch_norm]") {
  ir::ExportedProgram p = conv_bn(true, true);
  CHECK(passes::fold_batch_norm(p.graph) == 0);
  CHECK(p.graph.num_live_nodes() == 2);
}
