// The XNNPACK partitions' native compute nodes (batched matrix products with
// folded transposes, transpose, softmax on any axis, layer norm, reductions,
// elementwise functions, nearest resize, unfoldable batch norm) and the
// layout plan that mixes NHWC and NCHW groups: every graph here is delegated
// whole and must match the portable kernels at 1 and 2 threads and with
// every node as its own stage.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "compiler/backend/to_backend.h"
#include "partitioners/register.h"
#include "partitioners/xnnpack/xnnpack_partitioner.h"
#include "preprocessors/register.h"
#include "runtime/backends/register_builtin.h"
#include "tests/support/differential.h"
#include "tests/support/graph_builder.h"
#include "tests/support/random.h"
#include "tests/support/xnnpack_differential.h"

namespace etc {
namespace {

using testing::GraphBuilder;

std::vector<float> randoms(size_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  return testing::random_floats(n, rng, lo, hi);
}

// Every node delegated, one partition, outputs within `tolerance` of the
// portable run (max |diff| / max |ref|) at 1 and 2 threads, fused and with
// every node's output on its own.
void check_whole(const ir::ExportedProgram& program, float lo = -2.0f, float hi = 2.0f,
                 float tolerance = 2e-6f, std::vector<CompileSpec> specs = {}) {
  testing::XnnpackCheck c{lo, hi, tolerance, std::move(specs), true, {}};
  for (int threads : {1, 2})
    for (DelegateDetail detail : {DelegateDetail::kFused, DelegateDetail::kNodeOutputs}) {
      RuntimeOptions options;
      options.num_threads = threads;
      options.delegate_detail = detail;
      c.runs.push_back(options);
    }
  testing::check_xnnpack_matches_portable(program, c);
}

ir::ValueId conv1x1(GraphBuilder& b, ir::ValueId x, int64_t in_c, int64_t out_c, uint32_t seed) {
  const auto w = b.constant_f32("w" + std::to_string(seed), {out_c, in_c, 1, 1},
                                randoms(static_cast<size_t>(out_c * in_c), seed, -0.5f, 0.5f));
  return b.op(EdgeOp::Conv, {x, w},
              ir::Attrs{{"strides", std::vector<int64_t>{1, 1}},
                        {"pads", std::vector<int64_t>{0, 0, 0, 0}},
                        {"dilations", std::vector<int64_t>{1, 1}},
                        {"group", int64_t{1}}});
}

ir::ValueId transpose(GraphBuilder& b, ir::ValueId x, std::vector<int64_t> perm) {
  return b.op(EdgeOp::Transpose, {x}, ir::Attrs{{"perm", std::move(perm)}});
}

ir::ValueId reshape(GraphBuilder& b, ir::ValueId x, std::vector<int64_t> shape) {
  return b.op(EdgeOp::Reshape, {x}, ir::Attrs{{"shape", std::move(shape)}});
}

TEST_CASE("xnnpack attention: products of activations with the transposes folded", "[xnnpack][integration]") {
  // torch's multi-head attention: split heads, Q·Kᵀ, scale, softmax, ·V, merge heads.
  GraphBuilder b;
  const int64_t s = 12, h = 3, d = 8;
  const auto q = b.input("q", DType::Float32, {1, s, h * d});
  const auto k = b.input("k", DType::Float32, {1, s, h * d});
  const auto v = b.input("v", DType::Float32, {1, s, h * d});
  const auto qh = transpose(b, reshape(b, q, {1, s, h, d}), {0, 2, 1, 3});
  const auto kt = transpose(b, reshape(b, k, {1, s, h, d}), {0, 2, 3, 1});
  const auto vh = transpose(b, reshape(b, v, {1, s, h, d}), {0, 2, 1, 3});
  const auto scale = b.constant_f32("scale", {}, {0.35f});
  const auto scores = b.op(EdgeOp::Mul, {b.op(EdgeOp::MatMul, {qh, kt}), scale});
  const auto probs =
      b.op(EdgeOp::Softmax, {scores}, ir::Attrs{{"axis", int64_t{3}}, {"flatten", int64_t{0}}});
  const auto ctx = transpose(b, b.op(EdgeOp::MatMul, {probs, vh}), {0, 2, 1, 3});
  b.output(reshape(b, ctx, {1, s, h * d}));
  check_whole(b.build());
}

TEST_CASE("xnnpack batched matmul broadcasts batches and promotes 1-D operands", "[xnnpack][integration]") {
  auto matmul = [](Shape a, Shape bs) {
    GraphBuilder b;
    const auto x = b.input("a", DType::Float32, a);
    const auto y = b.input("b", DType::Float32, bs);
    b.output(b.op(EdgeOp::Relu, {b.op(EdgeOp::MatMul, {x, y})}));
    return b.build();
  };
  check_whole(matmul({2, 3, 5, 7}, {7, 4}));
  check_whole(matmul({3, 1, 5, 7}, {2, 7, 6}));
  check_whole(matmul({7}, {2, 7, 6}));
  check_whole(matmul({2, 5, 7}, {7}));
  check_whole(matmul({70, 33}, {33, 65}));
  // A constant left operand and a constant batched right operand.
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {2, 4, 5});
  const auto w = b.constant_f32("w", {2, 5, 3}, randoms(30, 9, -1, 1));
  const auto c = b.constant_f32("c", {6, 4}, randoms(24, 10, -1, 1));
  b.output(b.op(EdgeOp::MatMul, {c, b.op(EdgeOp::MatMul, {x, w})}));
  check_whole(b.build());
}

TEST_CASE("xnnpack matmul bias adds fold into fully connected", "[xnnpack][integration]") {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {2, 6, 16});
  const auto w = b.constant_f32("w", {16, 24}, randoms(16 * 24, 4, -0.5f, 0.5f));
  const auto bias = b.constant_f32("bias", {24}, randoms(24, 5, -1, 1));
  const auto w2 = b.constant_f32("w2", {24, 8}, randoms(24 * 8, 6, -0.5f, 0.5f));
  const auto bias2 = b.constant_f32("bias2", {1, 1, 8}, randoms(8, 7, -1, 1));
  const auto hidden = b.op(EdgeOp::Relu, {b.op(EdgeOp::Add, {bias, b.op(EdgeOp::MatMul, {x, w})})});
  b.output(b.op(EdgeOp::Add, {b.op(EdgeOp::MatMul, {hidden, w2}), bias2}));
  check_whole(b.build());
}

