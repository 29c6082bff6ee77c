// Every node kind the XNNPACK partitioner accepts, run through the XNNPACK
// runtime and compared with the portable kernels.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>

#include "compiler/backend/to_backend.h"
#include "partitioners/register.h"
#include "partitioners/xnnpack/xnnpack_partitioner.h"
#include "preprocessors/register.h"
#include "runtime/backends/register_builtin.h"
#include "tests/support/differential.h"
#include "tests/support/graph_builder.h"
#include "tests/support/random.h"
#include "tests/support/run_program.h"
#include "tests/support/xnnpack_differential.h"

namespace etc {
namespace {

using testing::GraphBuilder;

std::vector<float> randoms(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  return testing::random_floats(n, rng, lo, hi);
}

// Every node must go to XNNPACK, and the outputs must match the portable run
// (max |diff| / max |ref| <= 1e-5). Inputs are uniform in [lo, hi].
void check_delegated(const ir::ExportedProgram& program, float lo = -2.0f, float hi = 2.0f) {
  testing::check_xnnpack_matches_portable(program, {lo, hi});
}

ir::ExportedProgram unary(EdgeOp op, ir::Attrs attrs = {}, Shape shape = {1, 3, 4, 5}) {
  GraphBuilder b;
  b.output(b.op(op, {b.input("x", DType::Float32, shape)}, std::move(attrs)));
  return b.build();
}

TEST_CASE("xnnpack unary ops match the portable kernels", "[xnnpack][integration]") {
  check_delegated(unary(EdgeOp::Relu));
  check_delegated(unary(EdgeOp::Clip, ir::Attrs{{"min", -0.5f}, {"max", 0.75f}}));
  check_delegated(unary(EdgeOp::Sigmoid));
  check_delegated(unary(EdgeOp::HardSwish));
  check_delegated(unary(EdgeOp::HardSigmoid, ir::Attrs{{"alpha", 0.3f}, {"beta", 0.4f}}), -4.0f, 4.0f);
  check_delegated(unary(EdgeOp::LeakyRelu, ir::Attrs{{"alpha", 0.2f}}));
  check_delegated(unary(EdgeOp::Elu, ir::Attrs{{"alpha", 0.7f}}));
  check_delegated(unary(EdgeOp::Abs, {}, {6, 7}));
  check_delegated(unary(EdgeOp::Neg, {}, {6, 7}));
  check_delegated(unary(EdgeOp::Floor, {}, {3, 4, 5}));
  check_delegated(unary(EdgeOp::Ceil, {}, {3, 4, 5}));
  check_delegated(unary(EdgeOp::Sqrt, {}, {30}), 0.0f, 4.0f);
  check_delegated(unary(EdgeOp::Softmax, ir::Attrs{{"axis", int64_t{1}}, {"flatten", int64_t{0}}}, {4, 9}));
}

TEST_CASE("xnnpack round is half-to-even like ONNX Round", "[xnnpack][integration]") {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {8});
  const auto half = b.constant_f32("h", {1}, {0.5f});
  b.output(b.op(EdgeOp::Round, {b.op(EdgeOp::Add, {b.op(EdgeOp::Floor, {x}), half})}));
  check_delegated(b.build(), -10.0f, 10.0f);
}

TEST_CASE("xnnpack binary ops broadcast like numpy", "[xnnpack][integration]") {
  for (EdgeOp op : {EdgeOp::Add, EdgeOp::Sub, EdgeOp::Mul, EdgeOp::Div, EdgeOp::Min, EdgeOp::Max}) {
    GraphBuilder b;
    const auto x = b.input("x", DType::Float32, {2, 3, 4, 5});
    const auto y = b.input("y", DType::Float32, {2, 3, 1, 5});
    const auto c = b.constant_f32("c", {4, 1}, {1.5f, -2.0f, 0.25f, 3.0f});
    const auto s = b.constant_f32("s", {}, {1.25f});
    b.output(b.op(op, {b.op(op, {b.op(op, {x, y}), c}), s}));
    check_delegated(b.build(), 0.5f, 2.0f);
  }
  GraphBuilder sq;
  const auto x = sq.input("x", DType::Float32, {3, 5});
  const auto two = sq.constant_f32("two", {}, {2.0f});
  const auto y = sq.input("y", DType::Float32, {5});
  sq.output(sq.op(EdgeOp::Add, {sq.op(EdgeOp::Pow, {x, two}), y}));
  check_delegated(sq.build());
}

TEST_CASE("xnnpack prelu with a per-channel slope", "[xnnpack][integration]") {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {1, 3, 4, 4});
  const auto slope = b.constant_f32("slope", {3, 1, 1}, {0.1f, 0.5f, 2.0f});
  b.output(b.op(EdgeOp::PRelu, {x, slope}));
  check_delegated(b.build());
}

