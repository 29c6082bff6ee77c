// Portable softmax / log_softmax: numerically stable on large inputs, correct
// on non-innermost axes and in the pre-opset-13 flatten mode.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "tests/runtime/kernels/reduce_kernel_test_util.h"

using etc::EdgeOp;
using etc::Shape;
using etc::testing::host;
using etc::testing::run_kernel;

TEST_CASE("softmax and log_softmax stay finite for inputs whose exp overflows", "[softmax]") {
  const auto x = host<float>(Shape{1, 3}, {1000.0f, 1001.0f, 1002.0f});
  const auto y = run_kernel(EdgeOp::Softmax, {{"axis", int64_t{1}}}, {x}, 1)[0].values<float>();
  const double z = 1 + std::exp(-1.0) + std::exp(-2.0);
  REQUIRE(y[0] == Approx(std::exp(-2.0) / z));
  REQUIRE(y[2] == Approx(1 / z));
  const auto ly = run_kernel(EdgeOp::LogSoftmax, {{"axis", int64_t{1}}}, {x}, 1)[0].values<float>();
  REQUIRE(ly[2] == Approx(-std::log(z)));
  REQUIRE(ly[0] == Approx(-2 - std::log(z)));
}

TEST_CASE("softmax over a middle axis normalizes each column", "[softmax]") {
  std::vector<double> v(2 * 3 * 4);
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(static_cast<double>(i)) * 5;
  const auto x = host<double>(Shape{2, 3, 4}, v);
  const auto y = run_kernel(EdgeOp::Softmax, {{"axis", int64_t{1}}}, {x}, 1)[0].values<double>();
  for (int o = 0; o < 2; ++o) {
    for (int i = 0; i < 4; ++i) {
      double z = 0;
      for (int k = 0; k < 3; ++k) z += std::exp(v[static_cast<size_t>(o * 12 + k * 4 + i)]);
      double sum = 0;
      for (int k = 0; k < 3; ++k) {
        const size_t at = static_cast<size_t>(o * 12 + k * 4 + i);
        REQUIRE(y[at] == Approx(std::exp(v[at]) / z));
        sum += y[at];
      }
      REQUIRE(sum == Approx(1.0));
    }
  }
}

TEST_CASE("flatten mode normalizes over every dim from the axis on", "[softmax]") {
  const std::vector<float> v = {0, 1, 2, 3, 4, 5, 6, 7};
  const auto x = host<float>(Shape{2, 2, 2}, v);
  const auto y = run_kernel(EdgeOp::LogSoftmax, {{"axis", int64_t{1}}, {"flatten", int64_t{1}}}, {x}, 1)[0]
                     .values<float>();
  for (int o = 0; o < 2; ++o) {
    double z = 0;
    for (int j = 0; j < 4; ++j) z += std::exp(static_cast<double>(v[static_cast<size_t>(o * 4 + j)]));
    for (int j = 0; j < 4; ++j) {
      const size_t at = static_cast<size_t>(o * 4 + j);
      REQUIRE(y[at] == Approx(v[at] - std::log(z)));
    }
  }
}
