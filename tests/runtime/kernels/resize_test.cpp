#include <catch2/catch.hpp>
#include <cmath>

#include "runtime/kernels/portable/resize_plan.h"
#include "tests/runtime/kernels/resize_kernel_test_util.h"

using etc::EdgeOp;
using etc::ResizeAxisParams;
using etc::ResizeCoordMode;
using etc::ResizeMode;
using etc::ResizeNearestMode;
using etc::Shape;
using etc::test::OwnedTensor;
using etc::test::run_kernel;

TEST_CASE("resize align_corners with given scales divides by scale * in - 1", "[resize]") {
  // ONNX test resize_downsample_scales_linear_align_corners: 4 -> scale 0.6.
  ResizeAxisParams p;
  p.mode = ResizeMode::Linear;
  p.coord = ResizeCoordMode::AlignCorners;
  p.in_len = 4;
  p.out_len = 2;
  p.scale = 0.6;
  CHECK(etc::resize_source_coord(p, 1) == Approx(3.0 / 1.4));
  p.scale = 0.0;  // sizes given: out / in
  CHECK(etc::resize_source_coord(p, 1) == Approx(3.0));
}

TEST_CASE("resize nearest rounding modes break ties as named", "[resize]") {
  ResizeAxisParams p;
  p.coord = ResizeCoordMode::Asymmetric;
  p.in_len = 4;
  p.out_len = 8;
  p.scale = 2.0;  // output index 1 sits at 0.5, index 3 at 1.5
  p.nearest = ResizeNearestMode::RoundPreferFloor;
  CHECK(etc::resize_axis_taps(p)[1].index[0] == 0);
  CHECK(etc::resize_axis_taps(p)[3].index[0] == 1);
  p.nearest = ResizeNearestMode::RoundPreferCeil;
  CHECK(etc::resize_axis_taps(p)[1].index[0] == 1);
  CHECK(etc::resize_axis_taps(p)[7].index[0] == 3);  // 3.5 rounds up to 4, clamped to 3
}

TEST_CASE("resize simple nearest mode rounds up only when downsampling", "[resize]") {
  ResizeAxisParams p;
  p.coord = ResizeCoordMode::Asymmetric;
  p.nearest = ResizeNearestMode::Simple;
  p.in_len = 5;
  p.out_len = 3;
  p.scale = 0.6;  // x = 0, 1.67, 3.33 -> ceil
  const auto down = etc::resize_axis_taps(p);
  CHECK(down[1].index[0] == 2);
  CHECK(down[2].index[0] == 4);
  p.in_len = 2;
  p.out_len = 5;
  p.scale = 2.5;  // x = 0.4, 0.8 -> floor
  const auto up = etc::resize_axis_taps(p);
  CHECK(up[1].index[0] == 0);
  CHECK(up[2].index[0] == 0);
}

TEST_CASE("resize cubic on an unchanged axis keeps a single unit tap", "[resize]") {
  ResizeAxisParams p;
  p.mode = ResizeMode::Cubic;
  p.in_len = 5;
  p.out_len = 5;
  for (const auto& t : etc::resize_axis_taps(p)) {
    REQUIRE(t.count == 1);
    CHECK(t.weight[0] == 1.0);
  }
}

TEST_CASE("resize bilinear half_pixel upsample matches hand computation", "[resize]") {
  etc::ir::Attrs attrs{{"sizes", std::vector<int64_t>{1, 1, 4, 4}},
                       {"scales", std::vector<float>{1, 1, 2, 2}},
                       {"mode", std::string("linear")}};
  auto out = run_kernel(EdgeOp::Resize, attrs, {OwnedTensor::of<float>(Shape{1, 1, 2, 2}, {1, 2, 3, 4})}, 1);
  const auto y = out[0].values<float>();
  // Row 0 samples input row 0 (clamped); column coords -0.25, 0.25, 0.75, 1.25.
  CHECK(y[0] == Approx(1.0f));
  CHECK(y[1] == Approx(1.25f));
  CHECK(y[2] == Approx(1.75f));
  CHECK(y[3] == Approx(2.0f));
  // Row 1 sits at 0.25: 0.75 * row0 + 0.25 * row1.
  CHECK(y[5] == Approx(0.75f * 1.25f + 0.25f * 3.25f));
  CHECK(y[15] == Approx(4.0f));
}

TEST_CASE("resize tf_crop_and_resize writes the extrapolation value outside the roi", "[resize]") {
  etc::ir::Attrs attrs{{"sizes", std::vector<int64_t>{1, 3}},
                       {"mode", std::string("linear")},
                       {"coordinate_transformation_mode", std::string("tf_crop_and_resize")},
                       {"roi", std::vector<float>{0, 0.5f, 1, 1.5f}},
                       {"extrapolation_value", 10.0f}};
  auto out = run_kernel(EdgeOp::Resize, attrs, {OwnedTensor::of<float>(Shape{1, 3}, {0, 2, 4})}, 1);
  const auto y = out[0].values<float>();
  // Coordinates 1, 2, 3 over an input of length 3: the last one is outside.
  CHECK(y[0] == Approx(2.0f));
  CHECK(y[1] == Approx(4.0f));
  CHECK(y[2] == 10.0f);
}

TEST_CASE("resize nearest gathers any element type exactly", "[resize]") {
  etc::ir::Attrs attrs{{"sizes", std::vector<int64_t>{2, 4}},
                       {"mode", std::string("nearest")},
                       {"coordinate_transformation_mode", std::string("asymmetric")},
                       {"nearest_mode", std::string("floor")}};
  const int64_t big = (int64_t{1} << 60) + 3;
  auto out = run_kernel(EdgeOp::Resize, attrs, {OwnedTensor::of<int64_t>(Shape{1, 2}, {big, -7})}, 1);
  CHECK(out[0].values<int64_t>() == std::vector<int64_t>{big, big, -7, -7, big, big, -7, -7});
}

TEST_CASE("resize linear on uint8 rounds to nearest", "[resize]") {
  etc::ir::Attrs attrs{{"sizes", std::vector<int64_t>{3}},
                       {"mode", std::string("linear")},
                       {"coordinate_transformation_mode", std::string("align_corners")}};
  auto out = run_kernel(EdgeOp::Resize, attrs, {OwnedTensor::of<uint8_t>(Shape{2}, {0, 255})}, 1);
  CHECK(out[0].values<uint8_t>() == std::vector<uint8_t>{0, 128, 255});
}
