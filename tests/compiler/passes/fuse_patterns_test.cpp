// Differential: the written-out hard_swish and layer_norm patterns become one
// node with the same outputs; patterns whose intermediates are read
// elsewhere, or that differ in a constant, are left alone.
#include "compiler/passes/fuse_patterns.h"

#include <catch2/catch.hpp>
#include <random>

#include "compiler/passes/dead_code.h"
#include "tests/support/differential.h"
#include "tests/support/graph_builder.h"
#include "tests/support/random.h"

using namespace etc;
using etc::testing::GraphBuilder;
using etc::testing::random_floats;

namespace {

size_t live(const ir::Graph& g, EdgeOp op) {
  size_t n = 0;
  for (const ir::Node& node : g.nodes()) n += !node.dead && node.op == op;
  return n;
}

// Runs the pass on a copy; outputs must agree with the original.
ir::ExportedProgram fused(const ir::ExportedProgram& before, size_t expected, float lo = -3, float hi = 3) {
  ir::ExportedProgram after = before;
  CHECK(passes::fuse_patterns(after.graph) == expected);
  passes::eliminate_dead_code(after.graph);
  std::mt19937 rng(5);
  std::vector<std::vector<uint8_t>> inputs;
  for (ir::ValueId v : before.graph.inputs())
    inputs.push_back(testing::as_bytes(random_floats(before.graph.value(v).spec.shape.numel(), rng, lo, hi)));
  testing::check_close_float_outputs(before, after, inputs, 1e-5f);
  return after;
}

ir::ExportedProgram hard_swish(float alpha, bool also_output_sigmoid) {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {2, 3, 4});
  const auto hs = b.op(EdgeOp::HardSigmoid, {x}, ir::Attrs{{"alpha", alpha}, {"beta", 0.5f}});
  b.output(b.op(EdgeOp::Mul, {hs, x}), "y");
  if (also_output_sigmoid) b.output(hs, "gate");
  return b.build();
}

// x * clip(x + three, 0, six_hi) / six, in one of the groupings exporters
// write: the scale after the product (`scale_last`) or on the clip, by
// division or by multiplying with 1/six.
struct WrittenHardSwish {
  bool scale_last = true, divide = true;
  float three = 3.0f, six_hi = 6.0f, six = 6.0f;
  bool also_output_clip = false;
};

ir::ExportedProgram written_hard_swish(const WrittenHardSwish& w) {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {2, 3, 4});
  const auto add = b.op(EdgeOp::Add, {x, b.constant_f32("three", {}, {w.three})});
  const auto clip = b.op(EdgeOp::Clip, {add}, ir::Attrs{{"min", 0.0f}, {"max", w.six_hi}});
  const auto scale = [&](ir::ValueId v) {
    return w.divide ? b.op(EdgeOp::Div, {v, b.constant_f32("six", {1}, {w.six})})
                    : b.op(EdgeOp::Mul, {b.constant_f32("sixth", {}, {1.0f / w.six}), v});
  };
  b.output(w.scale_last ? scale(b.op(EdgeOp::Mul, {x, clip})) : b.op(EdgeOp::Mul, {scale(clip), x}), "y");
  if (w.also_output_clip) b.output(clip, "clip");
  return b.build();
}

// (x - mean) / sqrt(var + eps) * gamma + beta, over the last `k` axes.
ir::ExportedProgram written_layer_norm(int k, bool scale, bool shift, Shape param_shape = {}) {
  std::mt19937 rng(6);
  GraphBuilder b;
  const Shape xs{2, 5, 8};
  const auto x = b.input("x", DType::Float32, xs);
  std::vector<int64_t> axes;
  for (int i = 3 - k; i < 3; ++i) axes.push_back(i);
  const ir::Attrs mean{{"axes", axes}, {"keepdims", int64_t{1}}};
  const auto m = b.op(EdgeOp::ReduceMean, {x}, mean);
  const auto d = b.op(EdgeOp::Sub, {x, m});
  const auto two = b.constant_f32("two", {}, {2.0f});
  const auto v = b.op(EdgeOp::ReduceMean, {b.op(EdgeOp::Pow, {d, two})}, mean);
  const auto eps = b.constant_f32("eps", {1}, {1e-5f});
  auto y = b.op(EdgeOp::Div, {d, b.op(EdgeOp::Sqrt, {b.op(EdgeOp::Add, {v, eps})})});
  Shape ps = param_shape;
  if (ps.rank() == 0)
    for (int i = 3 - k; i < 3; ++i) ps.push_back(xs[i]);
  if (scale) y = b.op(EdgeOp::Mul, {y, b.constant_f32("g", ps, random_floats(ps.numel(), rng, 0.5f, 1.5f))});
  if (shift) y = b.op(EdgeOp::Add, {b.constant_f32("b", ps, random_floats(ps.numel(), rng)), y});
  b.output(y, "y");
  return b.build();
}

}  // namespace

