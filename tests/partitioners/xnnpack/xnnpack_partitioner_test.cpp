// XnnpackPartitioner: what it tags, and the reason for every refusal.
#include "partitioners/xnnpack/xnnpack_partitioner.h"

#include <catch2/catch.hpp>
#include <string>

#include "partitioners/xnnpack/xnnpack_rules.h"
#include "tests/support/graph_builder.h"

namespace etc {
namespace {

using testing::GraphBuilder;
using xnnpack::XnnpackPartitioner;

ir::Attrs conv_attrs(int64_t group = 1, std::vector<int64_t> pads = {1, 1, 1, 1}) {
  return ir::Attrs{{"strides", std::vector<int64_t>{1, 1}},
                   {"pads", pads},
                   {"dilations", std::vector<int64_t>{1, 1}},
                   {"group", group}};
}

ir::Attrs pool_attrs(std::vector<int64_t> k, std::vector<int64_t> s, std::vector<int64_t> p,
                     int64_t ceil = 0) {
  return ir::Attrs{{"kernel_shape", k}, {"strides", s},
                   {"pads", p},         {"dilations", std::vector<int64_t>{1, 1}},
                   {"ceil_mode", ceil}, {"count_include_pad", int64_t{0}}};
}

// The verdict on the last node of the program.
Support verdict(const ir::ExportedProgram& p) {
  const ir::Node& n = p.graph.nodes().back();
  return XnnpackPartitioner::is_supported(p.graph, n);
}

std::vector<float> zeros(size_t n) { return std::vector<float>(n, 0.0f); }

TEST_CASE("xnnpack partitioner tags a conv, relu, pool chain as one partition", "[xnnpack]") {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {1, 3, 8, 8});
  const auto w = b.constant_f32("w", {4, 3, 3, 3}, zeros(108));
  const auto c = b.op(EdgeOp::Conv, {x, w}, conv_attrs());
  const auto r = b.op(EdgeOp::Relu, {c});
  b.output(b.op(EdgeOp::MaxPool, {r}, pool_attrs({2, 2}, {2, 2}, {0, 0, 0, 0})));
  const PartitionResult result = XnnpackPartitioner().partition(b.build());
  REQUIRE(result.partition_tags.size() == 1);
  CHECK(result.partition_tags.begin()->first == "xnnpack_0");
  CHECK(result.partition_tags.begin()->second.backend_id == "xnnpack");
  for (const ir::Node& n : result.tagged_exported_program.graph.nodes())
    CHECK(n.meta.delegation_tag == "xnnpack_0");
  CHECK(result.rejection_reasons.empty());
}

TEST_CASE("xnnpack partitioner refuses convolutions XNNPACK cannot run", "[xnnpack]") {
  SECTION("1-D convolution") {
    GraphBuilder b;
    const auto x = b.input("x", DType::Float32, {1, 2, 8});
    const auto w = b.constant_f32("w", {2, 2, 3}, zeros(12));
    b.op(EdgeOp::Conv, {x, w},
         ir::Attrs{{"strides", std::vector<int64_t>{1}},
                   {"pads", std::vector<int64_t>{0, 0}},
                   {"dilations", std::vector<int64_t>{1}},
                   {"group", int64_t{1}}});
    CHECK(verdict(b.build()).reason == "xnnpack: conv with 3-D input (only 2-D convolution)");
  }
  SECTION("weights computed at run time") {
    GraphBuilder b;
    const auto x = b.input("x", DType::Float32, {1, 2, 4, 4});
    const auto w = b.input("w", DType::Float32, {2, 2, 3, 3});
    b.op(EdgeOp::Conv, {x, w}, conv_attrs());
    CHECK(verdict(b.build()).reason == "xnnpack: conv with non-constant weights");
  }
  SECTION("not float32") {
    GraphBuilder b;
    const auto x = b.input("x", DType::Int32, {4});
    b.op(EdgeOp::Abs, {x});
    CHECK(verdict(b.build()).reason == "xnnpack: computes float32 only, the output is int32");
  }
  SECTION("rank 7") {
    GraphBuilder b;
    const auto x = b.input("x", DType::Float32, {1, 1, 1, 1, 1, 1, 2});
    b.op(EdgeOp::Sigmoid, {x});
    CHECK(verdict(b.build()).reason ==
          "xnnpack: the output has rank 7 (XNNPACK partitions take tensors of rank 1 to 6)");
  }
}

TEST_CASE("xnnpack partitioner takes every matmul, refuses gemm forms fully connected cannot express",
          "[xnnpack]") {
  GraphBuilder b;
  const auto a = b.input("a", DType::Float32, {2, 3});
  const auto bb = b.input("b", DType::Float32, {3, 4});
  b.op(EdgeOp::MatMul, {a, bb});
  CHECK(verdict(b.build()).supported);  // the native batched product

  GraphBuilder g;
  const auto a2 = g.input("a", DType::Float32, {3, 2});
  const auto w = g.constant_f32("w", {3, 4}, zeros(12));
  g.op(EdgeOp::Gemm, {a2, w},
       ir::Attrs{{"trans_a", int64_t{1}}, {"trans_b", int64_t{0}}, {"alpha", 1.0f}, {"beta", 1.0f}});
  CHECK(verdict(g.build()).reason ==
        "xnnpack: gemm with trans_a=1 (fully connected takes A as [batch, input_channels])");

  GraphBuilder m4;
  const auto x4 = m4.input("x", DType::Float32, {1, 2, 3, 4});
  const auto w4 = m4.constant_f32("w", {4, 5}, zeros(20));
  m4.op(EdgeOp::MatMul, {x4, w4});
  CHECK(verdict(m4.build()).supported);  // fully connected, its input in ONNX order
}

TEST_CASE("xnnpack partitioner refuses pooling that XNNPACK computes differently", "[xnnpack]") {
  SECTION("count_include_pad with padding") {
    GraphBuilder b;
    const auto x = b.input("x", DType::Float32, {1, 2, 6, 6});
    ir::Attrs attrs = pool_attrs({3, 3}, {1, 1}, {1, 1, 1, 1});
    attrs.set("count_include_pad", int64_t{1});
    b.op(EdgeOp::AvgPool, {x}, attrs);
    CHECK(
        verdict(b.build()).reason ==
        "xnnpack: avg_pool with count_include_pad=1 and padding (XNNPACK divides by the valid pixels only)");
  }
  SECTION("ceil_mode adding a row to a padding-counting average") {
    GraphBuilder b;
    const auto x = b.input("x", DType::Float32, {1, 2, 5, 5});
    ir::Attrs attrs = pool_attrs({2, 2}, {2, 2}, {0, 0, 0, 0}, 1);
    attrs.set("count_include_pad", int64_t{1});
    b.op(EdgeOp::AvgPool, {x}, attrs);
    CHECK(verdict(b.build()).reason ==
          "xnnpack: avg_pool with count_include_pad=1 and ceil_mode=1 adding an output row or column");
  }
  SECTION("ceil_mode adding a row to max pooling: extra end padding") {
    GraphBuilder b;
    const auto x = b.input("x", DType::Float32, {1, 2, 5, 5});
    b.op(EdgeOp::MaxPool, {x}, pool_attrs({2, 2}, {2, 2}, {0, 0, 0, 0}, 1));
    const ir::ExportedProgram p = b.build();
    CHECK(verdict(p).supported);
    CHECK(ir::pool_ceil_padding(p.graph, p.graph.nodes().back()) == std::vector<int64_t>{1, 1});
  }
  SECTION("ceil_mode that changes nothing is accepted") {
    GraphBuilder b;
    const auto x = b.input("x", DType::Float32, {1, 2, 6, 6});
    b.op(EdgeOp::MaxPool, {x}, pool_attrs({2, 2}, {2, 2}, {0, 0, 0, 0}, 1));
    CHECK(verdict(b.build()).supported);
  }
  SECTION("global average pooling") {
    GraphBuilder b;
    const auto x = b.input("x", DType::Float32, {1, 2, 5, 7});
    b.op(EdgeOp::AvgPool, {x}, pool_attrs({5, 7}, {1, 1}, {0, 0, 0, 0}));
    CHECK(verdict(b.build()).supported);
  }
}

// Layouts are preprocess's concern (layout_plan.cpp): these take any layout.
TEST_CASE("xnnpack partitioner takes layout-sensitive nodes", "[xnnpack]") {
  SECTION("softmax over a spatial axis") {
    GraphBuilder b;
    const auto x = b.input("x", DType::Float32, {1, 3, 4, 5});
    b.op(EdgeOp::Softmax, {x}, ir::Attrs{{"axis", int64_t{2}}, {"flatten", int64_t{0}}});
    CHECK(verdict(b.build()).supported);
  }
  SECTION("softmax over channels") {
    GraphBuilder b;
    const auto x = b.input("x", DType::Float32, {1, 3, 4, 5});
    b.op(EdgeOp::Softmax, {x}, ir::Attrs{{"axis", int64_t{1}}, {"flatten", int64_t{0}}});
    CHECK(verdict(b.build()).supported);
  }
  SECTION("reshape of a tensor with spatial extent") {
    GraphBuilder b;
    const auto x = b.input("x", DType::Float32, {1, 3, 2, 2});
    b.op(EdgeOp::Reshape, {x}, ir::Attrs{{"shape", std::vector<int64_t>{1, 12}}});
    CHECK(verdict(b.build()).supported);
  }
  SECTION("flatten after global pooling") {
    GraphBuilder b;
    const auto x = b.input("x", DType::Float32, {1, 3, 1, 1});
    b.op(EdgeOp::Reshape, {x}, ir::Attrs{{"shape", std::vector<int64_t>{1, 3}}});
    CHECK(verdict(b.build()).supported);
  }
  SECTION("non-constant lower-rank operand") {
    GraphBuilder b;
    const auto x = b.input("x", DType::Float32, {1, 3, 2, 2});
    const auto y = b.input("y", DType::Float32, {2, 2});
    b.op(EdgeOp::Add, {x, y});
    CHECK(verdict(b.build()).supported);
  }
  SECTION("constant lower-rank operand") {
    GraphBuilder b;
    const auto x = b.input("x", DType::Float32, {1, 3, 2, 2});
    const auto c = b.constant_f32("c", {3, 1, 1}, {1, 2, 3});
    b.op(EdgeOp::Mul, {x, c});
    CHECK(verdict(b.build()).supported);
  }
  SECTION("depth_to_space in CRD mode") {
    GraphBuilder b;
    const auto x = b.input("x", DType::Float32, {1, 8, 2, 2});
    b.op(EdgeOp::DepthToSpace, {x}, ir::Attrs{{"blocksize", int64_t{2}}, {"mode", std::string("CRD")}});
    CHECK(verdict(b.build()).reason == "xnnpack: depth_to_space in CRD mode (XNNPACK orders channels DCR)");
  }
}

TEST_CASE("xnnpack partitioner takes reductions over given axes", "[xnnpack]") {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {1, 3, 4, 4});
  b.op(EdgeOp::ReduceMean, {x}, ir::Attrs{{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{1}}});
  CHECK(verdict(b.build()).supported);
  GraphBuilder none;
  const auto y = none.input("y", DType::Float32, {1, 3, 4, 4});
  none.op(EdgeOp::ReduceSum, {y}, ir::Attrs{{"axes", std::vector<int64_t>{}}, {"keepdims", int64_t{1}}});
  CHECK(verdict(none.build()).reason ==
        "xnnpack: reduction over no axes (a copy, or every axis by noop_with_empty_axes)");
}

TEST_CASE("xnnpack partitioner refuses ops XNNPACK does not have", "[xnnpack]") {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {4});
  b.op(EdgeOp::Sin, {x});
  CHECK(verdict(b.build()).reason == "xnnpack: no XNNPACK node for 'sin'");

  GraphBuilder p;
  const auto y = p.input("y", DType::Float32, {4});
  const auto e = p.constant_f32("e", {1}, {3.0f});
  p.op(EdgeOp::Pow, {y, e});
  CHECK(verdict(p.build()).reason ==
        "xnnpack: pow with an exponent other than a constant 2 (XNNPACK has square only)");
}

}  // namespace
}  // namespace etc