TEST_CASE("xnnpack fully connected on many rows, with bias, activation and residual add",
          "[xnnpack][integration]") {
  // 80 rows: enough for the backend's own kernel on AVX-512 CPUs (a 1x1
  // convolution over the rows), which then takes the residual add too.
  for (int64_t out : {32, 48, 7}) {
    GraphBuilder b;
    const auto x = b.input("x", DType::Float32, {2, 40, 32});
    const auto w = b.constant_f32("w", {32, 64}, randoms(32 * 64, 12, -0.3f, 0.3f));
    const auto bias = b.constant_f32("b", {64}, randoms(64, 13, -1, 1));
    const auto w2 = b.constant_f32("w2", {64, out}, randoms(static_cast<size_t>(64 * out), 14, -0.3f, 0.3f));
    const auto hidden = b.op(EdgeOp::Relu, {b.op(EdgeOp::Add, {b.op(EdgeOp::MatMul, {x, w}), bias})});
    const auto y = b.op(EdgeOp::MatMul, {hidden, w2});
    b.output(out == 32 ? b.op(EdgeOp::Add, {x, y}) : y);
    check_whole(b.build());
  }
}

TEST_CASE("xnnpack depthwise convolutions with activations and residual adds in their epilogue",
          "[xnnpack][integration]") {
  // With native_convolution=on (AVX-512 CPUs) the backend's own depthwise
  // kernel takes those with a hardswish, swish or residual add after them;
  // XNNPACK the rest, and all of them with auto and off.
  struct Case {
    int64_t channels, kernel, stride, dilation, pad;
  };
  for (const Case& k : {Case{8, 3, 1, 1, 1}, Case{24, 3, 2, 1, 1}, Case{100, 5, 1, 1, 2},
                        Case{96, 3, 1, 2, 2}, Case{40, 5, 2, 1, 2}, Case{17, 3, 1, 1, 0}})
    for (int act = 0; act < 5; ++act)
      for (const char* native : {"on", "auto", "off"}) {
        INFO("channels " << k.channels << " kernel " << k.kernel << " stride " << k.stride << " activation "
                         << act << " native_convolution " << native);
        GraphBuilder b;
        const auto x = b.input("x", DType::Float32, {2, k.channels, 11, 9});
        const auto w =
            b.constant_f32("w", {k.channels, 1, k.kernel, k.kernel},
                           randoms(static_cast<size_t>(k.channels * k.kernel * k.kernel), 30, -1, 1));
        const auto bias =
            b.constant_f32("b", {k.channels}, randoms(static_cast<size_t>(k.channels), 31, -1, 1));
        ir::ValueId y = b.op(EdgeOp::Conv, {x, w, bias},
                             ir::Attrs{{"strides", std::vector<int64_t>{k.stride, k.stride}},
                                       {"pads", std::vector<int64_t>(4, k.pad)},
                                       {"dilations", std::vector<int64_t>{k.dilation, k.dilation}},
                                       {"group", k.channels}});
        if (act == 1) y = b.op(EdgeOp::HardSwish, {y});
        if (act == 2) y = b.op(EdgeOp::Mul, {y, b.op(EdgeOp::Sigmoid, {y})});
        if (act == 3) y = b.op(EdgeOp::Clip, {y}, ir::Attrs{{"min", 0.0f}, {"max", 6.0f}});
        if (act == 4 && k.stride == 1 && 2 * k.pad == (k.kernel - 1) * k.dilation)
          y = b.op(EdgeOp::Add, {y, x});
        b.output(y);
        check_whole(b.build(), -2.0f, 2.0f, 2e-6f, {CompileSpec::from_string("native_convolution", native)});
      }
}

