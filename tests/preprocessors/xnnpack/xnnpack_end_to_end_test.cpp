// XNNPACK delegation end to end: partition → preprocess → program file →
// runtime with the XNNPACK backend, against the portable kernels.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>

#include "compiler/backend/to_backend.h"
#include "partitioners/register.h"
#include "partitioners/xnnpack/xnnpack_partitioner.h"
#include "preprocessors/register.h"
#include "runtime/backends/register_builtin.h"
#include "tests/support/differential.h"
#include "tests/support/graph_builder.h"
#include "tests/support/random.h"
#include "tests/support/run_program.h"

namespace etc {
namespace {

using testing::GraphBuilder;

ir::Attrs conv_attrs(int64_t group, std::vector<int64_t> pads, std::vector<int64_t> strides = {1, 1}) {
  return ir::Attrs{
      {"strides", strides}, {"pads", pads}, {"dilations", std::vector<int64_t>{1, 1}}, {"group", group}};
}

ir::Attrs pool_attrs(std::vector<int64_t> k, std::vector<int64_t> s, std::vector<int64_t> p) {
  return ir::Attrs{{"kernel_shape", k},
                   {"strides", s},
                   {"pads", p},
                   {"dilations", std::vector<int64_t>{1, 1}},
                   {"ceil_mode", int64_t{0}},
                   {"count_include_pad", int64_t{0}}};
}

std::vector<float> randoms(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  return testing::random_floats(n, rng);
}

// Lowers `program` to XNNPACK, checks every node went to the backend when
// `fully` is set, and compares outputs with the portable run.
void check_lowered(const ir::ExportedProgram& program, bool fully = true) {
  register_builtin_partitioners();
  register_builtin_preprocessors();
  REQUIRE(register_builtin_backends().ok());
  std::vector<std::vector<uint8_t>> inputs;
  uint32_t seed = 7;
  for (ir::ValueId v : program.graph.inputs())
    inputs.push_back(testing::as_bytes(randoms(program.graph.value(v).spec.shape.numel(), seed++)));
  const ir::ExportedProgram lowered = to_backend(program, xnnpack::XnnpackPartitioner());
  REQUIRE(!lowered.delegates.empty());
  if (fully) {
    for (const ir::Node& n : lowered.graph.nodes()) CHECK((n.dead || n.is_delegate_call()));
  }
  testing::check_close_float_outputs(program, lowered, inputs, 1e-5f);
}

TEST_CASE("xnnpack runs a mini CNN: conv, relu, max pool, global pool, gemm", "[xnnpack][integration]") {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {2, 3, 12, 12});
  const auto w1 = b.constant_f32("w1", {8, 3, 3, 3}, randoms(216, 1));
  const auto b1 = b.constant_f32("b1", {8}, randoms(8, 2));
  const auto c1 = b.op(EdgeOp::Relu, {b.op(EdgeOp::Conv, {x, w1, b1}, conv_attrs(1, {1, 1, 1, 1}))});
  const auto p1 = b.op(EdgeOp::MaxPool, {c1}, pool_attrs({2, 2}, {2, 2}, {0, 0, 0, 0}));
  const auto w2 = b.constant_f32("w2", {16, 8, 3, 3}, randoms(1152, 3));
  ir::Attrs a2 = conv_attrs(1, {1, 1, 1, 1}, {2, 2});
  a2.set("clamp_min", 0.0f);
  a2.set("clamp_max", 6.0f);
  const auto c2 = b.op(EdgeOp::Conv, {p1, w2}, a2);
  const auto g = b.op(EdgeOp::AvgPool, {c2}, pool_attrs({3, 3}, {1, 1}, {0, 0, 0, 0}));
  const auto f = b.op(EdgeOp::Reshape, {g}, ir::Attrs{{"shape", std::vector<int64_t>{2, 16}}});
  const auto wf = b.constant_f32("wf", {10, 16}, randoms(160, 4));
  const auto bf = b.constant_f32("bf", {10}, randoms(10, 5));
  b.output(b.op(EdgeOp::Gemm, {f, wf, bf},
                ir::Attrs{{"trans_a", int64_t{0}}, {"trans_b", int64_t{1}}, {"alpha", 1.0f}, {"beta", 1.0f}}),
           "logits");
  check_lowered(b.build());
}

TEST_CASE("xnnpack runs a depthwise conv with a channel multiplier", "[xnnpack][integration]") {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {1, 4, 7, 7});
  const auto w = b.constant_f32("w", {8, 1, 3, 3}, randoms(72, 11));
  const auto bias = b.constant_f32("b", {8}, randoms(8, 12));
  b.output(b.op(EdgeOp::Conv, {x, w, bias}, conv_attrs(4, {1, 1, 1, 1}, {2, 2})));
  check_lowered(b.build());
}

TEST_CASE("xnnpack runs a residual add and a broadcast constant multiply", "[xnnpack][integration]") {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {1, 4, 5, 6});
  const auto w = b.constant_f32("w", {4, 4, 3, 3}, randoms(144, 21));
  const auto c = b.op(EdgeOp::Conv, {x, w}, conv_attrs(1, {1, 1, 1, 1}));
  const auto r = b.op(EdgeOp::Add, {c, x});
  const auto k = b.constant_f32("k", {4, 1, 1}, {0.5f, -1.0f, 2.0f, 3.0f});
  const auto m = b.op(EdgeOp::Mul, {r, k});
  const auto k2 = b.constant_f32("k2", {1, 4, 1, 1}, {1.0f, 2.0f, 3.0f, 4.0f});
  b.output(b.op(EdgeOp::Sub, {m, k2}));
  check_lowered(b.build());
}

TEST_CASE("xnnpack runs softmax over channels", "[xnnpack][integration]") {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {2, 5, 3, 4});
  b.output(b.op(EdgeOp::Softmax, {x}, ir::Attrs{{"axis", int64_t{1}}, {"flatten", int64_t{0}}}));
  check_lowered(b.build());
}

TEST_CASE("xnnpack runs a transposed conv with groups and output padding", "[xnnpack][integration]") {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {1, 4, 5, 5});
  const auto w = b.constant_f32("w", {4, 3, 3, 3}, randoms(108, 31));  // C=4, M/g=3, g=2
  b.output(b.op(EdgeOp::ConvTranspose, {x, w},
                ir::Attrs{{"strides", std::vector<int64_t>{2, 2}},
                          {"pads", std::vector<int64_t>{1, 1, 1, 1}},
                          {"dilations", std::vector<int64_t>{1, 1}},
                          {"group", int64_t{2}},
                          {"output_padding", std::vector<int64_t>{1, 1}}}));
  check_lowered(b.build());
}

TEST_CASE("xnnpack leaves a refused node to the portable kernels", "[xnnpack][integration]") {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {1, 3, 4, 4});
  const auto s = b.op(EdgeOp::Sigmoid, {x});
  const auto t = b.op(EdgeOp::Tanh, {s});
  b.output(b.op(EdgeOp::Softmax, {t}, ir::Attrs{{"axis", int64_t{3}}, {"flatten", int64_t{0}}}));
  b.output(b.op(EdgeOp::Abs, {t}));
  check_lowered(b.build(), /*fully=*/false);
}

}  // namespace
}  // namespace etc
