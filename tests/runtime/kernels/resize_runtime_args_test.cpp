// Shape arguments read at run time (resize scales / sizes / roi, reduce axes,
// top_k k): when they agree with the static output shape the result equals the
// one of the same op with the argument as an attribute; when they do not, run()
// fails with InvalidArgument naming the op, the argument and the declared shape.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/runtime/kernels/reduce_kernel_test_util.h"

namespace {

using etc::EdgeOp;
using etc::Error;
using etc::Shape;
using etc::testing::absent;
using etc::testing::host;
using etc::testing::HostTensor;
using etc::testing::run_kernel;
using etc::testing::try_run_kernel;

std::vector<float> iota(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i * i % 7) - 2.5f;
  return v;
}

etc::ir::Attrs resize_attrs(const std::string& mode, const std::string& coord, std::vector<int64_t> sizes) {
  return {{"mode", mode},
          {"coordinate_transformation_mode", coord},
          {"nearest_mode", std::string("round_prefer_floor")},
          {"sizes", std::move(sizes)}};
}

}  // namespace

TEST_CASE("resize with run-time scales matches resize with scales as attributes", "[resize][runtime_args]") {
  const auto x = host<float>(Shape{1, 2, 3, 4}, iota(24));
  const std::vector<float> scales = {1.0f, 1.0f, 1.5f, 0.75f};
  const std::vector<int64_t> sizes = {1, 2, 4, 3};  // floor(in * scale)
  for (const char* mode : {"nearest", "linear", "cubic"}) {
    for (const char* coord : {"half_pixel", "align_corners", "asymmetric"}) {
      INFO(mode << " " << coord);
      etc::ir::Attrs fixed = resize_attrs(mode, coord, sizes);
      fixed.set("scales", scales);
      const auto want = run_kernel(EdgeOp::Resize, fixed, {x}, 1);
      const auto got =
          run_kernel(EdgeOp::Resize, resize_attrs(mode, coord, sizes), {x, host<float>(Shape{4}, scales)}, 1);
      REQUIRE(got[0].spec == want[0].spec);
      REQUIRE(got[0].values<float>() == want[0].values<float>());
    }
  }
}

TEST_CASE("resize with run-time sizes and roi matches the attribute form", "[resize][runtime_args]") {
  const auto x = host<float>(Shape{1, 1, 4, 5}, iota(20));
  const std::vector<int64_t> sizes = {1, 1, 3, 7};
  const auto want = run_kernel(EdgeOp::Resize, resize_attrs("linear", "pytorch_half_pixel", sizes), {x}, 1);
  const auto got = run_kernel(EdgeOp::Resize, resize_attrs("linear", "pytorch_half_pixel", sizes),
                              {x, absent(), host<int64_t>(Shape{4}, sizes)}, 1);
  REQUIRE(got[0].values<float>() == want[0].values<float>());

  const std::vector<float> roi = {0, 0, 0.2f, 0.1f, 1, 1, 0.8f, 1.2f};
  etc::ir::Attrs fixed = resize_attrs("linear", "tf_crop_and_resize", sizes);
  fixed.set("roi", roi);
  const auto crop_want = run_kernel(EdgeOp::Resize, fixed, {x}, 1);
  const auto crop_got =
      run_kernel(EdgeOp::Resize, resize_attrs("linear", "tf_crop_and_resize", sizes),
                 {x, absent(), host<int64_t>(Shape{4}, sizes), host<float>(Shape{8}, roi)}, 1);
  REQUIRE(crop_got[0].values<float>() == crop_want[0].values<float>());
}

TEST_CASE("resize fails at run time when the arguments disagree with the declared shape",
          "[resize][runtime_args]") {
  const auto x = host<float>(Shape{1, 1, 2, 2}, {1, 2, 3, 4});
  const auto attrs = resize_attrs("nearest", "asymmetric", {1, 1, 4, 4});
  std::vector<HostTensor> outs;
  const etc::Status ok =
      try_run_kernel(EdgeOp::Resize, attrs, {x, host<float>(Shape{4}, {1, 1, 2, 2})}, 1, outs);
  REQUIRE(ok.ok());
  REQUIRE(outs[0].values<float>() == std::vector<float>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});

  const etc::Status bad =
      try_run_kernel(EdgeOp::Resize, attrs, {x, host<float>(Shape{4}, {1, 1, 3, 2})}, 1, outs);
  REQUIRE(bad.error() == Error::InvalidArgument);
  CHECK_THAT(bad.message(), Catch::Contains("resize") && Catch::Contains("scales") &&
                                Catch::Contains("[1, 1, 6, 4]") && Catch::Contains("[1, 1, 4, 4]"));

  const etc::Status negative =
      try_run_kernel(EdgeOp::Resize, attrs, {x, host<float>(Shape{4}, {1, 1, -2, 2})}, 1, outs);
  REQUIRE(negative.error() == Error::InvalidArgument);

  const etc::Status sizes =
      try_run_kernel(EdgeOp::Resize, attrs, {x, absent(), host<int64_t>(Shape{4}, {1, 1, 4, 5})}, 1, outs);
  REQUIRE(sizes.error() == Error::InvalidArgument);
  CHECK_THAT(sizes.message(), Catch::Contains("sizes"));
}

TEST_CASE("resize infer checks the run-time argument inputs", "[resize][runtime_args]") {
  const auto attrs = resize_attrs("nearest", "asymmetric", {1, 1, 4, 4});
  const etc::TensorSpec x{etc::DType::Float32, Shape{1, 1, 2, 2}};
  CHECK(etc::testing::infer_error(EdgeOp::Resize, attrs, {x, {etc::DType::Float32, Shape{4}}}, 1).empty());
  CHECK_THAT(etc::testing::infer_error(EdgeOp::Resize, attrs, {x, {etc::DType::Float32, Shape{3}}}, 1),
             Catch::Contains("scales"));
  CHECK_THAT(etc::testing::infer_error(EdgeOp::Resize, attrs, {x, {}, {etc::DType::Int32, Shape{4}}}, 1),
             Catch::Contains("sizes"));
}