TEST_CASE("x * hard_sigmoid(x) becomes hard_swish", "[passes]") {
  const ir::ExportedProgram after = fused(hard_swish(1.0f / 6.0f, false), 1);
  CHECK(live(after.graph, EdgeOp::HardSwish) == 1);
  CHECK(live(after.graph, EdgeOp::Mul) == 0);
  CHECK(live(after.graph, EdgeOp::HardSigmoid) == 0);
  fused(hard_swish(0.2f, false), 0);        // another slope: a different function
  fused(hard_swish(1.0f / 6.0f, true), 0);  // the gate is an output too
}

TEST_CASE("x * clip(x + 3, 0, 6) / 6 becomes hard_swish", "[passes]") {
  for (bool scale_last : {true, false})
    for (bool divide : {true, false}) {
      INFO("scale last " << scale_last << ", divide " << divide);
      const ir::ExportedProgram after =
          fused(written_hard_swish({.scale_last = scale_last, .divide = divide}), 1, -5, 5);
      CHECK(live(after.graph, EdgeOp::HardSwish) == 1);
      for (EdgeOp op : {EdgeOp::Add, EdgeOp::Clip, EdgeOp::Mul, EdgeOp::Div})
        CHECK(live(after.graph, op) == 0);
    }
  // Other constants compute other functions; a clip read elsewhere stays.
  fused(written_hard_swish({.three = 2.0f}), 0, -5, 5);
  fused(written_hard_swish({.six_hi = 5.0f}), 0, -5, 5);
  fused(written_hard_swish({.six = 5.0f}), 0, -5, 5);
  fused(written_hard_swish({.divide = false, .six = 5.0f}), 0, -5, 5);
  fused(written_hard_swish({.also_output_clip = true}), 0, -5, 5);
}

TEST_CASE("written-out layer normalisation becomes layer_norm", "[passes]") {
  for (int k : {1, 2})
    for (bool scale : {false, true})
      for (bool shift : {false, true}) {
        INFO("axes " << k << " scale " << scale << " shift " << shift);
        const ir::ExportedProgram after = fused(written_layer_norm(k, scale, shift), 1);
        CHECK(live(after.graph, EdgeOp::LayerNorm) == 1);
        CHECK(live(after.graph, EdgeOp::ReduceMean) == 0);
        size_t nodes = 0;
        for (const ir::Node& n : after.graph.nodes()) nodes += !n.dead;
        CHECK(nodes == 1);
      }
  // Parameters with leading unit dims, as PaddlePaddle exports them.
  fused(written_layer_norm(1, true, true, Shape{1, 1, 8}), 1);
  // A scale that varies along an axis that is not normalized stays a multiply
  // after the fused normalisation.
  const ir::ExportedProgram partly = fused(written_layer_norm(1, true, false, Shape{5, 8}), 1);
  CHECK(live(partly.graph, EdgeOp::LayerNorm) == 1);
  CHECK(live(partly.graph, EdgeOp::Mul) == 1);
}