TEST_CASE("xnnpack convolutions and fully connected with a hardswish epilogue", "[xnnpack][integration]") {
  GraphBuilder b;
  const auto y = conv1x1(b, b.input("x", DType::Float32, {1, 16, 12, 12}), 16, 48, 40);
  const auto h = b.op(EdgeOp::HardSwish, {y});
  const auto w = b.constant_f32("fc", {12, 64}, randoms(12 * 64, 41, -0.3f, 0.3f));
  b.output(b.op(EdgeOp::HardSwish, {b.op(EdgeOp::MatMul, {h, w})}));
  check_whole(b.build(), -3.0f, 3.0f);
}

TEST_CASE("xnnpack per-channel scales: squeeze-and-excitation gates and constant scales",
          "[xnnpack][integration]") {
  for (int64_t batch : {1, 2}) {
    GraphBuilder b;
    const auto x = b.input("x", DType::Float32, {batch, 6, 5, 7});
    const auto y = conv1x1(b, x, 6, 24, 50);  // NHWC
    const auto pooled = b.op(EdgeOp::ReduceMean, {y},
                             ir::Attrs{{"axes", std::vector<int64_t>{2, 3}}, {"keepdims", int64_t{1}}});
    const auto gate = b.op(EdgeOp::Sigmoid, {conv1x1(b, pooled, 24, 24, 51)});  // [N, C, 1, 1]
    const auto gated = b.op(EdgeOp::Mul, {gate, y});
    const auto c = b.constant_f32("c", {24, 1, 1}, randoms(24, 52, -2, 2));
    b.output(b.op(EdgeOp::Clip, {b.op(EdgeOp::Mul, {gated, c})}, ir::Attrs{{"min", 0.0f}, {"max", 6.0f}}));
    // And in NCHW (no spatial node): a [C, 1, 1] scale of a 4-D input.
    GraphBuilder plain;
    const auto px = plain.input("x", DType::Float32, {batch, 24, 3, 5});
    const auto ps = plain.input("s", DType::Float32, {batch, 1, 1, 5});
    plain.output(plain.op(EdgeOp::Mul, {px, ps}));
    check_whole(b.build());
    check_whole(plain.build());
  }
}

