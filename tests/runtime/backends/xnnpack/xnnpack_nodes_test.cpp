// Every node kind the blob can express defines, passes the runtime's shape
// checks and computes what XNNPACK documents, on tiny NHWC tensors.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "tests/support/xnnpack_blob_builder.h"

namespace etc {
namespace {

using testing::XnnpackArg;
using testing::XnnpackBlobBuilder;
using testing::XnnpackRunner;
using testing::zeros;
using xnnpack::fb::NodeType;

Shape to_shape(const std::vector<uint64_t>& dims) {
  Shape s;
  for (uint64_t d : dims) s.push_back(static_cast<int64_t>(d));
  return s;
}

// One node from input(s) to one output; returns the output.
std::vector<float> run_node(XnnpackBlobBuilder& b, std::vector<XnnpackArg> inputs,
                            const std::vector<uint64_t>& out) {
  XnnpackRunner runner;
  const Status s = runner.init(b.build());
  INFO(s.message());
  REQUIRE(s.ok());
  inputs.push_back(zeros(to_shape(out)));
  REQUIRE(runner.execute(inputs).ok());
  return inputs.back().data;
}

std::vector<float> unary(NodeType type, const std::vector<float>& x, float alpha = 0) {
  XnnpackBlobBuilder b;
  const uint32_t in = b.input({x.size()}, 0);
  const uint32_t out = b.output({x.size()}, 0);
  b.node(type, {in}, {out}).alpha = alpha;
  return run_node(b, {{to_shape({x.size()}), x}}, {x.size()});
}

std::vector<float> binary(NodeType type, const std::vector<float>& x, const std::vector<float>& y) {
  XnnpackBlobBuilder b;
  const uint32_t in0 = b.input({x.size()}, 0);
  const uint32_t in1 = b.input({y.size()}, 1);
  const uint32_t out = b.output({x.size()}, 0);
  b.node(type, {in0, in1}, {out});
  return run_node(b, {{to_shape({x.size()}), x}, {to_shape({y.size()}), y}}, {x.size()});
}

TEST_CASE("xnnpack unary nodes", "[xnnpack]") {
  const std::vector<float> x = {-2.5f, -0.5f, 0.5f, 1.5f};
  CHECK(unary(NodeType::Abs, x) == std::vector<float>{2.5f, 0.5f, 0.5f, 1.5f});
  CHECK(unary(NodeType::Negate, x) == std::vector<float>{2.5f, 0.5f, -0.5f, -1.5f});
  CHECK(unary(NodeType::Floor, x) == std::vector<float>{-3, -1, 0, 1});
  CHECK(unary(NodeType::Ceiling, x) == std::vector<float>{-2, -0.0f, 1, 2});
  CHECK(unary(NodeType::BankersRounding, x) == std::vector<float>{-2, -0.0f, 0, 2});
  CHECK(unary(NodeType::Square, x) == std::vector<float>{6.25f, 0.25f, 0.25f, 2.25f});
  CHECK(unary(NodeType::SquareRoot, {4, 9, 0, 1}) == std::vector<float>{2, 3, 0, 1});
  CHECK(unary(NodeType::LeakyRelu, x, 0.1f) == std::vector<float>{-0.25f, -0.05f, 0.5f, 1.5f});
  const auto sig = unary(NodeType::Sigmoid, x);
  const auto hs = unary(NodeType::HardSwish, x);
  const auto elu = unary(NodeType::Elu, x, 1.0f);
  for (size_t i = 0; i < x.size(); ++i) {
    CHECK(sig[i] == Approx(1 / (1 + std::exp(-x[i]))).epsilon(1e-5));
    CHECK(hs[i] == Approx(x[i] * std::min(std::max(x[i] + 3, 0.0f), 6.0f) / 6).margin(1e-6));
    CHECK(elu[i] == Approx(x[i] > 0 ? x[i] : std::expm1(x[i])).epsilon(1e-5));
  }
}

TEST_CASE("xnnpack binary nodes", "[xnnpack]") {
  const std::vector<float> x = {1, -2, 3, 8}, y = {2, 2, -3, 4};
  CHECK(binary(NodeType::Subtract, x, y) == std::vector<float>{-1, -4, 6, 4});
  CHECK(binary(NodeType::Multiply, x, y) == std::vector<float>{2, -4, -9, 32});
  CHECK(binary(NodeType::Divide, x, y) == std::vector<float>{0.5f, -1, -1, 2});
  CHECK(binary(NodeType::Maximum, x, y) == std::vector<float>{2, 2, 3, 8});
  CHECK(binary(NodeType::Minimum, x, y) == std::vector<float>{1, -2, -3, 4});
  CHECK(binary(NodeType::SquaredDifference, x, y) == std::vector<float>{1, 16, 36, 16});
}

TEST_CASE("xnnpack softmax, prelu and global average pooling", "[xnnpack]") {
  {
    XnnpackBlobBuilder b;
    const uint32_t in = b.input({2, 3}, 0);
    const uint32_t out = b.output({2, 3}, 0);
    b.node(NodeType::Softmax, {in}, {out});
    const auto y = run_node(b, {{Shape{2, 3}, {0, 0, 0, 1, 2, 3}}}, {2, 3});
    CHECK(y[0] == Approx(1.0f / 3));
    CHECK(y[5] == Approx(std::exp(3.0) / (std::exp(1.0) + std::exp(2.0) + std::exp(3.0))));
  }
  {
    XnnpackBlobBuilder b;
    const uint32_t in = b.input({1, 1, 2, 2}, 0);
    const uint32_t slope = b.constant({2}, {0.5f, 0.25f});
    const uint32_t out = b.output({1, 1, 2, 2}, 0);
    b.node(NodeType::PRelu, {in, slope}, {out});
    CHECK(run_node(b, {{Shape{1, 1, 2, 2}, {-2, -4, 3, -8}}}, {1, 1, 2, 2}) ==
          std::vector<float>{-1, -1, 3, -2});
  }
  {
    XnnpackBlobBuilder b;
    const uint32_t in = b.input({1, 2, 2, 3}, 0);
    const uint32_t out = b.output({1, 1, 1, 3}, 0);
    b.node(NodeType::GlobalAveragePooling2d, {in}, {out});
    const auto y = run_node(b, {{Shape{1, 2, 2, 3}, {1, 2, 3, 1, 2, 3, 5, 6, 7, 5, 6, 7}}}, {1, 1, 1, 3});
    CHECK(y == std::vector<float>{3, 4, 5});
  }
}

TEST_CASE("xnnpack pad, reshape, resize and depth to space", "[xnnpack]") {
  {
    XnnpackBlobBuilder b;
    const uint32_t in = b.input({1, 2, 2, 1}, 0);
    const uint32_t out = b.output({1, 3, 4, 1}, 0);
    auto& pad = b.node(NodeType::StaticConstantPad, {in}, {out});
    pad.pre_paddings = {0, 1, 1, 0};
    pad.post_paddings = {0, 0, 1, 0};
    pad.padding_value = 7;
    CHECK(run_node(b, {{Shape{1, 2, 2, 1}, {1, 2, 3, 4}}}, {1, 3, 4, 1}) ==
          std::vector<float>{7, 7, 7, 7, 7, 1, 2, 7, 7, 3, 4, 7});
  }
  {
    XnnpackBlobBuilder b;
    const uint32_t in = b.input({2, 3}, 0);
    const uint32_t out = b.output({3, 2}, 0);
    b.node(NodeType::StaticReshape, {in}, {out}).new_shape = {3, 2};
    CHECK(run_node(b, {{Shape{2, 3}, {1, 2, 3, 4, 5, 6}}}, {3, 2}) == std::vector<float>{1, 2, 3, 4, 5, 6});
  }
  {
    XnnpackBlobBuilder b;
    const uint32_t in = b.input({1, 2, 2, 1}, 0);
    const uint32_t out = b.output({1, 4, 4, 1}, 0);
    b.node(NodeType::StaticResizeBilinear2d, {in}, {out}).new_shape = {4, 4};
    const auto y = run_node(b, {{Shape{1, 2, 2, 1}, {1, 1, 1, 1}}}, {1, 4, 4, 1});
    CHECK(y == std::vector<float>(16, 1.0f));
  }
  {
    XnnpackBlobBuilder b;
    const uint32_t in = b.input({1, 1, 1, 4}, 0);
    const uint32_t out = b.output({1, 2, 2, 1}, 0);
    b.node(NodeType::DepthToSpace, {in}, {out}).block_size = 2;
    CHECK(run_node(b, {{Shape{1, 1, 1, 4}, {1, 2, 3, 4}}}, {1, 2, 2, 1}) == std::vector<float>{1, 2, 3, 4});
  }
}

TEST_CASE("xnnpack deconvolution spreads each input pixel over its stride", "[xnnpack]") {
  XnnpackBlobBuilder b;
  const uint32_t in = b.input({1, 2, 2, 1}, 0);
  const uint32_t filter = b.constant({1, 2, 2, 1}, {1, 10, 100, 1000});
  const uint32_t bias = b.constant({1}, {0.5f});
  const uint32_t out = b.output({1, 4, 4, 1}, 0);
  auto& deconv = b.node(NodeType::Deconvolution2d, {in, filter, bias}, {out});
  deconv.kernel = {2, 2};
  deconv.stride = {2, 2};
  deconv.group_input_channels = 1;
  deconv.group_output_channels = 1;
  const auto y = run_node(b, {{Shape{1, 2, 2, 1}, {1, 2, 3, 4}}}, {1, 4, 4, 1});
  const float x[2][2] = {{1, 2}, {3, 4}}, w[2][2] = {{1, 10}, {100, 1000}};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      CHECK(y[static_cast<size_t>(i * 4 + j)] == x[i / 2][j / 2] * w[i % 2][j % 2] + 0.5f);
}

}  // namespace
}  // namespace etc
