// The oneDNN partitioner's rules: what it takes and, for what it leaves,
// a reason that names the op and why.
#include "partitioners/onednn/onednn_partitioner.h"

#include <catch2/catch.hpp>

#include "partitioners/composite/composite_partitioner.h"
#include "partitioners/xnnpack/xnnpack_partitioner.h"
#include "tests/support/graph_builder.h"

namespace etc {
namespace {

using testing::GraphBuilder;

Support last_node(const ir::ExportedProgram& p) {
  return onednn::OnednnPartitioner::is_supported(p.graph, p.graph.nodes().back());
}

ir::Attrs pool_attrs(std::vector<int64_t> k, std::vector<int64_t> s, std::vector<int64_t> p, int64_t ceil,
                     int64_t count_include_pad = 0) {
  return ir::Attrs{{"kernel_shape", k}, {"strides", s},
                   {"pads", p},         {"dilations", std::vector<int64_t>{1, 1}},
                   {"ceil_mode", ceil}, {"count_include_pad", count_include_pad}};
}

TEST_CASE("oneDNN partitioner refuses what its primitives cannot compute, saying why", "[onednn]") {
  SECTION("a convolution with weights computed at run time") {
    GraphBuilder b;
    const auto x = b.input("x", DType::Float32, {1, 4, 8, 8});
    const auto w = b.input("w", DType::Float32, {4, 4, 3, 3});
    b.op(EdgeOp::Conv, {x, w},
         ir::Attrs{{"strides", std::vector<int64_t>{1, 1}},
                   {"pads", std::vector<int64_t>(4, 1)},
                   {"dilations", std::vector<int64_t>{1, 1}},
                   {"group", int64_t{1}}});
    const Support s = last_node(b.build());
    CHECK_FALSE(s.supported);
    CHECK(s.reason == "onednn: conv with non-constant weights");
  }
  SECTION("a subtraction whose first operand broadcasts") {
    GraphBuilder b;
    const auto x = b.input("x", DType::Float32, {1, 4, 8, 8});
    const auto c = b.input("c", DType::Float32, {1, 4, 1, 1});
    b.op(EdgeOp::Sub, {c, x});
    const Support s = last_node(b.build());
    CHECK_FALSE(s.supported);
    CHECK(s.reason.find("first operand broadcasts") != std::string::npos);
  }
  SECTION("an addition whose first operand broadcasts is taken (it commutes)") {
    GraphBuilder b;
    const auto x = b.input("x", DType::Float32, {1, 4, 8, 8});
    const auto c = b.input("c", DType::Float32, {1, 4, 1, 1});
    b.op(EdgeOp::Add, {c, x});
    CHECK(last_node(b.build()).supported);
  }
  SECTION("integer tensors") {
    GraphBuilder b;
    const auto x = b.input("x", DType::Int32, {4});
    b.op(EdgeOp::Relu, {x});
    const Support s = last_node(b.build());
    CHECK_FALSE(s.supported);
    CHECK(s.reason == "onednn: computes float32 only, the output is int32");
  }
  SECTION("average pooling that counts padding in a ceil-mode window") {
    GraphBuilder b;
    const auto x = b.input("x", DType::Float32, {1, 4, 8, 8});
    b.op(EdgeOp::AvgPool, {x}, pool_attrs({3, 3}, {2, 2}, {0, 0, 0, 0}, 1, 1));
    const Support s = last_node(b.build());
    CHECK_FALSE(s.supported);
    CHECK(s.reason.find("count_include_pad=1 and ceil_mode=1") != std::string::npos);
  }
  SECTION("max pooling in ceil mode is taken") {
    GraphBuilder b;
    const auto x = b.input("x", DType::Float32, {1, 4, 8, 8});
    b.op(EdgeOp::MaxPool, {x}, pool_attrs({3, 3}, {2, 2}, {0, 0, 0, 0}, 1));
    CHECK(last_node(b.build()).supported);
  }
  SECTION("an op oneDNN has no primitive for") {
    GraphBuilder b;
    const auto x = b.input("x", DType::Float32, {4});
    b.op(EdgeOp::Sin, {x});
    const Support s = last_node(b.build());
    CHECK_FALSE(s.supported);
    CHECK(s.reason == "onednn: no oneDNN primitive for 'sin'");
  }
}

TEST_CASE("oneDNN partitions leave data movement alone", "[onednn]") {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {2, 6});
  b.output(b.op(EdgeOp::Reshape, {x}, ir::Attrs{{"shape", std::vector<int64_t>{3, 4}}}));
  const PartitionResult r = onednn::OnednnPartitioner().partition(b.build());
  CHECK(r.partition_tags.empty());
  REQUIRE(r.rejection_reasons.size() == 1);
}

// Each node's backend under --backend onednn --backend xnnpack (cost
// planning), in node order.
std::vector<std::string> planned_backends(const ir::ExportedProgram& p) {
  std::vector<std::unique_ptr<Partitioner>> children;
  children.push_back(std::make_unique<onednn::OnednnPartitioner>());
  children.push_back(std::make_unique<xnnpack::XnnpackPartitioner>());
  const PartitionResult r =
      CompositePartitioner(std::move(children), CompositePartitioner::Planning::kCost).partition(p);
  std::vector<std::string> out;
  for (const ir::Node& n : r.tagged_exported_program.graph.nodes()) {
    const std::string& tag = n.meta.delegation_tag;
    out.push_back(tag.empty() ? "" : r.partition_tags.at(tag).backend_id);
  }
  return out;
}

ir::ValueId conv(GraphBuilder& b, ir::ValueId x, std::vector<int64_t> w_dims) {
  int64_t n = 1;
  for (int64_t d : w_dims) n *= d;
  const size_t spatial = w_dims.size() - 2;
  const auto w =
      b.constant_f32("w" + std::to_string(x), Shape(Span<const int64_t>(w_dims.data(), w_dims.size())),
                     std::vector<float>(static_cast<size_t>(n), 0.01f));
  return b.op(EdgeOp::Conv, {x, w},
              ir::Attrs{{"strides", std::vector<int64_t>(spatial, 1)},
                        {"pads", std::vector<int64_t>(2 * spatial, 1)},
                        {"dilations", std::vector<int64_t>(spatial, 1)},
                        {"group", int64_t{1}}});
}

// Node by node the XNNPACK backend's own kernels ran the convolutions of
// the benchmark networks faster than oneDNN (its 3x3 ones by 1.5-1.75x, both
// as Winograd), so with both backends a residual block goes whole to
// XNNPACK, though oneDNN is listed first and takes every node of it; a 3-D
// convolution, which XNNPACK does not take, goes to oneDNN.
TEST_CASE("with both backends each node goes to the one measured faster for it", "[onednn][composite]") {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {1, 64, 28, 28});
  const auto h = b.op(EdgeOp::Relu, {conv(b, x, {64, 64, 3, 3})});
  b.output(b.op(EdgeOp::Relu, {b.op(EdgeOp::Add, {conv(b, h, {64, 64, 3, 3}), x})}));
  const ir::ExportedProgram residual = b.build();
  for (const ir::Node& n : residual.graph.nodes())
    CHECK(onednn::OnednnPartitioner::is_supported(residual.graph, n).supported);
  CHECK(planned_backends(residual) == std::vector<std::string>(residual.graph.nodes().size(), "xnnpack"));

  GraphBuilder v;
  const auto clip = v.input("clip", DType::Float32, {1, 8, 4, 16, 16});
  v.output(v.op(EdgeOp::Relu, {conv(v, clip, {16, 8, 3, 3, 3})}));
  const ir::ExportedProgram video = v.build();
  CHECK(planned_backends(video).front() == "onednn");
}

}  // namespace
}  // namespace etc
