// The XNNPACK backend's own convolution (native_conv.h): for a sweep of
// geometries its output equals XNNPACK's (same blob, compile spec
// native_convolution "on" — every one-group convolution native — and "off")
// and a double-precision reference loop; it gives the same bits on 1 and 2
// threads. How it sits in a delegate (arguments bound in place, XNNPACK
// stages around it, an NCHW argument) is in
// xnnpack_native_conv_delegate_test.cpp; which convolutions go native, and
// the compile spec, in xnnpack_native_conv_rules_test.cpp.
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <vector>

#include "runtime/backends/xnnpack/native_conv.h"
#include "tests/support/native_conv_fixtures.h"

namespace etc {
namespace {

using namespace testing::native_conv;

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
      // With AVX-512 the cut reduction reads two whole panels side by side
      // (conv_segmented_pair): a lone last row goes with the tile before
      // it, a short last tile and a lone last panel panel by panel.
      {.name = "depth cut into whole taps, panels in pairs and a lone one, a lone last row: 5x5 pad 2, "
               "400->96, 7x7, clamp [-1, 1]",
       .h = 7,
       .w = 7,
       .c = 400,
       .o = 96,
       .kh = 5,
       .kw = 5,
       .pad = {2, 2, 2, 2},
       .lo = -1,
       .hi = 1},
      {.name = "depth cut within a tap, panels in pairs over several groups, a lone last row: 1x1, 8500->64, "
               "13x13, no bias",
       .h = 13,
       .w = 13,
       .c = 8500,
       .o = 64,
       .bias = false},
      {.name = "depth cut, panels in pairs, a short last tile: 3x3 pad 1, 1000->128, 10x10",
       .h = 10,
       .w = 10,
       .c = 1000,
       .o = 128,
       .kh = 3,
       .kw = 3,
       .pad = p1},
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
  // At most one 12-pixel tile against 256 KiB of weights or more: streamed.
  const bool streamed = pixels <= 12 && g.o * depth >= (uint64_t{1} << 16);
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
    // Within the rounding of a float sum of the window's products (the
    // deepest cases sum 9000 of them).
    const std::vector<double> scale = magnitude(g, d.x, d.filter, d.bias);
    CHECK(count_far_scaled(off, want, scale, 1e-6) == 0);
    CHECK(count_far_scaled(on, want, scale, 1e-6) == 0);
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
      {.name = "depth cut, panels in pairs: 3x3 pad 1, 1000->128, 7x7",
       .h = 7,
       .w = 7,
       .c = 1000,
       .o = 128,
       .kh = 3,
       .kw = 3,
       .pad = p1},
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

}  // namespace
}  // namespace etc
