// An XNNPACK blob graph at other input sizes (blob_resize.h): each rule a
// parameter follows the input by, and the errors for sizes a blob cannot
// follow, naming the node.
#include "runtime/backends/xnnpack/blob_resize.h"

#include <catch2/catch.hpp>
#include <memory>

namespace etc::xnnpack {
namespace {

// A graph of activations with the given dims; tensor 0 is the delegate input.
fb::GraphT graph_of(std::vector<BlobDims> dims) {
  fb::GraphT g;
  g.version = kXnnpackBlobVersion;
  g.num_inputs = 1;
  g.num_outputs = 1;
  for (size_t t = 0; t < dims.size(); ++t) {
    auto tensor = std::make_unique<fb::TensorT>();
    tensor->dims = dims[t];
    if (t == 0) tensor->external_input = 0;
    if (t + 1 == dims.size()) tensor->external_output = 0;
    g.tensors.push_back(std::move(tensor));
  }
  return g;
}

fb::NodeT& add_node(fb::GraphT& g, fb::NodeType type, std::vector<uint32_t> in, uint32_t out) {
  auto node = std::make_unique<fb::NodeT>();
  node->type = type;
  node->inputs = std::move(in);
  node->outputs = {out};
  g.nodes.push_back(std::move(node));
  return *g.nodes.back();
}

}  // namespace

TEST_CASE("a reshape takes what the other dims leave in its infer_dim", "[xnnpack][resize]") {
  fb::GraphT g = graph_of({{1, 4, 6}, {1, 24}});
  fb::NodeT& r = add_node(g, fb::NodeType::StaticReshape, {0}, 1);
  r.new_shape = {1, 24};
  r.infer_dim = 1;
  REQUIRE(resize_graph(g, {{1, 2, 6}}).ok());
  CHECK(r.new_shape == BlobDims{1, 12});
  CHECK(g.tensors[1]->dims == BlobDims{1, 12});
}

TEST_CASE("a layout change of a one-channel tensor permutes the input's dims", "[xnnpack][resize]") {
  fb::GraphT g = graph_of({{1, 1, 8, 6}, {1, 8, 6, 1}});
  fb::NodeT& r = add_node(g, fb::NodeType::StaticReshape, {0}, 1);
  r.new_shape = {1, 8, 6, 1};
  r.perm = {0, 2, 3, 1};
  REQUIRE(resize_graph(g, {{1, 1, 5, 3}}).ok());
  CHECK(g.tensors[1]->dims == BlobDims{1, 5, 3, 1});
}

TEST_CASE("a reshape with no rule is refused when the input no longer fits it", "[xnnpack][resize]") {
  fb::GraphT g = graph_of({{1, 4, 6}, {1, 24}});
  add_node(g, fb::NodeType::StaticReshape, {0}, 1).new_shape = {1, 24};
  const Status s = resize_graph(g, {{1, 2, 6}});
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.message(), Catch::Contains("node 0 (StaticReshape)") && Catch::Contains("follows the input"));
}

TEST_CASE("a slice runs to the input's end in its to_end dims", "[xnnpack][resize]") {
  fb::GraphT g = graph_of({{1, 10, 8}, {1, 7, 4}});
  fb::NodeT& s = add_node(g, fb::NodeType::Slice, {0}, 1);
  s.offsets = {0, 3, 2};
  s.to_end = {1};
  REQUIRE(resize_graph(g, {{1, 6, 8}}).ok());
  CHECK(g.tensors[1]->dims == BlobDims{1, 3, 4});
  // Past the input: refused.
  fb::GraphT h = graph_of({{1, 10, 8}, {1, 7, 4}});
  fb::NodeT& t = add_node(h, fb::NodeType::Slice, {0}, 1);
  t.offsets = {0, 3, 2};
  t.to_end = {1};
  CHECK_THAT(resize_graph(h, {{1, 2, 8}}).message(), Catch::Contains("leaves input [1, 2, 8]"));
}

