// max_pool and avg_pool kernels on behaviour the ONNX conformance suite does
// not reach: ceil_mode windows past the padding, count_include_pad divisors
// at the ragged end (PyTorch semantics), column-major 3-D indices, and
// padding that must never win a max.
#include <cstdint>
#include <vector>

#include "tests/runtime/kernels/conv_kernel_test_util.h"

namespace etc::test {
namespace {

ir::Attrs pool_attrs(std::vector<int64_t> kernel, std::vector<int64_t> strides, std::vector<int64_t> pads,
                     int64_t ceil_mode) {
  return {{"kernel_shape", kernel}, {"strides", strides}, {"pads", pads}, {"ceil_mode", ceil_mode}};
}

TEST_CASE("avg_pool ceil_mode divides the ragged last window by its padded extent") {
  const HostTensor x = host_tensor(Shape{1, 1, 6}, std::vector<float>{1, 2, 3, 4, 5, 6});
  ir::Attrs attrs = pool_attrs({3}, {2}, {1, 1}, 1);
  attrs.set("count_include_pad", int64_t{1});
  REQUIRE(run_kernel(EdgeOp::AvgPool, attrs, {&x})[0].values<float>() == std::vector<float>{1, 3, 5, 3});
  attrs.set("count_include_pad", int64_t{0});
  REQUIRE(run_kernel(EdgeOp::AvgPool, attrs, {&x})[0].values<float>() == std::vector<float>{1.5f, 3, 5, 6});
}

TEST_CASE("pool ceil_mode drops a last window that would start in the end padding") {
  const HostTensor x = host_tensor(Shape{1, 1, 5}, std::vector<float>{1, 2, 3, 4, 5});
  ir::Attrs attrs = pool_attrs({2}, {3}, {1, 1}, 1);
  attrs.set("count_include_pad", int64_t{1});
  const auto y = run_kernel(EdgeOp::AvgPool, attrs, {&x});
  REQUIRE(y[0].spec.shape == Shape{1, 1, 2});
  REQUIRE(y[0].values<float>() == std::vector<float>{0.5f, 3.5f});
  REQUIRE(run_kernel(EdgeOp::MaxPool, pool_attrs({2}, {3}, {1, 1}, 1), {&x})[0].values<float>() ==
          std::vector<float>{1, 4});
}

TEST_CASE("max_pool padding never wins over negative int8 inputs") {
  const HostTensor x = host_tensor(Shape{1, 1, 2, 2}, std::vector<int8_t>{-5, -7, -9, -3});
  const auto y = run_kernel(EdgeOp::MaxPool, pool_attrs({2, 2}, {1, 1}, {1, 1, 1, 1}, 0), {&x});
  REQUIRE(y[0].values<int8_t>() == std::vector<int8_t>{-5, -5, -7, -5, -3, -3, -9, -3, -3});
}

TEST_CASE("max_pool 3-D indices follow storage_order and include the plane offset") {
  const int64_t d = 3, h = 4, w = 5, planes = 2;
  const auto xv = random_values<float>(planes * d * h * w, 7);
  const HostTensor x = host_tensor(Shape{1, planes, d, h, w}, xv);
  for (int64_t order : {0, 1}) {
    ir::Attrs attrs = pool_attrs({2, 2, 3}, {1, 2, 2}, {0, 1, 0, 0, 0, 1}, 0);
    attrs.set("storage_order", order);
    const auto y = run_kernel(EdgeOp::MaxPool, attrs, {&x}, 2);
    REQUIRE(y[1].spec == TensorSpec{DType::Int64, Shape{1, planes, 2, 2, 2}});
    const auto values = y[0].values<float>();
    const auto indices = y[1].values<int64_t>();
    for (size_t i = 0; i < values.size(); ++i) {
      int64_t local = indices[i] % (d * h * w);
      const int64_t plane = indices[i] / (d * h * w);
      REQUIRE(plane == static_cast<int64_t>(i) / 8);
      if (order == 1) {  // column-major: index = id + ih * D + iw * D * H
        const int64_t id = local % d, ih = (local / d) % h, iw = local / (d * h);
        local = (id * h + ih) * w + iw;
      }
      REQUIRE(xv[plane * d * h * w + local] == values[i]);
    }
  }
}

TEST_CASE("pool infer rejects pads that cover a whole window and non-float avg_pool") {
  const TensorSpec x{DType::Float32, Shape{1, 1, 4, 4}};
  REQUIRE_FALSE(infer_status(EdgeOp::MaxPool, pool_attrs({2, 2}, {1, 1}, {2, 0, 0, 0}, 0), {x}).ok());
  const TensorSpec xi{DType::Int32, Shape{1, 1, 4, 4}};
  REQUIRE(infer_status(EdgeOp::AvgPool, pool_attrs({2, 2}, {1, 1}, {0, 0, 0, 0}, 0), {xi}).error() ==
          Error::InvalidType);
}

}  // namespace
}  // namespace etc::test
