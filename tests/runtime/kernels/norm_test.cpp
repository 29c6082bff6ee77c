// Portable batch_norm, instance_norm and layer_norm on hand-checked cases.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "tests/runtime/kernels/reduce_kernel_test_util.h"

using etc::EdgeOp;
using etc::Shape;
using etc::testing::absent;
using etc::testing::host;
using etc::testing::run_kernel;

TEST_CASE("layer_norm returns mean and inverse std and repeats a suffix-shaped scale", "[norm]") {
  // [2, 2, 2] normalized from axis 1; scale covers only the last dim.
  const auto x = host<float>(Shape{2, 2, 2}, {1, 2, 3, 4, 10, 10, 10, 10});
  const auto scale = host<float>(Shape{2}, {1.0f, 2.0f});
  const auto bias = host<float>(Shape{1, 2}, {0.5f, -0.5f});
  const auto out =
      run_kernel(EdgeOp::LayerNorm, {{"axis", int64_t{1}}, {"epsilon", 0.0f}}, {x, scale, bias}, 3);
  REQUIRE(out[1].spec.shape == (Shape{2, 1, 1}));
  REQUIRE(out[1].values<float>() == std::vector<float>{2.5f, 10.0f});
  const double inv = 1 / std::sqrt(1.25);
  REQUIRE(out[2].values<float>()[0] == Approx(inv));
  const auto y = out[0].values<float>();
  REQUIRE(y[0] == Approx(-1.5 * inv * 1 + 0.5));
  REQUIRE(y[1] == Approx(-0.5 * inv * 2 - 0.5));
  REQUIRE(y[3] == Approx(1.5 * inv * 2 - 0.5));
  // A constant row has zero variance: only epsilon keeps it finite.
  const auto y2 =
      run_kernel(EdgeOp::LayerNorm, {{"axis", int64_t{1}}, {"epsilon", 1e-5f}}, {x, scale, absent()}, 1);
  REQUIRE(y2[0].values<float>()[4] == 0.0f);
}

TEST_CASE("layer_norm rejects a scale that is not a suffix of the normalized shape", "[norm]") {
  const std::string err =
      etc::testing::infer_error(EdgeOp::LayerNorm, {{"axis", int64_t{1}}},
                                {{etc::DType::Float32, Shape{2, 3, 4}}, {etc::DType::Float32, Shape{3}}}, 1);
  REQUIRE(err.find("scale shape") != std::string::npos);
}

TEST_CASE("batch_norm accepts per-channel and per-feature (spatial=0) statistics", "[norm]") {
  const auto x = host<float>(Shape{1, 2, 2}, {1, 2, 3, 4});
  const auto ones2 = host<float>(Shape{2}, {1, 1});
  const auto zeros2 = host<float>(Shape{2}, {0, 0});
  const auto mean2 = host<float>(Shape{2}, {1, 3});
  const auto y = run_kernel(EdgeOp::BatchNorm, {{"epsilon", 0.0f}}, {x, ones2, zeros2, mean2, ones2}, 1)[0];
  REQUIRE(y.values<float>() == std::vector<float>{0, 1, 0, 1});
  const auto ones4 = host<float>(Shape{2, 2}, {1, 1, 1, 1});
  const auto zeros4 = host<float>(Shape{2, 2}, {0, 0, 0, 0});
  const auto mean4 = host<float>(Shape{2, 2}, {1, 2, 3, 4});
  const auto y4 = run_kernel(EdgeOp::BatchNorm, {{"epsilon", 0.0f}}, {x, ones4, zeros4, mean4, ones4}, 1)[0];
  REQUIRE(y4.values<float>() == std::vector<float>{0, 0, 0, 0});
}

TEST_CASE("instance_norm normalizes each (n, c) plane", "[norm]") {
  const auto x = host<float>(Shape{1, 2, 2}, {1, 3, 10, 30});
  const auto scale = host<float>(Shape{2}, {1, 2});
  const auto bias = host<float>(Shape{2}, {0, 1});
  const auto y =
      run_kernel(EdgeOp::InstanceNorm, {{"epsilon", 0.0f}}, {x, scale, bias}, 1)[0].values<float>();
  REQUIRE(y[0] == Approx(-1.0));
  REQUIRE(y[1] == Approx(1.0));
  REQUIRE(y[2] == Approx(-1.0));
  REQUIRE(y[3] == Approx(3.0));
}