TEST_CASE("a nearest resize by scales recomputes its size and source indices", "[xnnpack][resize]") {
  fb::GraphT g = graph_of({{1, 4, 4, 3}, {1, 8, 8, 3}});
  fb::NodeT& r = add_node(g, fb::NodeType::ResizeNearest, {0}, 1);
  r.scales = {2.0f, 2.0f};
  r.coord_mode = 3;    // asymmetric
  r.nearest_mode = 2;  // floor
  REQUIRE(resize_graph(g, {{1, 3, 2, 3}}).ok());
  CHECK(g.tensors[1]->dims == BlobDims{1, 6, 4, 3});
  CHECK(r.indices == std::vector<uint64_t>{0, 0, 1, 1, 2, 2, 0, 0, 1, 1});
  // Scales that would make an enormous output are refused before any plan is built.
  r.scales = {1e30f, 2.0f};
  CHECK_THAT(resize_graph(g, {{1, 3, 2, 3}}).message(), Catch::Contains("too large"));
}

TEST_CASE("a window larger than its padded input is refused naming the node", "[xnnpack][resize]") {
  fb::GraphT g = graph_of({{1, 8, 8, 2}, {1, 4, 4, 2}});
  fb::NodeT& p = add_node(g, fb::NodeType::MaxPooling2d, {0}, 1);
  p.kernel = {5, 5};
  p.stride = {1, 1};
  const Status s = resize_graph(g, {{1, 3, 8, 2}});
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.message(),
             Catch::Contains("node 0 (MaxPooling2d)") && Catch::Contains("larger than the padded input"));
}

TEST_CASE("a batch matmul's strides, sizes and product follow its operands", "[xnnpack][resize]") {
  // A [2, 3, 4] x B [2, 4, 5] -> C [2, 3, 5], every axis in place.
  fb::GraphT g = graph_of({{2, 3, 4}, {2, 4, 5}, {2, 3, 5}});
  g.num_inputs = 2;
  g.tensors[1]->external_input = 1;
  fb::NodeT& m = add_node(g, fb::NodeType::BatchMatMul, {0, 1}, 2);
  m.stride_axes = {0, 1, 2, 0, 1, 2, 0, 1, 2};
  const BlobDims a{2, 3, 4}, b{2, 4, 5}, c{2, 3, 5};
  auto layout = batch_matmul_layout(m.stride_axes, {&a, &b, &c});
  REQUIRE(layout.ok());
  CHECK(layout->strides == std::vector<uint64_t>{12, 4, 1, 20, 5, 1, 15, 5, 1});
  CHECK(layout->mnk == std::vector<uint64_t>{3, 5, 4});
  CHECK(layout->batch == std::vector<uint64_t>{2});
  // A longer sequence: M grows, and so do the product and its strides.
  REQUIRE(resize_graph(g, {{2, 7, 4}, {2, 4, 5}}).ok());
  CHECK(g.tensors[2]->dims == BlobDims{2, 7, 5});
  CHECK(m.mnk == std::vector<uint64_t>{7, 5, 4});
  CHECK(m.strides == std::vector<uint64_t>{28, 4, 1, 20, 5, 1, 35, 5, 1});
  // An axis outside its operand is refused.
  CHECK_FALSE(batch_matmul_layout({0, 1, 5, 0, 1, 2, 0, 1, 2}, {&a, &b, &c}).ok());
}

TEST_CASE("the first difference between two blob graphs names the tensor and its producer",
          "[xnnpack][resize]") {
  fb::GraphT a = graph_of({{1, 4, 4, 2}, {1, 4, 4, 2}});
  add_node(a, fb::NodeType::Clamp, {0}, 1);
  fb::GraphT b = graph_of({{1, 4, 4, 2}, {1, 4, 5, 2}});
  add_node(b, fb::NodeType::Clamp, {0}, 1);
  CHECK_THAT(first_difference(a, b), Catch::Contains("tensor 1, the output of node 0 (Clamp)"));
  CHECK(first_difference(a, a).empty());
}

}  // namespace etc::xnnpack
