// reduce_* with axes read at run time: agreeing axes give the result of the
// attribute form; disagreeing ones make run() fail with InvalidArgument naming
// the op, the axes and the declared shape.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/runtime/kernels/reduce_kernel_test_util.h"

namespace {

using etc::EdgeOp;
using etc::Error;
using etc::Shape;
using etc::testing::host;
using etc::testing::HostTensor;
using etc::testing::run_kernel;
using etc::testing::try_run_kernel;

etc::ir::Attrs runtime_attrs(std::vector<int64_t> shape, int64_t keepdims, int64_t noop = 0) {
  return {{"shape", std::move(shape)}, {"keepdims", keepdims}, {"noop_with_empty_axes", noop}};
}

std::vector<float> values(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 5) % 11) - 3.0f;
  return v;
}

}  // namespace

TEST_CASE("reduce with run-time axes matches reduce with axes as an attribute", "[reduce][runtime_args]") {
  const auto x = host<float>(Shape{2, 3, 4}, values(24));
  struct Case {
    std::vector<int64_t> axes;  // as the model gives them
    std::vector<int64_t> sorted;
    int64_t keepdims;
    std::vector<int64_t> shape;
  };
  const Case cases[] = {
      {{-1}, {2}, 1, {2, 3, 1}},
      {{2, 0}, {0, 2}, 0, {3}},
      {{1}, {1}, 0, {2, 4}},
  };
  for (EdgeOp op : {EdgeOp::ReduceSum, EdgeOp::ReduceMean, EdgeOp::ReduceMax, EdgeOp::ReduceL2}) {
    for (const Case& c : cases) {
      INFO(etc::edge_op_name(op) << " keepdims " << c.keepdims);
      const auto want = run_kernel(op, {{"axes", c.sorted}, {"keepdims", c.keepdims}}, {x}, 1);
      const auto got = run_kernel(op, runtime_attrs(c.shape, c.keepdims),
                                  {x, host<int64_t>(Shape{static_cast<int64_t>(c.axes.size())}, c.axes)}, 1);
      REQUIRE(got[0].spec == want[0].spec);
      REQUIRE(got[0].values<float>() == want[0].values<float>());
    }
  }
}

TEST_CASE("reduce fails at run time when the axes disagree with the declared shape",
          "[reduce][runtime_args]") {
  const auto x = host<float>(Shape{2, 3}, values(6));
  std::vector<HostTensor> outs;
  const auto attrs = runtime_attrs({2, 1}, 1);
  REQUIRE(try_run_kernel(EdgeOp::ReduceSum, attrs, {x, host<int64_t>(Shape{1}, {1})}, 1, outs).ok());

  const etc::Status wrong =
      try_run_kernel(EdgeOp::ReduceSum, attrs, {x, host<int64_t>(Shape{1}, {0})}, 1, outs);
  REQUIRE(wrong.error() == Error::InvalidArgument);
  CHECK_THAT(wrong.message(), Catch::Contains("reduce_sum") && Catch::Contains("axes [0]") &&
                                  Catch::Contains("[1, 3]") && Catch::Contains("[2, 1]"));

  const etc::Status range =
      try_run_kernel(EdgeOp::ReduceSum, attrs, {x, host<int64_t>(Shape{1}, {2})}, 1, outs);
  REQUIRE(range.error() == Error::InvalidArgument);
  const etc::Status twice =
      try_run_kernel(EdgeOp::ReduceSum, attrs, {x, host<int64_t>(Shape{2}, {1, -1})}, 1, outs);
  REQUIRE(twice.error() == Error::InvalidArgument);
}

TEST_CASE("reduce with empty run-time axes reduces all, or nothing with noop_with_empty_axes",
          "[reduce][runtime_args]") {
  const auto x = host<float>(Shape{2, 2}, {1, 2, 3, 4});
  const auto none = host<int64_t>(Shape{0}, {});
  REQUIRE(run_kernel(EdgeOp::ReduceSum, runtime_attrs({1, 1}, 1), {x, none}, 1)[0].values<float>() ==
          std::vector<float>{10});
  REQUIRE(run_kernel(EdgeOp::ReduceSum, runtime_attrs({2, 2}, 1, 1), {x, none}, 1)[0].values<float>() ==
          std::vector<float>{1, 2, 3, 4});
}

TEST_CASE("reduce infer rejects a declared shape no axes could give", "[reduce][runtime_args]") {
  const etc::TensorSpec x{etc::DType::Float32, Shape{2, 3}};
  const etc::TensorSpec axes{etc::DType::Int64, Shape{1}};
  CHECK(etc::testing::infer_error(EdgeOp::ReduceSum, runtime_attrs({2, 1}, 1), {x, axes}, 1).empty());
  CHECK_FALSE(etc::testing::infer_error(EdgeOp::ReduceSum, runtime_attrs({2, 2}, 1), {x, axes}, 1).empty());
  CHECK_FALSE(etc::testing::infer_error(EdgeOp::ReduceSum, runtime_attrs({2, 1}, 1),
                                        {x, {etc::DType::Float32, Shape{1}}}, 1)
                  .empty());
}
