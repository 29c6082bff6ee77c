// Portable reduce_* and arg_max / arg_min kernels against index-arithmetic
// references, for inner, outer, middle and non-adjacent axes.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "tests/runtime/kernels/reduce_kernel_test_util.h"

namespace {

using etc::EdgeOp;
using etc::Shape;
using etc::testing::host;
using etc::testing::run_kernel;

// Reference reduction of a [2,3,4,5] tensor: output index by dropping (or
// zeroing) reduced coordinates, computed per element with div/mod.
std::vector<double> reference(const std::vector<float>& x, const std::vector<int64_t>& axes, EdgeOp op) {
  const int64_t dims[4] = {2, 3, 4, 5};
  bool red[4] = {};
  for (int64_t a : axes) red[a] = true;
  int64_t out_n = 1;
  for (int d = 0; d < 4; ++d) out_n *= red[d] ? 1 : dims[d];
  const double init = op == EdgeOp::ReduceMax ? -INFINITY : op == EdgeOp::ReduceProd ? 1.0 : 0.0;
  std::vector<double> acc(static_cast<size_t>(out_n), init);
  std::vector<int64_t> count(static_cast<size_t>(out_n), 0);
  for (int64_t i = 0; i < 120; ++i) {
    int64_t rem = i, o = 0, mul = 1;
    int64_t coord[4];
    for (int d = 3; d >= 0; --d) {
      coord[d] = rem % dims[d];
      rem /= dims[d];
    }
    for (int d = 3; d >= 0; --d)
      if (!red[d]) {
        o += coord[d] * mul;
        mul *= dims[d];
      }
    const double v = x[static_cast<size_t>(i)];
    double& a = acc[static_cast<size_t>(o)];
    if (op == EdgeOp::ReduceMax)
      a = std::max(a, v);
    else if (op == EdgeOp::ReduceProd)
      a *= v;
    else if (op == EdgeOp::ReduceSumSquare)
      a += v * v;
    else
      a += v;
    ++count[static_cast<size_t>(o)];
  }
  if (op == EdgeOp::ReduceMean)
    for (size_t i = 0; i < acc.size(); ++i) acc[i] /= static_cast<double>(count[i]);
  return acc;
}

}  // namespace

TEST_CASE("reduce kernels match a reference for every axis pattern", "[reduce]") {
  std::vector<float> x(120);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.5f + static_cast<float>((i * 37) % 17) / 16.0f;
  const auto input = host<float>(Shape{2, 3, 4, 5}, x);
  const std::vector<std::vector<int64_t>> patterns = {{3},    {0},    {1},          {1, 2},
                                                      {0, 2}, {1, 3}, {0, 1, 2, 3}, {0, 3}};
  for (EdgeOp op : {EdgeOp::ReduceSum, EdgeOp::ReduceMean, EdgeOp::ReduceMax, EdgeOp::ReduceProd,
                    EdgeOp::ReduceSumSquare}) {
    for (const auto& axes : patterns) {
      for (int64_t keepdims : {0, 1}) {
        const auto out = run_kernel(op, {{"axes", axes}, {"keepdims", keepdims}}, {input}, 1)[0];
        const auto want = reference(x, axes, op);
        const auto got = out.values<float>();
        REQUIRE(got.size() == want.size());
        for (size_t i = 0; i < got.size(); ++i) REQUIRE(got[i] == Approx(want[i]).epsilon(1e-5));
        if (keepdims)
          REQUIRE(out.spec.shape.rank() == 4);
        else
          REQUIRE(out.spec.shape.rank() == 4 - static_cast<int>(axes.size()));
      }
    }
  }
}

TEST_CASE("reduce with empty axes reduces nothing (reduce_sum copies, reduce_l2 is |x|)", "[reduce]") {
  const auto x = host<float>(Shape{2, 2}, {1.0f, -2.0f, 3.0f, -4.0f});
  const std::vector<int64_t> none;
  REQUIRE(
      run_kernel(EdgeOp::ReduceSum, {{"axes", none}, {"keepdims", int64_t{1}}}, {x}, 1)[0].values<float>() ==
      std::vector<float>{1.0f, -2.0f, 3.0f, -4.0f});
  REQUIRE(
      run_kernel(EdgeOp::ReduceL2, {{"axes", none}, {"keepdims", int64_t{1}}}, {x}, 1)[0].values<float>() ==
      std::vector<float>{1.0f, 2.0f, 3.0f, 4.0f});
}