TEST_CASE("xnnpack transpose of rank 2 to 6, in and out of NHWC groups", "[xnnpack][integration]") {
  const std::vector<std::pair<Shape, std::vector<int64_t>>> cases = {
      {{5, 7}, {1, 0}},
      {{2, 3, 4}, {2, 0, 1}},
      {{2, 3, 4, 5}, {0, 2, 3, 1}},
      {{2, 3, 1, 5}, {3, 1, 0, 2}},
      {{2, 3, 4, 5, 2}, {2, 0, 3, 1, 4}},
      {{2, 1, 3, 2, 2, 3}, {5, 4, 3, 2, 1, 0}},
  };
  for (const auto& [shape, perm] : cases) {
    GraphBuilder b;
    b.output(b.op(EdgeOp::Relu, {transpose(b, b.input("x", DType::Float32, shape), perm)}));
    check_whole(b.build());
  }
  // A convolution's NHWC output transposed and reshaped into a sequence
  // (the OCR recognisers' neck), then normalised over channels.
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {1, 4, 2, 6});
  const auto y = conv1x1(b, x, 4, 8, 1);
  const auto seq = transpose(b, reshape(b, y, {1, 8, 12}), {0, 2, 1});
  const auto scale = b.constant_f32("g", {8}, randoms(8, 2, 0.5f, 1.5f));
  const auto shift = b.constant_f32("bt", {8}, randoms(8, 3, -1, 1));
  b.output(b.op(EdgeOp::LayerNorm, {seq, scale, shift}, ir::Attrs{{"axis", int64_t{2}}, {"epsilon", 1e-5f}}));
  check_whole(b.build());
}

TEST_CASE("xnnpack softmax and log_softmax on any axis", "[xnnpack][integration]") {
  for (int64_t axis : {0, 1, 2, 3})
    for (EdgeOp op : {EdgeOp::Softmax, EdgeOp::LogSoftmax}) {
      // After a convolution the input is NHWC: axis 1 is the last blob axis.
      GraphBuilder b;
      const auto y = conv1x1(b, b.input("x", DType::Float32, {2, 3, 4, 5}), 3, 6, 7);
      b.output(b.op(op, {y}, ir::Attrs{{"axis", axis}, {"flatten", int64_t{0}}}));
      check_whole(b.build(), -3.0f, 3.0f);
      GraphBuilder plain;
      plain.output(plain.op(op, {plain.input("x", DType::Float32, {3, 4, 5, 6})},
                            ir::Attrs{{"axis", axis}, {"flatten", int64_t{0}}}));
      check_whole(plain.build(), -3.0f, 3.0f);
    }
  // ONNX softmax before opset 13: every axis from `axis` on together.
  for (int64_t axis : {1, 2}) {
    GraphBuilder b;
    const auto y = conv1x1(b, b.input("x", DType::Float32, {2, 3, 4, 5}), 3, 4, 8);
    b.output(b.op(EdgeOp::Softmax, {y}, ir::Attrs{{"axis", axis}, {"flatten", int64_t{1}}}));
    check_whole(b.build(), -3.0f, 3.0f);
  }
}

TEST_CASE("xnnpack layer_norm over trailing axes, with and without bias", "[xnnpack][integration]") {
  for (int64_t axis : {3, 2, 1}) {
    GraphBuilder b;
    const Shape x{2, 5, 6, 7};
    Shape norm;
    for (int d = static_cast<int>(axis); d < 4; ++d) norm.push_back(x[d]);
    const auto g = b.constant_f32("g", norm, randoms(static_cast<size_t>(norm.numel()), 1, 0.5f, 1.5f));
    const auto bias = b.constant_f32("b", norm, randoms(static_cast<size_t>(norm.numel()), 2, -1, 1));
    const auto in = b.input("x", DType::Float32, x);
    const auto y = b.op(EdgeOp::LayerNorm, {in, g, bias}, ir::Attrs{{"axis", axis}, {"epsilon", 1e-5f}});
    b.output(b.op(EdgeOp::LayerNorm, {y, g}, ir::Attrs{{"axis", axis}, {"epsilon", 1e-3f}}));
    check_whole(b.build(), 1.0f, 9.0f);  // a large mean: the variance must not cancel
  }
}

TEST_CASE("xnnpack reductions over any axes, keeping dims or not", "[xnnpack][integration]") {
  const std::vector<std::vector<int64_t>> axes_cases = {{1}, {3}, {1, 2}, {0, 3}, {1, 3}, {0, 1, 2, 3}};
  for (EdgeOp op :
       {EdgeOp::ReduceMean, EdgeOp::ReduceSum, EdgeOp::ReduceMax, EdgeOp::ReduceMin, EdgeOp::ReduceSumSquare})
    for (const auto& axes : axes_cases)
      for (int64_t keep : {0, 1}) {
        if (!keep && axes.size() == 4) continue;  // a scalar: refused (rank 0), and so stays portable
        INFO(edge_op_name(op) << " keepdims " << keep);
        GraphBuilder b;
        // NHWC when computed after the convolution with dims kept.
        const auto y = conv1x1(b, b.input("x", DType::Float32, {2, 3, 4, 5}), 3, 6, 4);
        b.output(b.op(EdgeOp::Relu, {b.op(op, {y}, ir::Attrs{{"axes", axes}, {"keepdims", keep}})}));
        check_whole(b.build());
      }
}

