// Portable top_k, cum_sum, trilu and einsum: tie order, run-time axis / k
// inputs, and einsum equations beyond the conformance suite (both the gemm
// path and the direct loop) against a brute-force reference.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "tests/runtime/kernels/reduce_kernel_test_util.h"

using etc::EdgeOp;
using etc::Shape;
using etc::testing::host;
using etc::testing::run_kernel;

TEST_CASE("top_k orders ties by the lower index and ranks NaN first", "[index]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto x = host<float>(Shape{2, 5}, {5, 7, 5, 7, 1, 2, nan, 9, 2, 2});
  const auto out =
      run_kernel(EdgeOp::TopK, {{"k", int64_t{3}}, {"axis", int64_t{1}}, {"largest", int64_t{1}}}, {x}, 2);
  REQUIRE(out[1].values<int64_t>() == std::vector<int64_t>{1, 3, 0, 1, 2, 0});
  const auto v = out[0].values<float>();
  REQUIRE(v[0] == 7.0f);
  REQUIRE(std::isnan(v[3]));
  const auto small =
      run_kernel(EdgeOp::TopK, {{"k", int64_t{2}}, {"axis", int64_t{1}}, {"largest", int64_t{0}}}, {x}, 2);
  REQUIRE(small[1].values<int64_t>() == std::vector<int64_t>{4, 0, 0, 3});
}

TEST_CASE("top_k along an outer axis reads strided columns", "[index]") {
  const auto x = host<int32_t>(Shape{3, 2}, {1, 6, 3, 4, 2, 5});
  const auto out =
      run_kernel(EdgeOp::TopK, {{"k", int64_t{2}}, {"axis", int64_t{0}}, {"largest", int64_t{1}}}, {x}, 2);
  REQUIRE(out[0].values<int32_t>() == std::vector<int32_t>{3, 6, 2, 5});
  REQUIRE(out[1].values<int64_t>() == std::vector<int64_t>{1, 0, 2, 2});
}