TEST_CASE("reduce over an empty axis yields the identity of the reduction", "[reduce]") {
  const auto x = host<float>(Shape{2, 0}, {});
  const std::vector<int64_t> axes = {1};
  REQUIRE(run_kernel(EdgeOp::ReduceSum, {{"axes", axes}}, {x}, 1)[0].values<float>() ==
          std::vector<float>{0, 0});
  REQUIRE(run_kernel(EdgeOp::ReduceProd, {{"axes", axes}}, {x}, 1)[0].values<float>() ==
          std::vector<float>{1, 1});
}

TEST_CASE("reduce_max propagates NaN and handles int64 without float rounding", "[reduce]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto x = host<float>(Shape{2, 3}, {1.0f, nan, 3.0f, 4.0f, 5.0f, 6.0f});
  const auto got =
      run_kernel(EdgeOp::ReduceMax, {{"axes", std::vector<int64_t>{1}}}, {x}, 1)[0].values<float>();
  REQUIRE(std::isnan(got[0]));
  REQUIRE(got[1] == 6.0f);
  const int64_t big = (int64_t{1} << 60) + 1;
  const auto xi = host<int64_t>(Shape{3}, {big, 2, 3});
  REQUIRE(
      run_kernel(EdgeOp::ReduceSum, {{"axes", std::vector<int64_t>{0}}, {"keepdims", int64_t{0}}}, {xi}, 1)[0]
          .values<int64_t>() == std::vector<int64_t>{big + 5});
}

TEST_CASE("integer reductions and cum_sum wrap on overflow as numpy does", "[reduce]") {
  using Lim = std::numeric_limits<int64_t>;
  const auto x = host<int64_t>(Shape{2}, {Lim::max(), 2});
  const etc::ir::Attrs all{{"axes", std::vector<int64_t>{0}}, {"keepdims", int64_t{0}}};
  REQUIRE(run_kernel(EdgeOp::ReduceSum, all, {x}, 1)[0].values<int64_t>() ==
          std::vector<int64_t>{Lim::min() + 1});
  REQUIRE(run_kernel(EdgeOp::ReduceProd, all, {x}, 1)[0].values<int64_t>() == std::vector<int64_t>{-2});
  REQUIRE(run_kernel(EdgeOp::ReduceSumSquare, all, {x}, 1)[0].values<int64_t>() == std::vector<int64_t>{5});
  REQUIRE(run_kernel(EdgeOp::CumSum, {{"axis", int64_t{0}}}, {x}, 1)[0].values<int64_t>() ==
          std::vector<int64_t>{Lim::max(), Lim::min() + 1});
  const auto bytes = host<uint8_t>(Shape{2}, {200, 100});
  REQUIRE(run_kernel(EdgeOp::ReduceProd, all, {bytes}, 1)[0].values<uint8_t>() ==
          std::vector<uint8_t>{static_cast<uint8_t>(20000 % 256)});
}

TEST_CASE("arg_max and arg_min break ties by select_last_index", "[reduce]") {
  // Rows along axis 1 with ties; columns along axis 0 exercise the strided path.
  const auto x = host<float>(Shape{2, 4}, {3.0f, 7.0f, 7.0f, 1.0f, 1.0f, 1.0f, 0.0f, 0.0f});
  auto run = [&](EdgeOp op, int64_t axis, int64_t last) {
    return run_kernel(op, {{"axis", axis}, {"keepdims", int64_t{0}}, {"select_last_index", last}}, {x}, 1)[0]
        .values<int64_t>();
  };
  REQUIRE(run(EdgeOp::ArgMax, 1, 0) == std::vector<int64_t>{1, 0});
  REQUIRE(run(EdgeOp::ArgMax, 1, 1) == std::vector<int64_t>{2, 1});
  REQUIRE(run(EdgeOp::ArgMin, 1, 0) == std::vector<int64_t>{3, 2});
  REQUIRE(run(EdgeOp::ArgMin, 1, 1) == std::vector<int64_t>{3, 3});
  REQUIRE(run(EdgeOp::ArgMax, 0, 0) == std::vector<int64_t>{0, 0, 0, 0});
  REQUIRE(run(EdgeOp::ArgMin, 0, 1) == std::vector<int64_t>{1, 1, 1, 1});
}