namespace {

// x * (1 + erf(x / sqrt 2)) * 0.5 in the grouping `form` (0: (x * t) * 0.5,
// 1: x * (t * 0.5), 2: (x * 0.5) * t), x / sqrt 2 written as a multiply when
// `multiply`.
ir::ExportedProgram written_gelu(int form, bool multiply, float root = 1.4142135f) {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {3, 7});
  const auto u = multiply ? b.op(EdgeOp::Mul, {b.constant_f32("r", {}, {1.0f / root}), x})
                          : b.op(EdgeOp::Div, {x, b.constant_f32("r", {}, {root})});
  const auto t = b.op(EdgeOp::Add, {b.op(EdgeOp::Erf, {u}), b.constant_f32("one", {}, {1.0f})});
  const auto half = b.constant_f32("half", {}, {0.5f});
  ir::ValueId y = ir::kNoValue;
  if (form == 0) y = b.op(EdgeOp::Mul, {b.op(EdgeOp::Mul, {x, t}), half});
  if (form == 1) y = b.op(EdgeOp::Mul, {x, b.op(EdgeOp::Mul, {t, half})});
  if (form == 2) y = b.op(EdgeOp::Mul, {b.op(EdgeOp::Mul, {x, half}), t});
  b.output(y, "y");
  return b.build();
}

}  // namespace

TEST_CASE("written-out erf gelu becomes gelu", "[passes]") {
  for (int form : {0, 1, 2})
    for (bool multiply : {false, true}) {
      INFO("form " << form << " multiply " << multiply);
      const ir::ExportedProgram after = fused(written_gelu(form, multiply), 1);
      CHECK(live(after.graph, EdgeOp::Gelu) == 1);
      size_t nodes = 0;
      for (const ir::Node& n : after.graph.nodes()) nodes += !n.dead;
      CHECK(nodes == 1);
    }
  fused(written_gelu(0, false, 1.5f), 0);  // not x / sqrt 2
}

TEST_CASE("gelu and its tanh approximation", "[passes]") {
  // The portable kernel against the formulas in double precision.
  for (const char* approximate : {"none", "tanh"}) {
    GraphBuilder b;
    b.output(b.op(EdgeOp::Gelu, {b.input("x", DType::Float32, {64})},
                  ir::Attrs{{"approximate", std::string(approximate)}}),
             "y");
    std::vector<float> x(64);
    for (size_t i = 0; i < x.size(); ++i) x[i] = -8.0f + 0.25f * static_cast<float>(i);
    const auto y = testing::from_bytes<float>(testing::run_program(b.build(), {testing::as_bytes(x)})[0]);
    for (size_t i = 0; i < x.size(); ++i) {
      const double v = x[i];
      const double want = std::string(approximate) == "tanh"
                              ? 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)))
                              : 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
      CHECK(y[i] == Approx(want).margin(1e-6).epsilon(1e-5));
    }
  }
}

namespace {

// x + x * g with g = sigmoid(mean of x over its pixels) ([1, 4, 1, 1]), in
// either operand order; or g as large as x.
ir::ExportedProgram residual_gate(bool swap, bool also_output_product, bool full_gate = false) {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {1, 4, 5, 5});
  const auto pooled = b.op(EdgeOp::ReduceMean, {x},
                           ir::Attrs{{"axes", std::vector<int64_t>{2, 3}}, {"keepdims", int64_t{1}}});
  const auto g = b.op(EdgeOp::Sigmoid, {full_gate ? x : pooled});
  const auto m = swap ? b.op(EdgeOp::Mul, {g, x}) : b.op(EdgeOp::Mul, {x, g});
  b.output(swap ? b.op(EdgeOp::Add, {x, m}) : b.op(EdgeOp::Add, {m, x}), "y");
  if (also_output_product) b.output(m, "product");
  return b.build();
}

}  // namespace

TEST_CASE("x + x * g becomes x * (g + 1)", "[passes]") {
  for (bool swap : {false, true}) {
    INFO("swapped operands " << swap);
    const ir::ExportedProgram after = fused(residual_gate(swap, false), 1);
    CHECK(live(after.graph, EdgeOp::Mul) == 1);
    CHECK(live(after.graph, EdgeOp::Add) == 1);
    for (const ir::Node& n : after.graph.nodes())
      if (!n.dead && n.op == EdgeOp::Add)
        CHECK(after.graph.value(n.outputs[0]).spec.shape == Shape{1, 4, 1, 1});
  }
  fused(residual_gate(false, true), 0);         // the product is an output too
  fused(residual_gate(false, false, true), 0);  // the gate is as large as x: nothing saved
}
