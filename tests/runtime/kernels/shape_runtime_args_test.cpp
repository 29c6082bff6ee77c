// Shape-family kernels whose ONNX argument (shape, axes, starts/ends, pads,
// repeats, split, range bounds) arrives at run time: an argument that agrees
// with the declared output shape gives the same result as the attribute form;
// one that disagrees makes run() fail with InvalidArgument naming the op, the
// argument and the declared shape, without touching memory out of bounds.
#include <catch2/catch.hpp>
#include <numeric>
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
using Ints = std::vector<int64_t>;

HostTensor iota_f(Shape shape) {
  std::vector<float> v(static_cast<size_t>(shape.numel()));
  std::iota(v.begin(), v.end(), 0.0f);
  return host<float>(shape, v);
}

HostTensor ints(const Ints& v) { return host<int64_t>(Shape{static_cast<int64_t>(v.size())}, v); }

// run() status of `op` with `inputs`; the outputs are discarded.
etc::Status run_status(EdgeOp op, const etc::ir::Attrs& attrs, const std::vector<HostTensor>& inputs,
                       int num_outputs = 1) {
  std::vector<HostTensor> outs;
  return try_run_kernel(op, attrs, inputs, num_outputs, outs);
}

}  // namespace

TEST_CASE("reshape with a run-time shape applies 0, -1 and allowzero", "[shape][runtime_args]") {
  const HostTensor x = iota_f(Shape{2, 3, 4});
  const etc::ir::Attrs attrs = {{"shape", Ints{2, 12}}, {"arg", std::string("shape")}};
  const auto y = run_kernel(EdgeOp::Reshape, attrs, {x, ints({0, -1})}, 1);
  CHECK(y[0].spec.shape == Shape{2, 12});
  CHECK(y[0].values<float>() == x.values<float>());
  REQUIRE(run_status(EdgeOp::Reshape, attrs, {x, ints({2, 12})}).ok());

  const etc::Status wrong = run_status(EdgeOp::Reshape, attrs, {x, ints({-1, 6})});
  REQUIRE(wrong.error() == Error::InvalidArgument);
  CHECK_THAT(wrong.message(), Catch::Contains("reshape") && Catch::Contains("shape [-1, 6]") &&
                                  Catch::Contains("[4, 6]") && Catch::Contains("[2, 12]"));
  CHECK(run_status(EdgeOp::Reshape, attrs, {x, ints({-1, -1})}).error() == Error::InvalidArgument);
  CHECK(run_status(EdgeOp::Reshape, attrs, {x, ints({5, -1})}).error() == Error::InvalidArgument);
  // With allowzero a 0 is a real 0, which 24 elements cannot take.
  etc::ir::Attrs zero = attrs;
  zero.set("allowzero", int64_t{1});
  CHECK(run_status(EdgeOp::Reshape, zero, {x, ints({0, -1})}).error() == Error::InvalidArgument);
}

TEST_CASE("reshape checks run-time squeeze and unsqueeze axes", "[shape][runtime_args]") {
  const HostTensor x = iota_f(Shape{3, 1, 2});
  const etc::ir::Attrs squeeze = {{"shape", Ints{3, 2}}, {"arg", std::string("squeeze_axes")}};
  CHECK(run_status(EdgeOp::Reshape, squeeze, {x, ints({-2})}).ok());
  CHECK(run_status(EdgeOp::Reshape, squeeze, {x, ints({})}).ok());
  CHECK_THAT(run_status(EdgeOp::Reshape, squeeze, {x, ints({0})}).message(), Catch::Contains("not 1"));
  const etc::ir::Attrs unsqueeze = {{"shape", Ints{3, 1, 1, 2}}, {"arg", std::string("unsqueeze_axes")}};
  CHECK(run_status(EdgeOp::Reshape, unsqueeze, {x, ints({2})}).ok());
  CHECK(run_status(EdgeOp::Reshape, unsqueeze, {x, ints({0})}).error() == Error::InvalidArgument);
  CHECK(run_status(EdgeOp::Reshape, unsqueeze, {x, ints({4})}).error() == Error::InvalidArgument);
}

