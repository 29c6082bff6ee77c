// Differential: folding batch_norm, and a per-channel Mul, Div, Add or Sub,
// into a conv keeps outputs and removes the node; what does not fold stays.
#include "compiler/passes/fold_into_conv.h"

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

// A 3x3 stride-1 convolution's attributes, padded to keep the size.
ir::Attrs conv3x3_same(int64_t group) {
  return {{"strides", std::vector<int64_t>{1, 1}},
          {"pads", std::vector<int64_t>{1, 1, 1, 1}},
          {"dilations", std::vector<int64_t>{1, 1}},
          {"group", group}};
}

// An inference batch_norm of x's `channels` channels with random parameters.
ir::ValueId batch_norm(GraphBuilder& b, ir::ValueId x, int64_t channels, std::mt19937& rng) {
  const auto n = static_cast<size_t>(channels);
  return b.op(EdgeOp::BatchNorm,
              {x, b.constant_f32("gamma", {channels}, random_floats(n, rng, 0.5f, 1.5f)),
               b.constant_f32("beta", {channels}, random_floats(n, rng)),
               b.constant_f32("mean", {channels}, random_floats(n, rng)),
               b.constant_f32("var", {channels}, random_floats(n, rng, 0.2f, 2.0f))},
              {{"epsilon", 1e-5f}});
}

ir::ExportedProgram conv_bn(bool with_bias, bool conv_output_also_returned) {
  std::mt19937 rng(3);
  GraphBuilder b;
  auto x = b.input("x", DType::Float32, {1, 3, 6, 6});
  auto w = b.constant_f32("w", {4, 3, 3, 3}, random_floats(4 * 27, rng));
  std::vector<ir::ValueId> conv_inputs = {x, w};
  if (with_bias) conv_inputs.push_back(b.constant_f32("b", {4}, random_floats(4, rng)));
  auto conv = b.op(EdgeOp::Conv, conv_inputs, conv3x3_same(1));
  auto y = batch_norm(b, conv, 4, rng);
  b.output(y, "y");
  if (conv_output_also_returned) b.output(conv, "conv_out");
  return b.build();
}

void check_same_outputs(const ir::ExportedProgram& before, const ir::ExportedProgram& after) {
  std::mt19937 rng(9);
  testing::check_same_float_outputs(before, after, {testing::as_bytes(random_floats(3 * 36, rng))}, 1e-5);
}

}  // namespace

