// A ChannelScale (a squeeze-and-excitation gate) folds into the native
// convolution that alone reads its product (stages.h
// StagePlan::input_scale): the convolution scales its weights by the gate
// on every run, so a gate that changes between runs changes the output; the
// fold is left out where the weights outnumber the activations, the product
// is clamped or read elsewhere, or native convolutions are off.
#include <xnnpack.h>

#include <array>
#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <vector>

#include "runtime/backends/xnnpack/blob_reader.h"
#include "runtime/backends/xnnpack/stages.h"
#include "tests/support/native_conv_fixtures.h"
#include "tests/support/random.h"
#include "tests/support/xnnpack_blob_builder.h"

namespace etc {
namespace {

using namespace testing::native_conv;
using testing::XnnpackBlobBuilder;
using xnnpack::fb::NodeType;

struct Gated {
  Geometry g;
  float scale_lo = -kInf;          // the ChannelScale's clamp
  bool product_is_output = false;  // the product is delegate output 1 too
};

// x (input 0) * s (input 1, [1, 1, 1, c]) -> t -> conv -> y (output 0).
std::vector<uint8_t> gated_blob(const Gated& q, const ConvData& d) {
  const Geometry& g = q.g;
  XnnpackBlobBuilder b;
  const uint32_t x = b.input({1, g.h, g.w, g.c}, 0);
  const uint32_t s = b.input({1, 1, 1, g.c}, 1);
  const uint32_t t = q.product_is_output ? b.output({1, g.h, g.w, g.c}, 1) : b.tensor({1, g.h, g.w, g.c});
  const uint32_t y = b.output({1, g.oh(), g.ow(), g.o}, 0);
  b.node(NodeType::ChannelScale, {x, s}, {t}).output_min = q.scale_lo;
  set_window(b.node(NodeType::Convolution2d,
                    {t, b.constant({g.o, g.kh, g.kw, g.c}, d.filter), b.constant({g.o}, d.bias)}, {y}),
             g);
  return b.build();
}

xnnpack::StagePlan plan_of(const std::vector<uint8_t>& blob, xnnpack::NativeConvolutions mode) {
  auto view = xnnpack::read_xnnpack_blob(blob.data(), blob.size());
  REQUIRE(view.ok());
  return xnnpack::plan_stages(view.get(), mode);
}

const std::array<uint32_t, 4> kPad1 = {1, 1, 1, 1};

TEST_CASE("xnnpack folds a channel scale into the native convolution that reads it", "[xnnpack]") {
  REQUIRE(xnnpack::native_convolution_available());
  for (const Geometry& g : {Geometry{.name = "1x1, 64->32, 8x8", .h = 8, .w = 8, .c = 64, .o = 32},
                            Geometry{.name = "3x3 pad 1, 32->48, 24x24 (taps x channels)",
                            .h = 24,
                            .w = 24,
                            .c = 32,
                            .o = 48,
                            .kh = 3,
                            .kw = 3,
                            .pad = kPad1}}) {
    INFO(g.name);
    const ConvData d = random_data(g, 31);
    const std::vector<uint8_t> blob = gated_blob({g}, d);
    const xnnpack::StagePlan plan = plan_of(blob, xnnpack::NativeConvolutions::kAll);
    CHECK(plan.input_scale == std::vector<int64_t>{-1, 0});
    CHECK(plan.elided == std::vector<bool>{true, false});
    CHECK(plan.folded_into == std::vector<int64_t>{1, -1});
    REQUIRE(plan.stages.size() == 1);
    CHECK(plan.offset_of[2] == xnnpack::kNoOffset);  // the product is never written
    CHECK(plan_of(blob, xnnpack::NativeConvolutions::kOff).input_scale == std::vector<int64_t>{-1, -1});

    std::mt19937 rng(32);
    // Two gates in turn: the weights are rescaled on every run.
    const std::vector<std::vector<float>> gates = {testing::random_floats(g.c, rng, 0.0f, 1.0f),
                                                   testing::random_floats(g.c, rng, 0.0f, 1.0f)};
    for (const auto& [specs, threads] :
         std::vector<std::pair<std::vector<Spec>, int>>{{kOn, 1}, {kOn, 2}, {kOff, 1}}) {
      INFO(specs[0].second << ", " << threads << " threads");
      SpecRunner runner(threads);
      REQUIRE(runner.init(blob, specs).ok());
      for (int run = 0; run < 4; ++run) {
        std::vector<float> xin = d.x, gate = gates[run % 2], y(g.out_numel(), -7.0f);
        REQUIRE(runner
                    .execute({{shape_of({1, g.h, g.w, g.c}), xin.data()},
                              {shape_of({1, 1, 1, g.c}), gate.data()},
                              {shape_of({1, g.oh(), g.ow(), g.o}), y.data()}})
                    .ok());
        std::vector<float> product = d.x;
        for (size_t i = 0; i < product.size(); ++i) product[i] *= gate[i % g.c];
        CHECK(count_far(y, reference(g, product, d.filter, d.bias), 1e-4) == 0);
      }
    }
  }
}

TEST_CASE("xnnpack gated convolutions of one delegate share the memory of their scaled weights",
          "[xnnpack]") {
  REQUIRE(xnnpack::native_convolution_available());
  // x * s1 -> conv1 (1x1, 64->48) -> t; t * s2 -> conv2 (1x1, 48->40) -> y:
  // both fold their gates and write their scaled weights, in turn, into one
  // buffer (sized for conv1's), so each run must rescale both.
  const Geometry g1{.h = 8, .w = 8, .c = 64, .o = 48}, g2{.h = 8, .w = 8, .c = 48, .o = 40};
  const ConvData d1 = random_data(g1, 35), d2 = random_data(g2, 36);
  XnnpackBlobBuilder b;
  const uint32_t x = b.input({1, 8, 8, 64}, 0);
  const uint32_t s1 = b.input({1, 1, 1, 64}, 1);
  const uint32_t s2 = b.input({1, 1, 1, 48}, 2);
  const uint32_t p1 = b.tensor({1, 8, 8, 64}), t = b.tensor({1, 8, 8, 48}), p2 = b.tensor({1, 8, 8, 48});
  const uint32_t y = b.output({1, 8, 8, 40}, 0);
  b.node(NodeType::ChannelScale, {x, s1}, {p1});
  set_window(b.node(NodeType::Convolution2d,
                    {p1, b.constant({48, 1, 1, 64}, d1.filter), b.constant({48}, d1.bias)}, {t}),
             g1);
  b.node(NodeType::ChannelScale, {t, s2}, {p2});
  set_window(b.node(NodeType::Convolution2d,
                    {p2, b.constant({40, 1, 1, 48}, d2.filter), b.constant({40}, d2.bias)}, {y}),
             g2);
  const std::vector<uint8_t> blob = b.build();
  CHECK(plan_of(blob, xnnpack::NativeConvolutions::kAll).input_scale == std::vector<int64_t>{-1, 0, -1, 2});
  std::mt19937 rng(37);
  for (const auto& [specs, threads] :
       std::vector<std::pair<std::vector<Spec>, int>>{{kOn, 1}, {kOn, 2}, {kOff, 1}}) {
    INFO(specs[0].second << ", " << threads << " threads");
    SpecRunner runner(threads);
    REQUIRE(runner.init(blob, specs).ok());
    for (int run = 0; run < 3; ++run) {
      std::vector<float> xin = d1.x, gate1 = testing::random_floats(64, rng, 0.0f, 1.0f),
                         gate2 = testing::random_floats(48, rng, 0.0f, 1.0f), yout(8 * 8 * 40, -7.0f);
      REQUIRE(runner
                  .execute({{shape_of({1, 8, 8, 64}), xin.data()},
                            {shape_of({1, 1, 1, 64}), gate1.data()},
                            {shape_of({1, 1, 1, 48}), gate2.data()},
                            {shape_of({1, 8, 8, 40}), yout.data()}})
                  .ok());
      std::vector<float> q1 = d1.x;
      for (size_t i = 0; i < q1.size(); ++i) q1[i] *= gate1[i % 64];
      std::vector<float> q2 = reference(g1, q1, d1.filter, d1.bias);
      for (size_t i = 0; i < q2.size(); ++i) q2[i] *= gate2[i % 48];
      CHECK(count_far(yout, reference(g2, q2, d2.filter, d2.bias), 1e-4) == 0);
    }
  }
}

TEST_CASE("xnnpack keeps a channel scale apart where folding it would not pay or is not exact", "[xnnpack]") {
  const Geometry small_image{.h = 8, .w = 8, .c = 32, .o = 64, .kh = 3, .kw = 3, .pad = kPad1};
  const Geometry g{.h = 8, .w = 8, .c = 64, .o = 32};
  const ConvData ds = random_data(small_image, 33), d = random_data(g, 34);
  // 18,432 weights against 2,048 activations: scaling the weights costs more.
  CHECK(plan_of(gated_blob({small_image}, ds), xnnpack::NativeConvolutions::kAll).input_scale ==
        std::vector<int64_t>{-1, -1});
  // A clamped product is not the convolution of x times s.
  CHECK(plan_of(gated_blob({g, 0.0f}, d), xnnpack::NativeConvolutions::kAll).input_scale ==
        std::vector<int64_t>{-1, -1});
  // The product is needed on its own.
  CHECK(plan_of(gated_blob({g, -kInf, true}, d), xnnpack::NativeConvolutions::kAll).input_scale ==
        std::vector<int64_t>{-1, -1});
}

}  // namespace
}  // namespace etc
