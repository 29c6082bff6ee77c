// ONNX ops lowered to compositions of edge ops (ops/composite.cpp and the
// log reductions), run end to end against direct references where the
// conformance suite has no case: LpNormalization, LRN with an even window
// (asymmetric about the channel), and ReduceLogSumExp on values whose exp
// overflows float.
#include <onnx/onnx_pb.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "compiler/common/compile_error.h"
#include "compiler/import/onnx/importer.h"
#include "tests/support/onnx_builder.h"
#include "tests/support/run_program.h"

namespace {

namespace ob = etc::testing::onnx_builder;
using etc::testing::as_bytes;
using etc::testing::from_bytes;

struct OneNode {
  onnx::ModelProto model;
  onnx::NodeProto* node;
  OneNode(const std::string& op, std::vector<int64_t> in, std::vector<int64_t> out, int64_t opset = 13) {
    model.set_ir_version(8);
    model.add_opset_import()->set_version(opset);
    model.mutable_graph()->set_name("composite_test");
    ob::add_value(model.mutable_graph()->mutable_input(), "x", in);
    ob::add_value(model.mutable_graph()->mutable_output(), "y", out);
    node = ob::add_node(model.mutable_graph(), op, {"x"}, {"y"}, op + "_node");
  }
  void float_attr(const std::string& name, float v) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  std::vector<float> run(const std::vector<float>& x, const std::string& file) {
    const auto program = etc::onnx_import::import_onnx(ob::save(model, file));
    return from_bytes<float>(etc::testing::run_program(program, {as_bytes(x)})[0]);
  }
};

std::vector<float> ramp(size_t n, float scale, float offset) {
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = offset + scale * static_cast<float>((i * 7) % 11);
  return x;
}

}  // namespace

TEST_CASE("LpNormalization divides by the p-norm along the axis", "[import][composite]") {
  const std::vector<float> x = ramp(12, 0.5f, -2.0f);  // [3, 4]
  for (int64_t p : {1, 2}) {
    OneNode m("LpNormalization", {3, 4}, {3, 4});
    ob::int_attr(m.node, "p", p);
    ob::int_attr(m.node, "axis", 0);
    const auto y = m.run(x, "lp_norm_" + std::to_string(p));
    for (int col = 0; col < 4; ++col) {
      double norm = 0;
      for (int row = 0; row < 3; ++row) {
        const double v = x[static_cast<size_t>(row * 4 + col)];
        norm += p == 1 ? std::fabs(v) : v * v;
      }
      if (p == 2) norm = std::sqrt(norm);
      for (int row = 0; row < 3; ++row) {
        const size_t i = static_cast<size_t>(row * 4 + col);
        CHECK(y[i] == Approx(x[i] / norm).margin(1e-6));
      }
    }
  }
  OneNode bad("LpNormalization", {3, 4}, {3, 4});
  ob::int_attr(bad.node, "p", 3);
  REQUIRE_THROWS_WITH(bad.run(x, "lp_norm_3"),
                      Catch::Contains("LpNormalization_node") && Catch::Contains("p must be 1 or 2"));
}

TEST_CASE("LRN with an even size sums the channels [c - (size-1)/2, c + size/2]", "[import][composite]") {
  const int64_t n = 1, ch = 5, h = 2, w = 3, size = 4;
  const float alpha = 0.3f, beta = 0.6f, bias = 2.0f;
  const std::vector<float> x = ramp(static_cast<size_t>(n * ch * h * w), 0.7f, -3.0f);
  OneNode m("LRN", {n, ch, h, w}, {n, ch, h, w});
  ob::int_attr(m.node, "size", size);
  m.float_attr("alpha", alpha);
  m.float_attr("beta", beta);
  m.float_attr("bias", bias);
  const auto y = m.run(x, "lrn_even");
  for (int64_t c = 0; c < ch; ++c)
    for (int64_t p = 0; p < h * w; ++p) {
      double sum = 0;
      for (int64_t k = c - (size - 1) / 2; k <= c + size / 2; ++k)
        if (k >= 0 && k < ch)
          sum += double(x[static_cast<size_t>(k * h * w + p)]) * x[static_cast<size_t>(k * h * w + p)];
      const size_t i = static_cast<size_t>(c * h * w + p);
      CHECK(y[i] == Approx(x[i] / std::pow(bias + alpha / size * sum, beta)).epsilon(1e-5));
    }
}

TEST_CASE("ReduceLogSumExp stays finite where exp overflows float", "[import][composite]") {
  OneNode m("ReduceLogSumExp", {2, 3}, {2});
  ob::int_attr(m.node, "keepdims", 0);
  auto* axes = m.node->add_attribute();
  axes->set_name("axes");
  axes->set_type(onnx::AttributeProto::INTS);
  axes->add_ints(1);
  const std::vector<float> x = {1000.0f, 999.0f, 998.0f, -1.0f, 0.0f, 1.0f};
  const auto y = m.run(x, "log_sum_exp");
  REQUIRE(y.size() == 2);
  CHECK(y[0] == Approx(1000.0 + std::log(1.0 + std::exp(-1.0) + std::exp(-2.0))));
  CHECK(y[1] == Approx(std::log(std::exp(-1.0) + 1.0 + std::exp(1.0))));
}