TEST_CASE("xnnpack pooling with padding, dilation and strides", "[xnnpack][integration]") {
  auto pool = [](EdgeOp op, std::vector<int64_t> k, std::vector<int64_t> s, std::vector<int64_t> p,
                 std::vector<int64_t> d) {
    GraphBuilder b;
    const auto x = b.input("x", DType::Float32, {1, 3, 9, 8});
    b.output(b.op(op, {x},
                  ir::Attrs{{"kernel_shape", k},
                            {"strides", s},
                            {"pads", p},
                            {"dilations", d},
                            {"ceil_mode", int64_t{0}},
                            {"count_include_pad", int64_t{0}}}));
    return b.build();
  };
  check_delegated(pool(EdgeOp::MaxPool, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}));
  check_delegated(pool(EdgeOp::MaxPool, {2, 3}, {1, 2}, {0, 1, 1, 0}, {2, 1}));
  check_delegated(pool(EdgeOp::AvgPool, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}));
  check_delegated(pool(EdgeOp::AvgPool, {2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}));
  check_delegated(pool(EdgeOp::AvgPool, {9, 8}, {1, 1}, {0, 0, 0, 0}, {1, 1}));
}

TEST_CASE("xnnpack pooling in ceil mode gets extra end padding", "[xnnpack][integration]") {
  for (EdgeOp op : {EdgeOp::MaxPool, EdgeOp::AvgPool}) {
    for (const std::vector<int64_t>& pads :
         {std::vector<int64_t>{0, 0, 0, 0}, std::vector<int64_t>{1, 0, 1, 1}}) {
      GraphBuilder b;
      const auto x = b.input("x", DType::Float32, {1, 3, 10, 9});
      b.output(b.op(op, {x},
                    ir::Attrs{{"kernel_shape", std::vector<int64_t>{3, 3}},
                              {"strides", std::vector<int64_t>{2, 2}},
                              {"pads", pads},
                              {"dilations", std::vector<int64_t>{1, 1}},
                              {"ceil_mode", int64_t{1}},
                              {"count_include_pad", int64_t{0}}}));
      check_delegated(b.build());
    }
  }
}

TEST_CASE("xnnpack grouped and dilated convolutions with fused clamps", "[xnnpack][integration]") {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {1, 4, 9, 8});
  const auto w = b.constant_f32("w", {6, 2, 3, 2}, randoms(72, 51));
  const auto bias = b.constant_f32("b", {6}, randoms(6, 52));
  ir::Attrs attrs{{"strides", std::vector<int64_t>{2, 1}},
                  {"pads", std::vector<int64_t>{1, 0, 2, 1}},
                  {"dilations", std::vector<int64_t>{1, 2}},
                  {"group", int64_t{2}}};
  attrs.set("clamp_min", -0.25f);
  attrs.set("clamp_max", 0.5f);
  const auto c = b.op(EdgeOp::Conv, {x, w, bias}, attrs);
  b.output(b.op(EdgeOp::Clip, {c}, ir::Attrs{{"min", 0.0f}, {"max", 6.0f}}));
  check_delegated(b.build());
}

TEST_CASE("xnnpack reduce_mean over height and width is global average pooling", "[xnnpack][integration]") {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {2, 3, 5, 4});
  b.output(b.op(EdgeOp::ReduceMean, {x},
                ir::Attrs{{"axes", std::vector<int64_t>{2, 3}}, {"keepdims", int64_t{1}}}));
  check_delegated(b.build());
}

TEST_CASE("xnnpack fully connected from gemm and 3-D matmul", "[xnnpack][integration]") {
  GraphBuilder b;
  const auto a = b.input("a", DType::Float32, {4, 6});
  const auto w = b.constant_f32("w", {5, 6}, randoms(30, 41));
  const auto c = b.constant_f32("c", {1, 5}, randoms(5, 42));
  const auto g =
      b.op(EdgeOp::Gemm, {a, w, c},
           ir::Attrs{{"trans_a", int64_t{0}}, {"trans_b", int64_t{1}}, {"alpha", 0.5f}, {"beta", 2.0f}});
  const auto x = b.input("x", DType::Float32, {2, 3, 5});
  const auto w2 = b.constant_f32("w2", {5, 7}, randoms(35, 43));
  b.output(g);
  b.output(b.op(EdgeOp::MatMul, {x, w2}));
  check_delegated(b.build());
}

TEST_CASE("xnnpack constant pad in NHWC", "[xnnpack][integration]") {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {1, 2, 3, 4});
  // A partition of data movement alone is not made, so the pad feeds a relu.
  b.output(b.op(EdgeOp::Relu, {b.op(EdgeOp::Pad, {x},
                                    ir::Attrs{{"pads", std::vector<int64_t>{0, 1, 2, 0, 0, 0, 1, 3}},
                                              {"mode", std::string("constant")},
                                              {"value", 0.5f}})}));
  check_delegated(b.build());
}

