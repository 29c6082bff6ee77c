// A multiplication by and an addition of scalar constants after what a
// native convolution computes (PaddleOCR's learnable affine blocks) fold
// into its epilogue (stages.h ConvOutput::affine): dense and depthwise
// convolutions, after a folded hardswish or alone, the multiplication or
// the addition alone; a depthwise convolution that an activation and such
// an affine follow runs natively by default. Each against a reference and
// XNNPACK alone; the plans leave clamped, per-channel or shared products
// apart.
#include <array>
#include <catch2/catch.hpp>
#include <cstdint>
#include <utility>
#include <vector>

#include "runtime/backends/xnnpack/blob_reader.h"
#include "runtime/backends/xnnpack/native_conv.h"
#include "runtime/backends/xnnpack/stages.h"
#include "tests/support/native_conv_fixtures.h"
#include "tests/support/xnnpack_blob_builder.h"

namespace etc {
namespace {

using namespace testing::native_conv;
using testing::XnnpackBlobBuilder;
using xnnpack::fb::NodeType;

enum class Tail { kMulAdd, kMul, kAdd };

struct Case {
  const char* name;
  bool depthwise;  // a 3x3 depthwise convolution (else a 3x3 dense one, 32 -> 32)
  bool hardswish;  // a HardSwish between the convolution and the affine
  Tail tail;
  float mul_lo = -kInf;            // the multiplication's clamp
  bool per_channel = false;        // the multiplier has one value per channel
  bool product_is_output = false;  // the first affine node's output is delegate output 1 too
};

constexpr uint64_t kSide = 12, kC = 32;
constexpr float kScale = 0.75f, kShift = -0.5f;

Geometry geometry(const Case& q) {
  const std::array<uint32_t, 4> p1 = {1, 1, 1, 1};
  Geometry g{.h = kSide, .w = kSide, .c = kC, .o = kC, .kh = 3, .kw = 3, .pad = p1};
  if (q.depthwise) g.groups = kC;
  return g;
}

// x (input 0) -> conv [-> HardSwish] -> Mul(s) / Add(b) / Mul then Add -> y (output 0).
std::vector<uint8_t> affine_blob(const Case& q, const ConvData& d) {
  const Geometry g = geometry(q);
  const std::vector<uint64_t> dims = {1, kSide, kSide, kC};
  XnnpackBlobBuilder b;
  const uint32_t x = b.input(dims, 0);
  const uint32_t y = b.output(dims, 0);
  uint32_t t = b.tensor(dims);
  uint32_t filter = 0;
  if (q.depthwise) {
    std::vector<float> f(9 * kC);  // [1, 3, 3, C] from [C][3][3]
    for (uint64_t ch = 0; ch < kC; ++ch)
      for (uint64_t tap = 0; tap < 9; ++tap) f[tap * kC + ch] = d.filter[ch * 9 + tap];
    filter = b.constant({1, 3, 3, kC}, f);
  } else {
    filter = b.constant({kC, 3, 3, kC}, d.filter);
  }
  auto& conv = b.node(q.depthwise ? NodeType::DepthwiseConvolution2d : NodeType::Convolution2d,
                      {x, filter, b.constant({kC}, d.bias)}, {t});
  set_window(conv, g);
  if (q.depthwise) conv.input_channels = kC;
  if (q.hardswish) {
    const uint32_t h = b.tensor(dims);
    b.node(NodeType::HardSwish, {t}, {h});
    t = h;
  }
  const uint32_t scale =
      q.per_channel ? b.constant({kC}, std::vector<float>(kC, kScale)) : b.constant({1}, {kScale});
  const uint32_t shift = b.constant({1}, {kShift});
  switch (q.tail) {
    case Tail::kMul: b.node(NodeType::Multiply, {scale, t}, {y}).output_min = q.mul_lo; break;
    case Tail::kAdd: b.node(NodeType::Add, {t, shift}, {y}); break;
    case Tail::kMulAdd: {
      const uint32_t m = q.product_is_output ? b.output(dims, 1) : b.tensor(dims);
      b.node(NodeType::Multiply, {t, scale}, {m}).output_min = q.mul_lo;
      b.node(NodeType::Add, {shift, m}, {y});
      break;
    }
  }
  return b.build();
}

std::vector<float> affine_reference(const Case& q, const ConvData& d) {
  std::vector<float> y = reference(geometry(q), d.x, d.filter, d.bias);
  for (float& v : y) {
    if (q.hardswish) v = v * std::min(std::max(v / 6.0f + 0.5f, 0.0f), 1.0f);
    if (q.tail != Tail::kAdd) v *= kScale;
    if (q.tail != Tail::kMul) v += kShift;
  }
  return y;
}

xnnpack::StagePlan plan_of(const std::vector<uint8_t>& blob, xnnpack::NativeConvolutions mode) {
  auto view = xnnpack::read_xnnpack_blob(blob.data(), blob.size());
  REQUIRE(view.ok());
  return xnnpack::plan_stages(view.get(), mode);
}

size_t count_elided(const xnnpack::StagePlan& plan) {
  size_t n = 0;
  for (bool e : plan.elided) n += e ? 1 : 0;
  return n;
}

TEST_CASE("xnnpack folds a scalar affine after a native convolution into its epilogue", "[xnnpack]") {
  REQUIRE(xnnpack::native_convolution_available());
  const std::vector<Case> cases = {
      {"dense, hardswish, multiply and add", false, true, Tail::kMulAdd},
      {"depthwise, hardswish, multiply and add", true, true, Tail::kMulAdd},
      {"dense, multiply alone", false, false, Tail::kMul},
      {"dense, add alone", false, false, Tail::kAdd},
      {"depthwise, hardswish, add alone", true, true, Tail::kAdd},
  };
  for (const Case& q : cases) {
    INFO(q.name);
    const ConvData d = random_data(geometry(q), 71);
    const std::vector<uint8_t> blob = affine_blob(q, d);
    const size_t folded = (q.hardswish ? 1 : 0) + (q.tail == Tail::kMulAdd ? 2 : 1);
    const xnnpack::StagePlan plan = plan_of(blob, xnnpack::NativeConvolutions::kAll);
    // The native depthwise kernel is AVX-512 alone: without it the
    // depthwise convolution stays on XNNPACK and nothing folds into it.
    const bool native = !q.depthwise || xnnpack::native_avx512_available();
    CHECK(plan.writes_into[0].affine == native);
    if (native) {
      CHECK(plan.writes_into[0].scale == (q.tail == Tail::kAdd ? 1.0f : kScale));
      CHECK(plan.writes_into[0].shift == (q.tail == Tail::kMul ? 0.0f : kShift));
      CHECK(count_elided(plan) == folded);
      REQUIRE(plan.stages.size() == 1);
    }
    // A depthwise convolution that a hardswish and an affine follow is
    // native by default too.
    if (q.depthwise && native)
      CHECK(plan_of(blob, xnnpack::NativeConvolutions::kAuto).writes_into[0].affine == q.hardswish);
    CHECK(count_elided(plan_of(blob, xnnpack::NativeConvolutions::kOff)) == 0);

    const std::vector<float> want = affine_reference(q, d);
    for (const auto& [specs, threads] : std::vector<std::pair<std::vector<Spec>, int>>{
             {kOn, 1}, {kOn, 2}, {kAuto, 2}, {kWinograd, 2}, {kOff, 1}}) {
      INFO(specs[0].second << ", " << threads << " threads");
      SpecRunner runner(threads);
      REQUIRE(runner.init(blob, specs).ok());
      std::vector<float> x = d.x, y(want.size(), -7.0f);
      const Shape s = shape_of({1, kSide, kSide, kC});
      REQUIRE(runner.execute({{s, x.data()}, {s, y.data()}}).ok());
      if (specs == kWinograd) {
        // Winograd's error scales with the sum of |x * w| (and the scale after it).
        std::vector<double> scale = magnitude(geometry(q), d.x, d.filter, d.bias);
        for (double& m : scale) m = m * (q.tail == Tail::kAdd ? 1.0 : kScale) + 1.0;
        CHECK(count_far_scaled(y, want, scale, 5e-6) == 0);
      } else {
        CHECK(count_far(y, want, 1e-5) == 0);
      }
    }
  }
}

TEST_CASE("xnnpack keeps an affine apart where it is clamped, per channel or its product is read elsewhere",
          "[xnnpack]") {
  for (const Case& q : {Case{"clamped multiply", false, true, Tail::kMulAdd, 0.0f},
                        Case{"per-channel multiply", false, true, Tail::kMulAdd, -kInf, true}}) {
    INFO(q.name);
    const std::vector<uint8_t> blob = affine_blob(q, random_data(geometry(q), 72));
    const xnnpack::StagePlan plan = plan_of(blob, xnnpack::NativeConvolutions::kAll);
    CHECK(!plan.writes_into[0].affine);
    CHECK(count_elided(plan) == 1);  // the hardswish alone
  }
  // The product is a delegate output: the multiply stays, and the add
  // after it is not taken on its own.
  const Case shared{"product is an output", false, true, Tail::kMulAdd, -kInf, false, true};
  const xnnpack::StagePlan plan =
      plan_of(affine_blob(shared, random_data(geometry(shared), 73)), xnnpack::NativeConvolutions::kAll);
  CHECK(plan.writes_into[0].affine);
  CHECK(plan.writes_into[0].shift == 0.0f);
  CHECK(count_elided(plan) == 2);  // the hardswish and the multiply
}

}  // namespace
}  // namespace etc