TEST_CASE("cum_sum exclusive and reverse, with the axis given at run time", "[index]") {
  const auto x = host<int64_t>(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
  const auto axis = host<int32_t>(Shape{}, {-1});
  auto run = [&](int64_t exclusive, int64_t reverse) {
    return run_kernel(EdgeOp::CumSum, {{"exclusive", exclusive}, {"reverse", reverse}}, {x, axis}, 1)[0]
        .values<int64_t>();
  };
  REQUIRE(run(0, 0) == std::vector<int64_t>{1, 3, 6, 4, 9, 15});
  REQUIRE(run(1, 0) == std::vector<int64_t>{0, 1, 3, 0, 4, 9});
  REQUIRE(run(0, 1) == std::vector<int64_t>{6, 5, 3, 15, 11, 6});
  REQUIRE(run(1, 1) == std::vector<int64_t>{5, 3, 0, 11, 6, 0});
  const auto axis0 = run_kernel(EdgeOp::CumSum, {{"axis", int64_t{0}}}, {x}, 1)[0].values<int64_t>();
  REQUIRE(axis0 == std::vector<int64_t>{1, 2, 3, 5, 7, 9});
}

TEST_CASE("trilu keeps the band selected by upper and k", "[index]") {
  const auto x = host<float>(Shape{3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  const auto k = host<int64_t>(Shape{}, {-1});
  REQUIRE(run_kernel(EdgeOp::Trilu, {{"upper", int64_t{1}}}, {x, k}, 1)[0].values<float>() ==
          std::vector<float>{1, 2, 3, 4, 5, 6, 0, 8, 9});
  REQUIRE(run_kernel(EdgeOp::Trilu, {{"upper", int64_t{0}}, {"k", int64_t{1}}}, {x}, 1)[0].values<float>() ==
          std::vector<float>{1, 2, 0, 4, 5, 6, 7, 8, 9});
  REQUIRE(run_kernel(EdgeOp::Trilu, {{"upper", int64_t{0}}, {"k", int64_t{-5}}}, {x}, 1)[0].values<float>() ==
          std::vector<float>(9, 0.0f));
}

namespace {

std::vector<float> ramp(int64_t n, float scale) {
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::cos(static_cast<float>(i) * scale);
  return v;
}

}  // namespace

TEST_CASE("einsum on the gemm path packs transposed operands and output", "[index]") {
  // a: [k=4, b=2, m=3], b: [n=5, k=4, b=2] -> out [m, b, n]: every operand needs packing.
  const auto av = ramp(24, 0.3f), bv = ramp(40, 0.7f);
  const auto a = host<float>(Shape{4, 2, 3}, av);
  const auto b = host<float>(Shape{5, 4, 2}, bv);
  const auto y = run_kernel(EdgeOp::Einsum, {{"equation", std::string("kbm,nkb->mbn")}}, {a, b}, 1)[0];
  REQUIRE(y.spec.shape == (Shape{3, 2, 5}));
  const auto got = y.values<float>();
  for (int m = 0; m < 3; ++m)
    for (int bb = 0; bb < 2; ++bb)
      for (int n = 0; n < 5; ++n) {
        double want = 0;
        for (int k = 0; k < 4; ++k)
          want += av[static_cast<size_t>(k * 6 + bb * 3 + m)] * bv[static_cast<size_t>(n * 8 + k * 2 + bb)];
        REQUIRE(got[static_cast<size_t>(m * 10 + bb * 5 + n)] == Approx(want).margin(1e-5));
      }
}

TEST_CASE("einsum loop path: trace, outer sum, three operands and broadcasting", "[index]") {
  const auto sq = host<int64_t>(Shape{3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  REQUIRE(run_kernel(EdgeOp::Einsum, {{"equation", std::string("ii->")}}, {sq}, 1)[0].values<int64_t>() ==
          std::vector<int64_t>{15});
  REQUIRE(run_kernel(EdgeOp::Einsum, {{"equation", std::string("ij->j")}}, {sq}, 1)[0].values<int64_t>() ==
          std::vector<int64_t>{12, 15, 18});
  // sum_ij x_i * M_ij * y_j
  const auto xv = host<int64_t>(Shape{3}, {1, 0, 2});
  const auto yv = host<int64_t>(Shape{3}, {1, 1, 0});
  REQUIRE(run_kernel(EdgeOp::Einsum, {{"equation", std::string("i,ij,j->")}}, {xv, sq, yv}, 1)[0]
              .values<int64_t>() == std::vector<int64_t>{1 + 2 + 2 * (7 + 8)});
  // A size-1 batch dim broadcasts against 2.
  const auto a = host<float>(Shape{1, 2}, {1, 2});
  const auto b = host<float>(Shape{2, 2}, {1, 10, 100, 1000});
  REQUIRE(
      run_kernel(EdgeOp::Einsum, {{"equation", std::string("Bi,Bi->Bi")}}, {a, b}, 1)[0].values<float>() ==
      std::vector<float>{1, 20, 100, 2000});
}

TEST_CASE("top_k with a run-time k checks it against the declared k", "[index][runtime_args]") {
  const auto x = host<float>(Shape{2, 4}, {3, 1, 4, 1, 5, 9, 2, 6});
  const etc::ir::Attrs attrs{{"k", int64_t{2}}, {"axis", int64_t{1}}, {"largest", int64_t{1}}};
  const auto out = run_kernel(EdgeOp::TopK, attrs, {x, host<int64_t>(Shape{1}, {2})}, 2);
  REQUIRE(out[0].values<float>() == std::vector<float>{4, 3, 9, 6});
  std::vector<etc::testing::HostTensor> outs;
  const etc::Status bad =
      etc::testing::try_run_kernel(EdgeOp::TopK, attrs, {x, host<int64_t>(Shape{1}, {3})}, 2, outs);
  REQUIRE(bad.error() == etc::Error::InvalidArgument);
  CHECK_THAT(bad.message(),
             Catch::Contains("top_k") && Catch::Contains("k = 3") && Catch::Contains("[2, 2]"));
}
