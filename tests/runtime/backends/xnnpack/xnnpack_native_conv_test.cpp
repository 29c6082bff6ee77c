// The XNNPACK backend's own AVX-512 convolution (native_conv.h): for a sweep
// of geometries its output equals XNNPACK's (same blob, compile spec
// native_convolution "on" — every one-group convolution native — and "off")
// and a double-precision reference loop; it gives the same bits on 1 and 2
// threads; a convolution reading a delegate argument bound in place stays
// right when the argument moves between runs; it mixes with XNNPACK stages;
// which convolutions go native, and the compile spec, are in
// xnnpack_native_conv_rules_test.cpp.
#include <xnnpack.h>

#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "runtime/backends/xnnpack/blob_reader.h"
#include "runtime/backends/xnnpack/native_conv.h"
#include "runtime/backends/xnnpack/stages.h"
#include "tests/support/native_conv_fixtures.h"
#include "tests/support/random.h"
#include "tests/support/xnnpack_blob_builder.h"

namespace etc {
namespace {

using namespace testing::native_conv;
using testing::XnnpackBlobBuilder;
using xnnpack::fb::BoundaryLayout;
using xnnpack::fb::NodeType;

std::vector<Geometry> sweep() {
  const std::array<uint32_t, 4> p1 = {1, 1, 1, 1};
  return {
      {.name = "1x1 stride 1, 288->64, 16x16", .h = 16, .w = 16, .c = 288, .o = 64},
      {.name = "1x1 stride 1, 2688->32, 7x7 (49 pixels), no bias, clamp [0, 6]",
       .h = 7,
       .w = 7,
       .c = 2688,
       .o = 32,
       .bias = false,
       .lo = 0,
       .hi = 6},
      {.name = "3x3 pad 1, 136->32, 10x11 (110 pixels), clamp [0, 6]",
       .h = 10,
       .w = 11,
       .c = 136,
       .o = 32,
       .kh = 3,
       .kw = 3,
       .pad = p1,
       .lo = 0,
       .hi = 6},
      {.name = "3x3 pad 1, 128->64, 8x8", .c = 128, .o = 64, .kh = 3, .kw = 3, .pad = p1},
      {.name = "3x3 stride 2, pad top 0 right 1 bottom 1 left 0, 120->80, 14x14 -> 7x7",
       .h = 14,
       .w = 14,
       .c = 120,
       .o = 80,
       .kh = 3,
       .kw = 3,
       .sh = 2,
       .sw = 2,
       .pad = {0, 1, 1, 0}},
      {.name = "3x3 stride 2, pad top 1 right 0 bottom 0 left 1, 136->64, 15x17 -> 7x8, no bias",
       .h = 15,
       .w = 17,
       .c = 136,
       .o = 64,
       .kh = 3,
       .kw = 3,
       .sh = 2,
       .sw = 2,
       .pad = {1, 0, 0, 1},
       .bias = false},
      {.name = "7x7 stride 2 pad 3, 3->64, 44x44 -> 22x22, clamp [0, 6]",
       .h = 44,
       .w = 44,
       .c = 3,
       .o = 64,
       .kh = 7,
       .kw = 7,
       .sh = 2,
       .sw = 2,
       .pad = {3, 3, 3, 3},
       .lo = 0,
       .hi = 6},
      {.name = "3x3 dilation 2 pad 2, 64->96, 9x9, no bias",
       .h = 9,
       .w = 9,
       .c = 64,
       .o = 96,
       .kh = 3,
       .kw = 3,
       .dh = 2,
       .dw = 2,
       .pad = {2, 2, 2, 2},
       .bias = false},
      {.name = "3x3 dilation (2, 1) stride (1, 2), pad top 2 right 0 bottom 1 left 1, 272->32, 10x13 -> 9x6",
       .h = 10,
       .w = 13,
       .c = 272,
       .o = 32,
       .kh = 3,
       .kw = 3,
       .sw = 2,
       .dh = 2,
       .pad = {2, 0, 1, 1}},
      {.name = "batch 2, 3x3 pad 1, 296->32, 5x5 (50 pixels), clamp [0, 6]",
       .n = 2,
       .h = 5,
       .w = 5,
       .c = 296,
       .o = 32,
       .kh = 3,
       .kw = 3,
       .pad = p1,
       .lo = 0,
       .hi = 6},
      {.name = "batch 2, 1x1, 896->80, 6x5, no bias",
       .n = 2,
       .h = 6,
       .w = 5,
       .c = 896,
       .o = 80,
       .bias = false},
      {.name = "80 output channels (masked stores), 3x3 pad 1, 120->80, 7x7, clamp [0, 6]",
       .h = 7,
       .w = 7,
       .c = 120,
       .o = 80,
       .kh = 3,
       .kw = 3,
       .pad = p1,
       .lo = 0,
       .hi = 6},
      {.name = "96 output channels, 3x3 pad 1, 48->96, 10x11, clamp [-0.5, 0.5]",
       .h = 10,
       .w = 11,
       .c = 48,
       .o = 96,
       .kh = 3,
       .kw = 3,
       .pad = p1,
       .lo = -0.5f,
       .hi = 0.5f},
      {.name = "28 output channels (masked, < 32), 1x1, 2368->28, 8x8", .c = 2368, .o = 28},
      {.name = "112 output channels (masked second half), 1x1, 768->112, 7x7",
       .h = 7,
       .w = 7,
       .c = 768,
       .o = 112},
      {.name = "exactly 48 pixels, 1x3 kernel stride (1, 2), 456->64, 6x17 -> 6x8",
       .h = 6,
       .w = 17,
       .c = 456,
       .o = 64,
       .kw = 3,
       .sw = 2},
      {.name = "12x12 (whole tiles), 3x3 pad 1, 56->64, NCHW boundary",
       .h = 12,
       .w = 12,
       .c = 56,
       .o = 64,
       .kh = 3,
       .kw = 3,
       .pad = p1,
       .nchw = true},
      {.name = "batch 2, 5x3 kernel pad (2, 1), 72->32, 9x7, NCHW boundary, clamp [0, 6]",
       .n = 2,
       .h = 9,
       .w = 7,
       .c = 72,
       .o = 32,
       .kh = 5,
       .kw = 3,
       .pad = {2, 1, 2, 1},
       .lo = 0,
       .hi = 6,
       .nchw = true},
      {.name = "zero-bordered copy: batch 2, 3x3 stride (2, 1), row dilation 2, pads 2 1 1 0, 5->64, 9x10",
       .n = 2,
       .h = 9,
       .w = 10,
       .c = 5,
       .o = 64,
       .kh = 3,
       .kw = 3,
       .sh = 2,
       .dh = 2,
       .pad = {2, 1, 1, 0}},
      {.name = "zero-bordered copy reading the NCHW argument: batch 2, 7x7 stride 2 pad 3, 3->24, 11x10",
       .n = 2,
       .h = 11,
       .w = 10,
       .c = 3,
       .o = 24,
       .kh = 7,
       .kw = 7,
       .sh = 2,
       .sw = 2,
       .pad = {3, 3, 3, 3},
       .nchw = true},
      // Images tall enough that the zero-bordered copy holds one band of
      // rows at a time (256 KiB): several bands, the last one short.
      {.name = "zero-bordered copy in bands, NCHW argument: batch 2, 3x3 stride 2 pad 1, 3->16, 300x250",
       .n = 2,
       .h = 300,
       .w = 250,
       .c = 3,
       .o = 16,
       .kh = 3,
       .kw = 3,
       .sh = 2,
       .sw = 2,
       .pad = {1, 1, 1, 1},
       .nchw = true},
      {.name = "zero-bordered copy in bands: 5x5 pad (2, 1, 2, 0), 5->24, 130x160, clamp [0, 6]",
       .h = 130,
       .w = 160,
       .c = 5,
       .o = 24,
       .kh = 5,
       .kw = 5,
       .pad = {2, 1, 2, 0},
       .lo = 0,
       .hi = 6},
      {.name = "zero-bordered copy, NCHW boundary: 5x5 stride 2 pad 2, 4->32, 13x12, clamp [0, 6]",
       .h = 13,
       .w = 12,
       .c = 4,
       .o = 32,
       .kh = 5,
       .kw = 5,
       .sh = 2,
       .sw = 2,
       .pad = {2, 2, 2, 2},
       .lo = 0,
       .hi = 6,
       .nchw = true},
      {.name = "auto too: 3x3 pad 1, 64->64, 28x28",
       .h = 28,
       .w = 28,
       .c = 64,
       .o = 64,
       .kh = 3,
       .kw = 3,
       .pad = p1,
       .auto_native = true},
      {.name = "auto too: 80 output channels, 3x3 pad 1, 96->80, 12x12, clamp [0, 6]",
       .h = 12,
       .w = 12,
       .c = 96,
       .o = 80,
       .kh = 3,
       .kw = 3,
       .pad = p1,
       .lo = 0,
       .hi = 6,
       .auto_native = true},
      {.name = "16 output channels (only the first 16-lane half stored), 3x3 pad 1, 8->16, 8x8",
       .o = 16,
       .kh = 3,
       .kw = 3,
       .pad = p1},
      {.name = "5x6 output (30 pixels: 2 full tiles and a partial one), 3x3 pad 1, 8->64",
       .h = 5,
       .w = 6,
       .o = 64,
       .kh = 3,
       .kw = 3,
       .pad = p1},
      {.name = "1x1 spatial output (one pixel), 3x3, 8->32", .h = 3, .w = 3, .o = 32, .kh = 3, .kw = 3},
      // Reductions deeper than 8192 (a panel's weights past a quarter of
      // any L2 up to 4 MiB) are cut into segments (native_depth_split):
      // whole taps here, and one tap in pieces of input channels below, in
      // several groups of tiles.
      {.name = "depth cut into whole taps: 5x5 pad 2, 400->40, 7x7, clamp [-1, 1]",
       .h = 7,
       .w = 7,
       .c = 400,
       .o = 40,
       .kh = 5,
       .kw = 5,
       .pad = {2, 2, 2, 2},
       .lo = -1,
       .hi = 1},
      {.name = "depth cut within a tap, several groups of tiles: 1x1, 8500->40, 13x13",
       .h = 13,
       .w = 13,
       .c = 8500,
       .o = 40},
      {.name = "not native: 2 groups, 3x3 pad 1, 16->64, 8x8",
       .c = 16,
       .o = 64,
       .kh = 3,
       .kw = 3,
       .pad = p1,
       .groups = 2,
       .native = false},
  };
}

// runs_natively's documented rule (native_conv.h), for the sweep; its
// boundaries are tested case by case below.
bool documented_auto(const Geometry& g) {
  // Panels of 32 channels; a last one of at most 16 runs 16 wide.
  const uint64_t rest = g.o % 32;
  const uint64_t padded = g.o - rest + (rest == 0 ? 0 : rest <= 16 ? 16 : 32);
  // Fewer than 16 input channels, a kernel wider than 1 and no column
  // dilation take the zero-bordered copy, and then a depth of 16 suffices;
  // against XNNPACK's AVX2 kernel it always does.
  const bool padded_rows = g.c < 16 && g.kw > 1 && g.dw == 1;
  const uint64_t pixels = g.n * g.oh() * g.ow(), depth = uint64_t{g.kh} * g.kw * g.c;
  // At most one 12-pixel tile against 1 MiB of weights or more: streamed.
  const bool streamed = pixels <= 12 && g.o * depth >= (uint64_t{1} << 18);
  return g.native && g.groups == 1 && padded * 3 <= g.o * 4 &&
         (streamed ||
          (pixels >= 48 &&
           depth >= (padded_rows || xnnpack::native_isa() == xnnpack::NativeIsa::kAvx2 ? 16u : 32u)));
}

TEST_CASE("xnnpack native convolution equals XNNPACK and the reference across geometries", "[xnnpack]") {
  REQUIRE(xnnpack::native_convolution_available());
  const xnnpack::NativeIsa isa = GENERATE(from_range(native_isas()));
  INFO(isa_name(isa));
  const NativeIsaCap cap(isa);
  uint32_t seed = 100;
  for (const Geometry& g : sweep()) {
    INFO(g.name);
    const ConvData d = random_data(g, ++seed);
    check_classification(conv_blob(g, d), g.native, g.auto_native || documented_auto(g));
    const std::vector<float> want = reference(g, d.x, d.filter, d.bias);
    // The default chooses the direct kernel as "auto" does (Winograd
    // aside: xnnpack_winograd_test.cpp).
    const std::vector<float> by_default = run_conv(g, d, {{"winograd", "off"}});
    const std::vector<float> on = run_conv(g, d, kOn);
    const std::vector<float> off = run_conv(g, d, kOff);
    CHECK(count_far(off, want, 1e-4) == 0);
    CHECK(count_far(on, want, 1e-4) == 0);
    // Same summation order as XNNPACK's kernels: the same bits.
    CHECK(count_different(on, off) == 0);
    CHECK(count_different(by_default, on) == 0);
  }
}

TEST_CASE("xnnpack native convolution gives the same bits on 1 and 2 threads", "[xnnpack]") {
  REQUIRE(xnnpack::native_convolution_available());
  const xnnpack::NativeIsa isa = GENERATE(from_range(native_isas()));
  INFO(isa_name(isa));
  const NativeIsaCap cap(isa);
  const std::array<uint32_t, 4> p1 = {1, 1, 1, 1};
  const std::vector<Geometry> cases = {
      {.name = "3x3 pad 1, 48->64, 14x14", .h = 14, .w = 14, .c = 48, .o = 64, .kh = 3, .kw = 3, .pad = p1},
      {.name = "batch 2, 3x3 pad 1, 48->80, 7x9, clamp [0, 6]",
       .n = 2,
       .h = 7,
       .w = 9,
       .c = 48,
       .o = 80,
       .kh = 3,
       .kw = 3,
       .pad = p1,
       .lo = 0,
       .hi = 6},
      {.name = "1x1, 512->96, 10x11", .h = 10, .w = 11, .c = 512, .o = 96},
  };
  uint32_t seed = 200;
  for (const Geometry& g : cases) {
    INFO(g.name);
    const ConvData d = random_data(g, ++seed);
    CHECK(classify(conv_blob(g, d)).all_stage);
    const std::vector<float> want = reference(g, d.x, d.filter, d.bias);
    const std::vector<float> one = run_conv(g, d, kOn, 1);
    const std::vector<float> two = run_conv(g, d, kOn, 2);
    const std::vector<float> xnn = run_conv(g, d, kOff, 2);
    CHECK(count_far(one, want, 1e-4) == 0);
    CHECK(count_different(one, two) == 0);
    CHECK(count_different(two, xnn) == 0);
  }
}

TEST_CASE("xnnpack native convolution follows delegate arguments bound in place when they move",
          "[xnnpack]") {
  REQUIRE(xnnpack::native_convolution_available());
  const Geometry g{.h = 9, .w = 9, .c = 96, .o = 96, .kh = 3, .kw = 3, .pad = {1, 1, 1, 1}};
  const ConvData d = random_data(g, 300);
  const Shape in_shape = shape_of({g.n, g.h, g.w, g.c}), out_shape = shape_of({g.n, g.oh(), g.ow(), g.o});

  SECTION("the convolution's input is delegate input 0 (BoundaryLayout::Same)") {
    const std::vector<uint8_t> blob = conv_blob(g, d);
    REQUIRE(classify(blob).all_stage);
    for (int threads : {1, 2}) {
      INFO(threads << " threads");
      SpecRunner runner(threads);
      REQUIRE(runner.init(blob, kOn).ok());
      std::mt19937 rng(301);
      std::vector<float> a = d.x;
      std::vector<float> b = testing::random_floats(g.in_numel(), rng);
      REQUIRE(a.data() != b.data());
      std::vector<float> y1(g.out_numel()), y2(g.out_numel()), y3(g.out_numel()), y4(g.out_numel());
      REQUIRE(runner.execute({{in_shape, a.data()}, {out_shape, y1.data()}}).ok());
      CHECK(count_far(y1, reference(g, a, d.filter, d.bias), 1e-4) == 0);
      // Another input buffer (and another output buffer).
      REQUIRE(runner.execute({{in_shape, b.data()}, {out_shape, y2.data()}}).ok());
      CHECK(count_far(y2, reference(g, b, d.filter, d.bias), 1e-4) == 0);
      // Back to the first buffer, its contents changed in place.
      for (float& v : a) v = -v * 0.5f;
      REQUIRE(runner.execute({{in_shape, a.data()}, {out_shape, y3.data()}}).ok());
      CHECK(count_far(y3, reference(g, a, d.filter, d.bias), 1e-4) == 0);
      // A fresh buffer, after the second one is gone.
      b = {};
      std::vector<float> c = testing::random_floats(g.in_numel(), rng);
      REQUIRE(runner.execute({{in_shape, c.data()}, {out_shape, y4.data()}}).ok());
      CHECK(count_far(y4, reference(g, c, d.filter, d.bias), 1e-4) == 0);
    }
  }

  SECTION("the convolution's input is delegate output 0, itself written by a convolution") {
    // x -> conv1 -> y (output 0) -> conv2 (3x3, 96->64) -> z (output 1):
    // conv2 reads the caller's output buffer in place.
    const Geometry g2{
        .h = g.oh(), .w = g.ow(), .c = 96, .o = 64, .kh = 3, .kw = 3, .pad = {1, 1, 1, 1}, .bias = false};
    const ConvData d2 = random_data(g2, 302);
    XnnpackBlobBuilder bb;
    const uint32_t x = bb.input({g.n, g.h, g.w, g.c}, 0);
    const uint32_t y = bb.output({g.n, g.oh(), g.ow(), g.o}, 0);
    const uint32_t z = bb.output({g.n, g2.oh(), g2.ow(), g2.o}, 1);
    auto& conv1 =
        bb.node(NodeType::Convolution2d,
                {x, bb.constant({g.o, g.kh, g.kw, g.c}, d.filter), bb.constant({g.o}, d.bias)}, {y});
    set_window(conv1, g);
    auto& conv2 = bb.node(NodeType::Convolution2d, {y, bb.constant({g2.o, 3, 3, g2.c}, d2.filter)}, {z});
    set_window(conv2, g2);
    const std::vector<uint8_t> blob = bb.build();
    {
      auto view = xnnpack::read_xnnpack_blob(blob.data(), blob.size());
      REQUIRE(view.ok());
      const xnnpack::StagePlan plan = xnnpack::plan_stages(view.get(), xnnpack::NativeConvolutions::kAll);
      REQUIRE(plan.stages.size() == 2);
      CHECK(plan.stages[0].native);
      CHECK(plan.stages[1].native);
    }
    const Shape z_shape = shape_of({g.n, g2.oh(), g2.ow(), g2.o});
    SpecRunner runner(2);
    REQUIRE(runner.init(blob, kOn).ok());
    std::mt19937 rng(303);
    std::vector<std::vector<float>> inputs = {d.x, testing::random_floats(g.in_numel(), rng), d.x};
    std::vector<std::vector<float>> ys(3, std::vector<float>(g.out_numel()));
    std::vector<std::vector<float>> zs(3, std::vector<float>(g2.out_numel()));
    for (size_t run = 0; run < 3; ++run) {
      INFO("run " << run);
      REQUIRE(
          runner
              .execute(
                  {{in_shape, inputs[run].data()}, {out_shape, ys[run].data()}, {z_shape, zs[run].data()}})
              .ok());
      const std::vector<float> y_ref = reference(g, inputs[run], d.filter, d.bias);
      CHECK(count_far(ys[run], y_ref, 1e-4) == 0);
      // z from the y conv2 actually read (float rounding of y, amplified by
      // conv2's depth of 864, would exceed 1e-4 against a reference of the
      // reference).
      CHECK(count_far(zs[run], reference(g2, ys[run], d2.filter, {}), 1e-4) == 0);
    }
  }
}

TEST_CASE("xnnpack native convolutions mix with XNNPACK stages", "[xnnpack]") {
  REQUIRE(xnnpack::native_convolution_available());
  // x -> Clamp [-0.75, 0.75] -> s -> conv1 (3x3, 64->128, native) -> a
  //   -> conv2 (3x3, 128->128, native) -> b; Add(a, b) -> c
  //   -> conv3 (3x3, 2 groups, 128->16: XNNPACK) -> y, clamp [0, 6];
  // c is output 1. conv1 and conv2 are large enough for "auto" too, so both
  // "on" and "auto" plan [Clamp] [conv1] [conv2] [Add, conv3].
  const std::array<uint32_t, 4> p1 = {1, 1, 1, 1};
  const Geometry g1{.h = 12, .w = 10, .c = 64, .o = 128, .kh = 3, .kw = 3, .pad = p1};
  const Geometry g2{.h = 12, .w = 10, .c = 128, .o = 128, .kh = 3, .kw = 3, .pad = p1};
  const Geometry g3{
      .h = 12, .w = 10, .c = 128, .o = 16, .kh = 3, .kw = 3, .pad = p1, .lo = 0, .hi = 6, .groups = 2};
  const ConvData d1 = random_data(g1, 401), d2 = random_data(g2, 402), d3 = random_data(g3, 403);
  XnnpackBlobBuilder b;
  const uint32_t x = b.input({1, 12, 10, 64}, 0, BoundaryLayout::NchwToNhwc);
  const uint32_t s = b.tensor({1, 12, 10, 64});
  const uint32_t a = b.tensor({1, 12, 10, 128});
  const uint32_t bt = b.tensor({1, 12, 10, 128});
  const uint32_t c = b.output({1, 12, 10, 128}, 1);
  const uint32_t y = b.output({1, 12, 10, 16}, 0, BoundaryLayout::NhwcToNchw);
  auto& clamp = b.node(NodeType::Clamp, {x}, {s});
  clamp.output_min = -0.75f;
  clamp.output_max = 0.75f;
  set_window(b.node(NodeType::Convolution2d,
                    {s, b.constant({128, 3, 3, 64}, d1.filter), b.constant({128}, d1.bias)}, {a}),
             g1);
  set_window(b.node(NodeType::Convolution2d,
                    {a, b.constant({128, 3, 3, 128}, d2.filter), b.constant({128}, d2.bias)}, {bt}),
             g2);
  b.node(NodeType::Add, {a, bt}, {c});
  set_window(b.node(NodeType::Convolution2d,
                    {c, b.constant({16, 3, 3, 64}, d3.filter), b.constant({16}, d3.bias)}, {y}),
             g3);
  const std::vector<uint8_t> blob = b.build();
  {
    auto view = xnnpack::read_xnnpack_blob(blob.data(), blob.size());
    REQUIRE(view.ok());
    for (auto mode : {xnnpack::NativeConvolutions::kAll, xnnpack::NativeConvolutions::kAuto}) {
      const xnnpack::StagePlan plan = xnnpack::plan_stages(view.get(), mode);
      REQUIRE(plan.stages.size() == 4);
      const bool native[] = {false, true, true, false};
      for (size_t i = 0; i < 4; ++i) CHECK(plan.stages[i].native == native[i]);
    }
  }

  std::vector<float> s_ref = d1.x;
  for (float& v : s_ref) v = std::min(std::max(v, -0.75f), 0.75f);
  const std::vector<float> a_ref = reference(g1, s_ref, d1.filter, d1.bias);
  const std::vector<float> b_ref = reference(g2, a_ref, d2.filter, d2.bias);
  std::vector<float> c_ref(a_ref.size());
  for (size_t i = 0; i < c_ref.size(); ++i) c_ref[i] = a_ref[i] + b_ref[i];
  const std::vector<float> x_nchw = nhwc_to_nchw(d1.x, 1, 120, 64);

  std::vector<std::vector<float>> ys, cs;
  for (const auto& [specs, threads] :
       std::vector<std::pair<std::vector<Spec>, int>>{{kOn, 1}, {kOn, 2}, {kOff, 1}, {kAuto, 2}, {{}, 2}}) {
    INFO((specs.empty() ? "default" : specs[0].second) << ", " << threads << " threads");
    SpecRunner runner(threads);
    const Status st = runner.init(blob, specs);
    INFO(st.message());
    REQUIRE(st.ok());
    std::vector<float> xin = x_nchw, yout(120 * 16), cout(120 * 128);
    for (int run = 0; run < 2; ++run)
      REQUIRE(runner
                  .execute({{Shape{1, 64, 12, 10}, xin.data()},
                            {Shape{1, 16, 12, 10}, yout.data()},
                            {Shape{1, 12, 10, 128}, cout.data()}})
                  .ok());
    // c = a + conv2(a): conv1's float rounding of a, amplified by conv2's
    // depth of 1152, reaches a few 1e-4 (XNNPACK alone does the same), so c
    // gets 1e-3; y is checked at 1e-4 against conv3 of the c it read.
    CHECK(count_far(cout, c_ref, 1e-3) == 0);
    CHECK(count_far(yout, nhwc_to_nchw(reference(g3, cout, d3.filter, d3.bias), 1, 120, 16), 1e-4) == 0);
    ys.push_back(yout);
    cs.push_back(cout);
  }
  for (size_t i = 1; i < ys.size(); ++i) {
    INFO("run " << i << " against run 0");
    CHECK(count_different(cs[i], cs[0]) == 0);
    CHECK(count_different(ys[i], ys[0]) == 0);
  }
}

// x (NCHW argument) -> conv -> y; with `abs_too` an Abs reads x as well,
// into z (NHWC).
std::vector<uint8_t> stem_blob(const Geometry& g, const ConvData& d, bool abs_too) {
  XnnpackBlobBuilder b;
  const uint32_t x = b.input({g.n, g.h, g.w, g.c}, 0, BoundaryLayout::NchwToNhwc);
  std::vector<uint32_t> inputs = {x, b.constant({g.o, g.kh, g.kw, g.c}, d.filter), b.constant({g.o}, d.bias)};
  const uint32_t y = b.output({g.n, g.oh(), g.ow(), g.o}, 0);
  set_window(b.node(NodeType::Convolution2d, inputs, {y}), g);
  if (abs_too) b.node(NodeType::Abs, {x}, {b.output({g.n, g.h, g.w, g.c}, 1)});
  return b.build();
}

TEST_CASE("xnnpack stem convolution reads its NCHW argument without a staging copy", "[xnnpack]") {
  const Geometry stem{
      .n = 2, .h = 13, .w = 9, .c = 3, .o = 32, .kh = 7, .kw = 7, .sh = 2, .sw = 2, .pad = {3, 3, 3, 3}};
  const ConvData d = random_data(stem, 77);
  const auto nchw_input = [](const std::vector<uint8_t>& blob, xnnpack::NativeConvolutions mode) {
    auto view = xnnpack::read_xnnpack_blob(blob.data(), blob.size());
    REQUIRE(view.ok());
    const xnnpack::StagePlan plan = xnnpack::plan_stages(view.get(), mode);
    return static_cast<bool>(plan.nchw_input[view.get().input_tensors[0]]);
  };
  SECTION("which inputs the plan hands to the convolution as NCHW") {
    const std::vector<uint8_t> alone = stem_blob(stem, d, false);
    CHECK(nchw_input(alone, xnnpack::NativeConvolutions::kAll));
    CHECK_FALSE(nchw_input(alone, xnnpack::NativeConvolutions::kOff));
    // Another node reads x too: it needs NHWC, so x is staged.
    CHECK_FALSE(nchw_input(stem_blob(stem, d, true), xnnpack::NativeConvolutions::kAll));
    // A 3x3 stride-1 window may run as Winograd, which reads NHWC.
    Geometry wino = stem;
    wino.kh = wino.kw = 3, wino.sh = wino.sw = 1, wino.pad = {1, 1, 1, 1};
    CHECK_FALSE(nchw_input(stem_blob(wino, random_data(wino, 78), false), xnnpack::NativeConvolutions::kAll));
    // Sixteen channels and more are read pixel by pixel, not in padded rows.
    Geometry wide = stem;
    wide.c = 16;
    CHECK_FALSE(nchw_input(stem_blob(wide, random_data(wide, 79), false), xnnpack::NativeConvolutions::kAll));
  }
  SECTION("it computes the reference, alone or beside another reader of x") {
    const std::vector<float> want = reference(stem, d.x, d.filter, d.bias);
    const std::vector<float> x = nhwc_to_nchw(d.x, stem.n, stem.h * stem.w, stem.c);
    for (bool abs_too : {false, true})
      for (const auto& specs : {kOn, kOff})
        for (int threads : {1, 2}) {
          INFO("abs reader " << abs_too << ", native_convolution " << specs[0].second << ", " << threads
                             << " thread(s)");
          SpecRunner runner(threads);
          REQUIRE(runner.init(stem_blob(stem, d, abs_too), specs).ok());
          std::vector<float> in = x, y(stem.out_numel(), -1.0f), z(stem.in_numel(), -1.0f);
          std::vector<SpecRunner::Arg> args = {{shape_of({stem.n, stem.c, stem.h, stem.w}), in.data()},
                                               {shape_of({stem.n, stem.oh(), stem.ow(), stem.o}), y.data()}};
          if (abs_too) args.push_back({shape_of({stem.n, stem.h, stem.w, stem.c}), z.data()});
          REQUIRE(runner.execute(args).ok());
          CHECK(count_far(y, want, 1e-4) == 0);
          CHECK(in == x);  // the argument is read, not written
          if (abs_too)
            for (size_t i = 0; i < z.size(); ++i) REQUIRE(z[i] == std::abs(d.x[i]));
        }
  }
}

}  // namespace
}  // namespace etc