TEST_CASE("xnnpack concat, slice and split in NHWC match the portable kernels", "[xnnpack][integration]") {
  for (int64_t axis : {0, 1, 2, 3}) {
    INFO("axis " << axis);
    GraphBuilder b;
    Shape sy = {2, 3, 4, 5};
    sy[static_cast<int>(axis)] = 2;
    const auto x = b.input("x", DType::Float32, {2, 3, 4, 5});
    const auto y = b.input("y", DType::Float32, sy);
    const auto c = b.op(EdgeOp::Concat, {b.op(EdgeOp::Relu, {x}), b.op(EdgeOp::Sigmoid, {y}), x},
                        ir::Attrs{{"axis", axis}});
    b.output(b.op(EdgeOp::Relu, {c}));
    check_delegated(b.build());
  }
  {
    GraphBuilder b;
    const auto x = b.input("x", DType::Float32, {1, 6, 5, 7});
    const auto r = b.op(EdgeOp::Relu, {x});
    const ir::Attrs window{{"starts", std::vector<int64_t>{0, 2, 1, 3}},
                           {"ends", std::vector<int64_t>{1, 5, 5, 6}},
                           {"steps", std::vector<int64_t>{1, 1, 1, 1}}};
    b.output(b.op(EdgeOp::Sigmoid, {b.op(EdgeOp::Slice, {r}, window)}));
    check_delegated(b.build());
  }
  {
    GraphBuilder b;
    const auto x = b.input("x", DType::Float32, {1, 6, 3, 4});
    const auto parts = b.op_n(EdgeOp::Split, {b.op(EdgeOp::Relu, {x})}, 3,
                              ir::Attrs{{"axis", int64_t{1}}, {"sizes", std::vector<int64_t>{1, 3, 2}}});
    b.output(b.op(EdgeOp::Add, {parts[0], parts[2]}));  // broadcast [1,1,3,4] + [1,2,3,4]
    b.output(parts[1]);
    check_delegated(b.build());
  }
}

TEST_CASE("xnnpack channel shuffle (reshape, transpose, reshape) matches the portable kernels",
          "[xnnpack][integration]") {
  for (int64_t groups : {2, 3}) {
    GraphBuilder b;
    const auto x = b.input("x", DType::Float32, {1, 12, 3, 2});
    const auto r = b.op(EdgeOp::Relu, {x});
    const auto split =
        b.op(EdgeOp::Reshape, {r}, ir::Attrs{{"shape", std::vector<int64_t>{1, groups, 12 / groups, 3, 2}}});
    const auto t = b.op(EdgeOp::Transpose, {split}, ir::Attrs{{"perm", std::vector<int64_t>{0, 2, 1, 3, 4}}});
    const auto y = b.op(EdgeOp::Reshape, {t}, ir::Attrs{{"shape", std::vector<int64_t>{1, 12, 3, 2}}});
    b.output(b.op(EdgeOp::Sigmoid, {y}));
    const ir::ExportedProgram program = b.build();
    check_delegated(program);
    // The three nodes become one XNNPACK node whose map entry covers them all.
    const ir::ExportedProgram lowered = to_backend(program, xnnpack::XnnpackPartitioner());
    REQUIRE(lowered.delegates.size() == 1);
    bool covered = false;
    for (const auto& [id, handles] : std::get<IntDelegateDebugMap>(lowered.delegates[0].debug_handle_map))
      covered = covered || (handles.size() == 3 && handles[0] == 2 && handles[2] == 4);
    CHECK(covered);
  }
}

TEST_CASE("xnnpack reduce_mean over H and W without keepdims", "[xnnpack][integration]") {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {2, 5, 3, 4});
  b.output(b.op(EdgeOp::ReduceMean, {b.op(EdgeOp::Relu, {x})},
                ir::Attrs{{"axes", std::vector<int64_t>{2, 3}}, {"keepdims", int64_t{0}}}));
  check_delegated(b.build());
}

TEST_CASE("xnnpack depth_to_space in DCR mode", "[xnnpack][integration]") {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {1, 8, 2, 3});
  b.output(
      b.op(EdgeOp::DepthToSpace, {x}, ir::Attrs{{"blocksize", int64_t{2}}, {"mode", std::string("DCR")}}));
  check_delegated(b.build());
}

TEST_CASE("xnnpack bilinear resize in each coordinate mode", "[xnnpack][integration]") {
  for (const char* mode : {"half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel"}) {
    for (const std::vector<int64_t>& sizes :
         {std::vector<int64_t>{1, 2, 8, 10}, std::vector<int64_t>{1, 2, 3, 2},
          std::vector<int64_t>{1, 2, 5, 7}}) {
      INFO(mode << " to " << sizes[2] << "x" << sizes[3]);
      GraphBuilder b;
      const auto x = b.input("x", DType::Float32, {1, 2, 4, 5});
      b.output(b.op(EdgeOp::Resize, {x},
                    ir::Attrs{{"sizes", sizes},
                              {"mode", std::string("linear")},
                              {"coordinate_transformation_mode", std::string(mode)}}));
      check_delegated(b.build());
    }
  }
}

}  // namespace
}  // namespace etc