TEST_CASE("batch_norm after conv folds into the conv's weights", "[passes][fold_into_conv]") {
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

TEST_CASE("batch_norm is not folded when the conv output is read elsewhere", "[passes][fold_into_conv]") {
  ir::ExportedProgram p = conv_bn(true, true);
  CHECK(passes::fold_batch_norm(p.graph) == 0);
  CHECK(p.graph.num_live_nodes() == 2);
}

namespace {

// conv (4 output channels, `group` groups) -> each step of `chain` in turn
// -> y; a step is an op and a constant of the given shape (on the left
// when `left`).
struct Step {
  EdgeOp op;
  Shape shape;
  bool left = false;
};

ir::ExportedProgram conv_chain(const std::vector<Step>& chain, int64_t group = 1, bool with_bias = true,
                               bool conv_output_also_returned = false) {
  std::mt19937 rng(4);
  GraphBuilder b;
  auto x = b.input("x", DType::Float32, {1, 4, 6, 6});
  auto w = b.constant_f32("w", {4, 4 / group, 3, 3}, random_floats(static_cast<size_t>(4 / group * 36), rng));
  std::vector<ir::ValueId> conv_inputs = {x, w};
  if (with_bias) conv_inputs.push_back(b.constant_f32("b", {4}, random_floats(4, rng)));
  auto conv = b.op(EdgeOp::Conv, conv_inputs, conv3x3_same(group));
  ir::ValueId y = conv;
  int k = 0;
  for (const Step& s : chain) {
    const auto c = b.constant_f32("c" + std::to_string(k++), s.shape,
                                  random_floats(static_cast<size_t>(s.shape.numel()), rng, 0.5f, 2.0f));
    y = s.left ? b.op(s.op, {c, y}) : b.op(s.op, {y, c});
  }
  b.output(y, "y");
  if (conv_output_also_returned) b.output(conv, "conv_out");
  return b.build();
}

size_t fold_and_check(const ir::ExportedProgram& before) {
  ir::ExportedProgram after = before;
  const size_t folded = passes::fold_conv_affine(after.graph);
  passes::eliminate_dead_code(after.graph);
  std::mt19937 rng(9);
  testing::check_same_float_outputs(before, after, {testing::as_bytes(random_floats(4 * 36, rng))}, 1e-5);
  CHECK(after.graph.num_live_nodes() == before.graph.num_live_nodes() - folded);
  return folded;
}

}  // namespace

TEST_CASE("a per-channel Mul, Div, Add or Sub after a conv folds into its weights and bias",
          "[passes][fold_into_conv]") {
  // PP-LCNetV3's learnable affine block: a scalar scale, then a scalar shift.
  CHECK(fold_and_check(conv_chain({{EdgeOp::Mul, Shape{1}}, {EdgeOp::Add, Shape{1}}})) == 2);
  // Per channel, in the shapes exporters write, on either side when it
  // commutes; a rank-0 scalar; a conv without bias; depthwise.
  CHECK(fold_and_check(conv_chain({{EdgeOp::Mul, Shape{4, 1, 1}, true}, {EdgeOp::Sub, Shape{1, 4, 1, 1}}})) ==
        2);
  CHECK(fold_and_check(conv_chain({{EdgeOp::Div, Shape{}}, {EdgeOp::Add, Shape{4, 1, 1}, true}}, 1, false)) ==
        2);
  CHECK(fold_and_check(conv_chain({{EdgeOp::Mul, Shape{1, 4, 1, 1}}}, 4)) == 1);
  {
    ir::ExportedProgram p = conv_chain({{EdgeOp::Mul, Shape{1}}, {EdgeOp::Add, Shape{1}}});
    REQUIRE(passes::fold_conv_affine(p.graph) == 2);
    passes::eliminate_dead_code(p.graph);
    REQUIRE(p.graph.num_live_nodes() == 1);
    CHECK(p.graph.nodes()[0].meta.debug_handles == std::vector<int32_t>{1, 2, 3});
  }
}

TEST_CASE("what does not fold into a conv stays", "[passes][fold_into_conv]") {
  // c - x and c / x are not affine in x's scale alone.
  CHECK(fold_and_check(conv_chain({{EdgeOp::Sub, Shape{1}, true}})) == 0);
  CHECK(fold_and_check(conv_chain({{EdgeOp::Div, Shape{1}, true}})) == 0);
  // Varies over pixels, or over the wrong axis.
  CHECK(fold_and_check(conv_chain({{EdgeOp::Mul, Shape{1, 4, 6, 6}}})) == 0);
  CHECK(fold_and_check(conv_chain({{EdgeOp::Add, Shape{6}}})) == 0);
  CHECK(fold_and_check(conv_chain({{EdgeOp::Add, Shape{4, 1, 1, 1}}})) == 0);
  // Broadcasts the output to a higher rank.
  CHECK(fold_and_check(conv_chain({{EdgeOp::Mul, Shape{1, 1, 1, 1, 1}}})) == 0);
  // The conv's output is read elsewhere too.
  CHECK(fold_and_check(conv_chain({{EdgeOp::Mul, Shape{1}}}, 1, true, true)) == 0);
}

namespace {

// x [1, 4, 5, 5] -> conv_transpose (4 -> 6 channels in `group` groups,
// 3x3, stride 2, pads 1) -> Add of a per-channel bias -> batch_norm -> y:
// PP-OCR's detection head upsamples so.
ir::ExportedProgram conv_transpose_chain(int64_t group) {
  std::mt19937 rng(5);
  GraphBuilder b;
  auto x = b.input("x", DType::Float32, {1, 4, 5, 5});
  auto w =
      b.constant_f32("w", {4, 6 / group, 3, 3}, random_floats(static_cast<size_t>(4 * (6 / group) * 9), rng));
  auto conv = b.op(EdgeOp::ConvTranspose, {x, w},
                   {{"strides", std::vector<int64_t>{2, 2}},
                    {"pads", std::vector<int64_t>{1, 1, 1, 1}},
                    {"dilations", std::vector<int64_t>{1, 1}},
                    {"group", group}});
  auto biased = b.op(EdgeOp::Add, {conv, b.constant_f32("bias", {1, 6, 1, 1}, random_floats(6, rng))});
  auto y = batch_norm(b, biased, 6, rng);
  b.output(y, "y");
  return b.build();
}

}  // namespace

TEST_CASE("a bias Add and a batch_norm after a conv_transpose fold into it", "[passes][fold_into_conv]") {
  for (int64_t group : {1, 2}) {
    INFO("group " << group);
    const ir::ExportedProgram before = conv_transpose_chain(group);
    ir::ExportedProgram after = conv_transpose_chain(group);
    CHECK(passes::fold_conv_affine(after.graph) == 1);
    CHECK(passes::fold_batch_norm(after.graph) == 1);
    passes::eliminate_dead_code(after.graph);
    REQUIRE(after.graph.num_live_nodes() == 1);
    CHECK(after.graph.nodes()[0].op == EdgeOp::ConvTranspose);
    CHECK(after.graph.nodes()[0].meta.debug_handles == std::vector<int32_t>{1, 2, 3});
    std::mt19937 rng(11);
    testing::check_same_float_outputs(before, after, {testing::as_bytes(random_floats(4 * 25, rng))}, 1e-5);
  }
}