TEST_CASE("slice with run-time arguments matches the attribute form", "[shape][runtime_args]") {
  const HostTensor x = iota_f(Shape{4, 5});
  struct Case {
    Ints starts, ends, axes, steps;  // as the model gives them
    Ints a_starts, a_ends, a_steps;  // normalized edge attributes
    Ints shape;
  };
  const Case cases[] = {
      {{1, 0}, {3, -1}, {0, 1}, {1, 2}, {1, 0}, {3, 4}, {1, 2}, {2, 2}},
      {{-1}, {-1000}, {1}, {-2}, {0, 4}, {4, -1}, {1, -2}, {4, 3}},
      {{10, 2}, {INT64_MAX, 3}, {-1, 0}, {1, 1}, {2, 5}, {3, 5}, {1, 1}, {1, 0}},
  };
  for (const Case& c : cases) {
    const auto want =
        run_kernel(EdgeOp::Slice, {{"starts", c.a_starts}, {"ends", c.a_ends}, {"steps", c.a_steps}}, {x}, 1);
    const auto got = run_kernel(EdgeOp::Slice, {{"shape", c.shape}},
                                {x, ints(c.starts), ints(c.ends), ints(c.axes), ints(c.steps)}, 1);
    REQUIRE(got[0].spec == want[0].spec);
    CHECK(got[0].values<float>() == want[0].values<float>());
  }
  // Default axes and steps: absent inputs.
  const auto first_rows = run_kernel(EdgeOp::Slice, {{"shape", Ints{2, 5}}}, {x, ints({0}), ints({2})}, 1);
  CHECK(first_rows[0].values<float>() == std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
}

TEST_CASE("slice fails at run time when its arguments disagree with the declared shape",
          "[shape][runtime_args]") {
  const HostTensor x = iota_f(Shape{4, 5});
  const etc::ir::Attrs attrs = {{"shape", Ints{2, 5}}};
  const etc::Status wrong = run_status(EdgeOp::Slice, attrs, {x, ints({1}), ints({4})});
  REQUIRE(wrong.error() == Error::InvalidArgument);
  CHECK_THAT(wrong.message(), Catch::Contains("slice") && Catch::Contains("starts [1]") &&
                                  Catch::Contains("[3, 5]") && Catch::Contains("[2, 5]"));
  CHECK(run_status(EdgeOp::Slice, attrs, {x, ints({0}), ints({2}), ints({0}), ints({0})}).error() ==
        Error::InvalidArgument);
  CHECK(run_status(EdgeOp::Slice, attrs, {x, ints({0}), ints({2}), ints({2})}).error() ==
        Error::InvalidArgument);
  CHECK(run_status(EdgeOp::Slice, attrs, {x, ints({0, 0}), ints({2})}).error() == Error::InvalidArgument);
}

TEST_CASE("pad with run-time pads and value matches the attribute form", "[shape][runtime_args]") {
  const HostTensor x = iota_f(Shape{2, 3});
  for (const char* mode : {"constant", "reflect", "edge"}) {
    INFO(mode);
    const Ints pads = {1, -1, 0, 2};
    const auto want =
        run_kernel(EdgeOp::Pad, {{"pads", pads}, {"mode", std::string(mode)}, {"value", 7.0f}}, {x}, 1);
    const auto got = run_kernel(EdgeOp::Pad, {{"shape", Ints{3, 4}}, {"mode", std::string(mode)}},
                                {x, ints(pads), host<float>(Shape{}, {7.0f})}, 1);
    REQUIRE(got[0].spec == want[0].spec);
    CHECK(got[0].values<float>() == want[0].values<float>());
  }
  // Constant pads with a run-time value.
  const auto filled =
      run_kernel(EdgeOp::Pad, {{"pads", Ints{0, 1, 0, 0}}}, {x, absent(), host<float>(Shape{1}, {-1.0f})}, 1);
  CHECK(filled[0].values<float>() == std::vector<float>{-1, 0, 1, 2, -1, 3, 4, 5});
}

TEST_CASE("pad fails at run time when its pads disagree with the declared shape", "[shape][runtime_args]") {
  const HostTensor x = iota_f(Shape{2, 3});
  const etc::ir::Attrs attrs = {{"shape", Ints{3, 4}}, {"mode", std::string("constant")}};
  const etc::Status wrong = run_status(EdgeOp::Pad, attrs, {x, ints({1, 0, 0, 0})});
  REQUIRE(wrong.error() == Error::InvalidArgument);
  CHECK_THAT(wrong.message(),
             Catch::Contains("pad") && Catch::Contains("pads [1, 0, 0, 0]") && Catch::Contains("[3, 4]"));
  CHECK(run_status(EdgeOp::Pad, attrs, {x, ints({1, 1})}).error() == Error::InvalidArgument);
  CHECK(run_status(EdgeOp::Pad, attrs, {x, ints({INT64_MAX, 1, INT64_MIN, 0})}).error() ==
        Error::InvalidArgument);
}

TEST_CASE("expand, tile and split check run-time arguments", "[shape][runtime_args]") {
  const HostTensor x = iota_f(Shape{3, 1});
  const auto e = run_kernel(EdgeOp::Expand, {{"shape", Ints{2, 3, 2}}}, {x, ints({2, 1, 2})}, 1);
  CHECK(e[0].values<float>() == std::vector<float>{0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2});
  CHECK(run_status(EdgeOp::Expand, {{"shape", Ints{2, 3, 2}}}, {x, ints({2, 2})}).error() ==
        Error::InvalidArgument);
  CHECK(run_status(EdgeOp::Expand, {{"shape", Ints{3, 2}}}, {x, ints({3, -2})}).error() ==
        Error::InvalidArgument);

  const auto t = run_kernel(EdgeOp::Tile, {{"repeats", Ints{1, 2}}}, {x, ints({1, 2})}, 1);
  CHECK(t[0].values<float>() == std::vector<float>{0, 0, 1, 1, 2, 2});
  CHECK_THAT(run_status(EdgeOp::Tile, {{"repeats", Ints{1, 2}}}, {x, ints({2, 1})}).message(),
             Catch::Contains("tile") && Catch::Contains("repeats [2, 1]") && Catch::Contains("[3, 2]"));

  const etc::ir::Attrs split = {{"axis", int64_t{0}}, {"sizes", Ints{1, 2}}};
  const auto s = run_kernel(EdgeOp::Split, split, {x, ints({1, 2})}, 2);
  CHECK(s[1].values<float>() == std::vector<float>{1, 2});
  CHECK(run_status(EdgeOp::Split, split, {x, ints({2, 1})}, 2).error() == Error::InvalidArgument);
}

TEST_CASE("range with run-time bounds fills the declared length or fails", "[shape][runtime_args]") {
  const etc::ir::Attrs attrs = {{"shape", Ints{3}}};
  const auto r = run_kernel(
      EdgeOp::Range, attrs,
      {host<int32_t>(Shape{}, {10}), host<int32_t>(Shape{}, {3}), host<int32_t>(Shape{}, {-3})}, 1);
  CHECK(r[0].values<int32_t>() == std::vector<int32_t>{10, 7, 4});
  const auto f =
      run_kernel(EdgeOp::Range, attrs,
                 {host<float>(Shape{}, {1}), host<float>(Shape{}, {2}), host<float>(Shape{}, {0.4f})}, 1);
  CHECK(f[0].values<float>()[2] == Approx(1.8f));
  const etc::Status wrong =
      run_status(EdgeOp::Range, attrs,
                 {host<int64_t>(Shape{}, {0}), host<int64_t>(Shape{}, {4}), host<int64_t>(Shape{}, {1})});
  REQUIRE(wrong.error() == Error::InvalidArgument);
  CHECK_THAT(wrong.message(),
             Catch::Contains("range") && Catch::Contains("4 elements") && Catch::Contains("[3]"));
  CHECK(run_status(EdgeOp::Range, attrs,
                   {host<int64_t>(Shape{}, {0}), host<int64_t>(Shape{}, {4}), host<int64_t>(Shape{}, {0})})
            .error() == Error::InvalidArgument);
}