TEST_CASE("xnnpack elementwise functions", "[xnnpack][integration]") {
  const std::vector<std::tuple<EdgeOp, float, float>> cases = {
      {EdgeOp::Tanh, -6.0f, 6.0f}, {EdgeOp::Erf, -4.0f, 4.0f},       {EdgeOp::Exp, -8.0f, 8.0f},
      {EdgeOp::Log, 0.01f, 50.0f}, {EdgeOp::Reciprocal, 0.1f, 5.0f}, {EdgeOp::Softplus, -30.0f, 30.0f},
  };
  for (const auto& [op, lo, hi] : cases) {
    INFO(edge_op_name(op));
    GraphBuilder b;
    b.output(b.op(op, {b.input("x", DType::Float32, {3, 50, 70})}));
    check_whole(b.build(), lo, hi, 1e-5f);
  }
  for (const char* approximate : {"none", "tanh"}) {
    GraphBuilder b;
    b.output(b.op(EdgeOp::Gelu, {b.input("x", DType::Float32, {3, 50, 70})},
                  ir::Attrs{{"approximate", std::string(approximate)}}));
    check_whole(b.build(), -6.0f, 6.0f, 1e-5f);
  }
}

TEST_CASE("xnnpack nearest resize in every coordinate and rounding mode", "[xnnpack][integration]") {
  for (const char* coord :
       {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn"})
    for (const char* nearest : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"})
      for (const Shape& out : {Shape{1, 3, 10, 14}, Shape{1, 3, 3, 5}}) {
        INFO(coord << " " << nearest << " " << out.str());
        GraphBuilder b;
        const auto y = conv1x1(b, b.input("x", DType::Float32, {1, 2, 5, 7}), 2, 3, 5);
        b.output(b.op(EdgeOp::Resize, {y},
                      ir::Attrs{{"mode", std::string("nearest")},
                                {"coordinate_transformation_mode", std::string(coord)},
                                {"nearest_mode", std::string(nearest)},
                                {"sizes", std::vector<int64_t>(out.begin(), out.end())}}));
        check_whole(b.build());
      }
}

TEST_CASE("xnnpack batch_norm that cannot fold is a per-channel affine", "[xnnpack][integration]") {
  for (bool spatial : {true, false}) {
    GraphBuilder b;
    const Shape x = spatial ? Shape{2, 4, 3, 5} : Shape{6, 4};
    const auto in = b.input("x", DType::Float32, x);
    const auto sum = b.op(EdgeOp::Add, {in, b.input("y", DType::Float32, x)});
    std::vector<ir::ValueId> params = {sum};
    for (uint32_t i = 0; i < 4; ++i)
      params.push_back(
          b.constant_f32("p" + std::to_string(i), {4}, randoms(4, 20 + i, i == 3 ? 0.5f : -1.0f, 2.0f)));
    const auto bn = b.op(EdgeOp::BatchNorm, params, ir::Attrs{{"epsilon", 1e-5f}});
    b.output(spatial ? conv1x1(b, bn, 4, 2, 9) : bn);
    check_whole(b.build());
  }
}

TEST_CASE("xnnpack reshape of NHWC activations goes through ONNX order", "[xnnpack][integration]") {
  GraphBuilder b;
  const auto y = conv1x1(b, b.input("x", DType::Float32, {1, 3, 4, 6}), 3, 8, 3);
  const auto r = reshape(b, y, {1, 2, 4, 4, 6});  // rank 5: channels split in two
  const auto t = transpose(b, r, {0, 1, 3, 2, 4});
  const auto back = reshape(b, t, {1, 8, 4, 6});
  b.output(conv1x1(b, b.op(EdgeOp::Sigmoid, {back}), 8, 2, 6));
  check_whole(b.build());
}

}  // namespace
}  // namespace etc
