// Winograd F(4x4, 3x3) and F(2x2, 3x3) in the XNNPACK backend's own
// convolution (native_winograd.h): across geometries (partial tiles,
// padding on any side or none, channel counts off the vector width,
// batches, several tile blocks, few tiles with panels shared out, NCHW
// boundaries) each stays within a small multiple of float rounding of a
// double-precision reference, scaled by each output's sum of |x * w|; it
// gives the same bits on 1, 2 and 3 threads, whether these share out
// tiles or panels; it applies the native epilogues
// (residual Add, swish, a slice of a concatenation); compile spec
// "winograd" chooses it and its variant, and "auto" follows the cost model.
#include <xnnpack.h>

#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/backends/xnnpack/blob_reader.h"
#include "runtime/backends/xnnpack/native_conv.h"
#include "runtime/backends/xnnpack/native_isa.h"
#include "runtime/backends/xnnpack/native_winograd.h"
#include "runtime/backends/xnnpack/stages.h"
#include "tests/support/native_conv_fixtures.h"
#include "tests/support/xnnpack_blob_builder.h"

namespace etc {
namespace {

using namespace testing::native_conv;
using testing::XnnpackBlobBuilder;
using xnnpack::fb::NodeType;

// Observed worst error under F(4x4, 3x3) is 5.1e-6 of the magnitude, most
// cases below 3e-6 (it rounds each input through transforms with
// coefficients up to 5 and 8); F(2x2, 3x3), whose coefficients are 1 and
// 1/2, stays within half of that.
constexpr double kTolerance = 1e-5;
// The cost model as calibrated: cores of two 512-bit FMA pipes.
constexpr size_t kWide = xnnpack::kFmaLanesWide;

const std::array<uint32_t, 4> kPad1 = {1, 1, 1, 1};

std::vector<Geometry> winograd_sweep() {
  return {
      {.name = "12x12 (whole tiles), pad 1, 32->64",
       .h = 12,
       .w = 12,
       .c = 32,
       .o = 64,
       .kh = 3,
       .kw = 3,
       .pad = kPad1},
      {.name = "13x10 (partial tiles), pad 1, 24->40 (masked channels both sides)",
       .h = 13,
       .w = 10,
       .c = 24,
       .o = 40,
       .kh = 3,
       .kw = 3,
       .pad = kPad1},
      {.name = "9x7 unpadded -> 7x5, 48->32, no bias",
       .h = 9,
       .w = 7,
       .c = 48,
       .o = 32,
       .kh = 3,
       .kw = 3,
       .bias = false},
      {.name = "10x11, pad top 0 right 2 bottom 1 left 1, 64->96, clamp [0, 6]",
       .h = 10,
       .w = 11,
       .c = 64,
       .o = 96,
       .kh = 3,
       .kw = 3,
       .pad = {0, 2, 1, 1},
       .lo = 0,
       .hi = 6},
      {.name = "batch 2, 6x6 pad 1, 20->16",
       .n = 2,
       .h = 6,
       .w = 6,
       .c = 20,
       .o = 16,
       .kh = 3,
       .kw = 3,
       .pad = kPad1},
      {.name = "28x28 pad 1, 64->64 (several tile blocks)",
       .h = 28,
       .w = 28,
       .c = 64,
       .o = 64,
       .kh = 3,
       .kw = 3,
       .pad = kPad1},
      {.name = "15x9 pad 1, 128->48, NCHW boundary",
       .h = 15,
       .w = 9,
       .c = 128,
       .o = 48,
       .kh = 3,
       .kw = 3,
       .pad = kPad1,
       .nchw = true},
      {.name = "1 input channel, 8x8 pad 1 -> 16",
       .h = 8,
       .w = 8,
       .c = 1,
       .o = 16,
       .kh = 3,
       .kw = 3,
       .pad = kPad1},
      {.name = "14x14 pad 1, 256->256 (at 2 threads under F(4x4) the panels shared out)",
       .h = 14,
       .w = 14,
       .c = 256,
       .o = 256,
       .kh = 3,
       .kw = 3,
       .pad = kPad1},
      {.name = "4x4 pad 1, 256->128 (one or four tiles: panels shared out under either variant)",
       .h = 4,
       .w = 4,
       .c = 256,
       .o = 128,
       .kh = 3,
       .kw = 3,
       .pad = kPad1},
      {.name = "7x7 pad 1, 160->80 (panels shared out, a 16-wide last one; partial tiles)",
       .h = 7,
       .w = 7,
       .c = 160,
       .o = 80,
       .kh = 3,
       .kw = 3,
       .pad = kPad1},
  };
}

// The Winograd variant (output tile side) the backend builds node 0 of
// `blob` as for `mode`: 0 where it builds it direct.
size_t built_tile(const std::vector<uint8_t>& blob, xnnpack::WinogradMode mode, size_t threads = 1) {
  auto view = xnnpack::read_xnnpack_blob(blob.data(), blob.size());
  REQUIRE(view.ok());
  const xnnpack::fb::Node& node = *view.get().graph->nodes()->Get(0);
  auto conv = xnnpack::compile_native_conv(view.get(), node, {mode, threads});
  REQUIRE(conv.ok());
  return xnnpack::winograd_tile_of(*conv.get());
}

bool builds_winograd(const std::vector<uint8_t>& blob, xnnpack::WinogradMode mode, size_t threads = 1) {
  return built_tile(blob, mode, threads) != 0;
}

TEST_CASE("xnnpack Winograd convolution stays within rounding of the reference across geometries",
          "[xnnpack]") {
  REQUIRE(xnnpack::native_convolution_available());
  const xnnpack::NativeIsa isa = GENERATE(from_range(native_isas()));
  INFO(isa_name(isa));
  const NativeIsaCap cap(isa);
  for (const size_t tile : {4, 2}) {
    INFO("F(" << tile << "x" << tile << ", 3x3)");
    const std::vector<Spec>& specs = tile == 4 ? kWinograd4x4 : kWinograd2x2;
    const auto mode = tile == 4 ? xnnpack::WinogradMode::kOn4x4 : xnnpack::WinogradMode::kOn2x2;
    const size_t points = xnnpack::winograd_points(tile);
    uint32_t seed = 900;
    size_t split = 0;
    for (const Geometry& g : winograd_sweep()) {
      INFO(g.name);
      const size_t tiles = g.n * ((g.oh() + tile - 1) / tile) * ((g.ow() + tile - 1) / tile);
      const bool splits = xnnpack::winograd_splits_panels(points, (g.c + 15) / 16 * 16,
                                                          xnnpack::native_panel_padded(g.o), tiles, 2);
      split += splits;
      const ConvData d = random_data(g, ++seed);
      const std::vector<uint8_t> blob = conv_blob(g, d);
      CHECK(built_tile(blob, mode) == tile);
      CHECK_FALSE(builds_winograd(blob, xnnpack::WinogradMode::kOff));
      const std::vector<float> want = reference(g, d.x, d.filter, d.bias);
      const std::vector<double> scale = magnitude(g, d.x, d.filter, d.bias);
      const std::vector<float> one = run_conv(g, d, specs, 1);
      const std::vector<float> two = run_conv(g, d, specs, 2);
      CHECK(count_far_scaled(one, want, scale, tile == 4 ? kTolerance : kTolerance / 2) == 0);
      // Each tile is computed alike whichever thread takes it, and whether
      // the threads share out tiles or panels (each transforming every
      // tile's input); 3 threads share the panels or their pairs unevenly.
      CHECK(count_different(one, two) == 0);
      if (splits) CHECK(count_different(one, run_conv(g, d, specs, 3)) == 0);
      // Not the direct kernel's bits, nor the other variant's: this one
      // really ran.
      CHECK(count_different(one, run_conv(g, d, kOn, 1)) > 0);
      CHECK(count_different(one, run_conv(g, d, tile == 4 ? kWinograd2x2 : kWinograd4x4, 1)) > 0);
    }
    // Under F(4x4): 10x11 64->96, 14x14 256->256, 4x4 256->128 and 7x7
    // 160->80 share panels out at 2 threads; under F(2x2), with more tiles
    // and a third of the weights, 4x4 256->128 alone.
    CHECK(split == (tile == 4 ? 4 : 1));
  }
}

// The scratch a convolution asks the delegate for (which its Winograd
// convolutions share): a part per thread for Winograd, none when direct.
size_t scratch_floats(const std::vector<uint8_t>& blob, xnnpack::WinogradMode mode, size_t threads) {
  auto view = xnnpack::read_xnnpack_blob(blob.data(), blob.size());
  REQUIRE(view.ok());
  auto conv = xnnpack::compile_native_conv(view.get(), *view.get().graph->nodes()->Get(0), {mode, threads});
  REQUIRE(conv.ok());
  return xnnpack::winograd_scratch_floats(*conv.get());
}

TEST_CASE("xnnpack Winograd convolutions ask for scratch, a part per thread; direct ones for none",
          "[xnnpack]") {
  const Geometry g{.h = 28, .w = 28, .c = 64, .o = 64, .kh = 3, .kw = 3, .pad = kPad1};
  const std::vector<uint8_t> blob = conv_blob(g, random_data(g, 5));
  CHECK(scratch_floats(blob, xnnpack::WinogradMode::kOff, 1) == 0);
  const size_t one = scratch_floats(blob, xnnpack::WinogradMode::kOn4x4, 1);
  // At least one tile's 36 transformed input and product vectors.
  CHECK(one >= 36 * (64 + 64));
  CHECK(scratch_floats(blob, xnnpack::WinogradMode::kOn4x4, 2) > one);
}

TEST_CASE("xnnpack Winograd applies to 3x3 stride-1 one-group convolutions only", "[xnnpack]") {
  const Geometry base{.h = 12, .w = 12, .c = 32, .o = 32, .kh = 3, .kw = 3, .pad = kPad1};
  CHECK(builds_winograd(conv_blob(base, random_data(base, 1)), xnnpack::WinogradMode::kOn));
  Geometry stride2 = base;
  stride2.sh = stride2.sw = 2;
  Geometry dilated = base;
  dilated.dh = dilated.dw = 2;
  dilated.pad = {2, 2, 2, 2};
  Geometry five = base;
  five.kh = five.kw = 5;
  five.pad = {2, 2, 2, 2};
  Geometry one_by_three = base;
  one_by_three.kh = 1;
  one_by_three.pad = {0, 1, 0, 1};
  for (const Geometry& g : {stride2, dilated, five, one_by_three}) {
    INFO("kernel " << g.kh << "x" << g.kw << " stride " << g.sh << " dilation " << g.dh);
    for (const auto mode :
         {xnnpack::WinogradMode::kOn, xnnpack::WinogradMode::kOn2x2, xnnpack::WinogradMode::kOn4x4})
      CHECK_FALSE(builds_winograd(conv_blob(g, random_data(g, 2)), mode));
  }
}

TEST_CASE("xnnpack Winograd auto follows the cost model", "[xnnpack]") {
  using xnnpack::WinogradShape;
  // resnet18's stride-1 3x3 layers at 224x224.
  const WinogradShape l1{1, 56, 56, 64, 56, 56, 64, 1, 1};
  const WinogradShape l2{1, 28, 28, 128, 28, 28, 128, 1, 1};
  const WinogradShape l4{1, 7, 7, 512, 7, 7, 512, 1, 1};
  for (size_t threads : {1, 2}) {
    INFO(threads << " threads");
    CHECK(xnnpack::winograd_pays(l1, threads, kWide));
    CHECK(xnnpack::winograd_pays(l2, threads, kWide));
    // Four tiles: the transformed weights (37.7 MB) would stream for 49
    // pixels.
    CHECK_FALSE(xnnpack::winograd_pays(l4, threads, kWide));
  }
  // Few input or output channels: the transforms dominate.
  CHECK_FALSE(xnnpack::winograd_pays({1, 56, 56, 8, 56, 56, 64, 1, 1}, 1, kWide));
  CHECK_FALSE(xnnpack::winograd_pays({1, 56, 56, 64, 56, 56, 8, 1, 1}, 1, kWide));
  // 16 input channels: googlenet's 16->32 layer at 28x28 stays direct (its
  // GEMM calls cost as much as their arithmetic), squeezenet's 16->64 at
  // 55x55 gains.
  for (size_t threads : {1, 2}) {
    CHECK_FALSE(xnnpack::winograd_pays({1, 28, 28, 16, 28, 28, 32, 1, 1}, threads, kWide));
    CHECK(xnnpack::winograd_pays({1, 55, 55, 16, 55, 55, 64, 1, 1}, threads, kWide));
  }
  // And the backend follows it under "auto".
  const Geometry big{.h = 28, .w = 28, .c = 64, .o = 64, .kh = 3, .kw = 3, .pad = kPad1};
  CHECK(built_tile(conv_blob(big, random_data(big, 3)), xnnpack::WinogradMode::kAuto) == 4);
  const Geometry thin{.h = 28, .w = 28, .c = 8, .o = 64, .kh = 3, .kw = 3, .pad = kPad1};
  CHECK_FALSE(builds_winograd(conv_blob(thin, random_data(thin, 4)), xnnpack::WinogradMode::kAuto));
}

TEST_CASE("xnnpack Winograd pays on more layers where a core retires half the multiply-adds", "[xnnpack]") {
  using xnnpack::WinogradShape;
  constexpr size_t kNarrow = xnnpack::kFmaLanesNarrow;
  // googlenet's 16->32 layer at 28x28 and 32->64 at 14x14 (F(4x4)): the
  // GEMM calls' and tiles' fixed costs outweigh the arithmetic saved on
  // two 512-bit pipes, not where the arithmetic takes twice the cycles
  // (runs of each with a 1x1 layer back 0.56-0.70x on a Zen 4 core).
  for (WinogradShape s :
       {WinogradShape{1, 28, 28, 16, 28, 28, 32, 1, 1}, WinogradShape{1, 14, 14, 32, 14, 14, 64, 1, 1}}) {
    INFO(s.in_c << "->" << s.out_c << " at " << s.out_h);
    REQUIRE(xnnpack::winograd_tile(s) == 4);
    s.tile = 4;
    CHECK_FALSE(xnnpack::winograd_pays(s, 1, kWide));
    CHECK(xnnpack::winograd_pays(s, 1, kNarrow));
  }
  // resnet's 7x7x512 layers under F(2x2) at 1 thread (~0.76x direct on a
  // Zen 4 core); at 2 threads each thread streams half the weights at half
  // the rate, and they stay direct.
  WinogradShape r7{1, 7, 7, 512, 7, 7, 512, 1, 1};
  r7.tile = 2;
  CHECK_FALSE(xnnpack::winograd_pays(r7, 1, kWide));
  CHECK(xnnpack::winograd_pays(r7, 1, kNarrow));
  CHECK_FALSE(xnnpack::winograd_pays(r7, 2, kNarrow));
  // The rate of the CPU the runtime plans for follows the instruction set
  // the kernels run on: AVX2 has two 256-bit pipes.
  xnnpack::cap_native_isa(xnnpack::NativeIsa::kAvx2);
  const size_t avx2_lanes = xnnpack::core_fma_lanes();
  xnnpack::cap_native_isa(xnnpack::NativeIsa::kAvx512);
  CHECK(avx2_lanes == kNarrow);
}

TEST_CASE("xnnpack Winograd auto takes F(2x2, 3x3) where F(4x4)'s weights would stream for few tiles",
          "[xnnpack]") {
  using xnnpack::WinogradShape;
  // resnet's and googlenet's layers at 224x224.
  const WinogradShape r56{1, 56, 56, 64, 56, 56, 64, 1, 1};
  const WinogradShape r28{1, 28, 28, 128, 28, 28, 128, 1, 1};
  const WinogradShape r14{1, 14, 14, 256, 14, 14, 256, 1, 1};
  const WinogradShape g14{1, 14, 14, 112, 14, 14, 224, 1, 1};
  const WinogradShape g28{1, 28, 28, 128, 28, 28, 192, 1, 1};
  CHECK(xnnpack::winograd_tile(r56) == 4);
  CHECK(xnnpack::winograd_tile(r28) == 4);
  CHECK(xnnpack::winograd_tile(g28) == 4);
  // 16 tiles of F(4x4) against 9.4 MB of its weights; 49 of F(2x2) against
  // 4.2 MB.
  CHECK(xnnpack::winograd_tile(r14) == 2);
  CHECK(xnnpack::winograd_tile(g14) == 2);
  for (size_t threads : {1, 2}) {
    INFO(threads << " threads");
    for (WinogradShape s : {r14, g14}) {
      s.tile = 2;
      CHECK(xnnpack::winograd_pays(s, threads, kWide));
    }
    // resnet's 7x7x512 layers stay direct under either variant.
    for (size_t tile : {2, 4}) {
      WinogradShape s{1, 7, 7, 512, 7, 7, 512, 1, 1};
      s.tile = tile;
      CHECK_FALSE(xnnpack::winograd_pays(s, threads, kWide));
    }
  }
  // The backend takes it under "auto", and the compile spec's variant under
  // "2x2" and "4x4".
  const Geometry g{.h = 14, .w = 14, .c = 256, .o = 256, .kh = 3, .kw = 3, .pad = kPad1};
  const std::vector<uint8_t> blob = conv_blob(g, random_data(g, 6));
  CHECK(built_tile(blob, xnnpack::WinogradMode::kAuto) == 2);
  CHECK(built_tile(blob, xnnpack::WinogradMode::kAuto, 2) == 2);
  CHECK(built_tile(blob, xnnpack::WinogradMode::kOn) == 2);
  CHECK(built_tile(blob, xnnpack::WinogradMode::kOn4x4) == 4);
  // A filter transformed ahead of time sets the variant under "auto" and
  // "on", not under a spec that names the other.
  const std::vector<uint8_t> ahead4 = conv_blob(g, random_data(g, 6), 0, false, 4);
  CHECK(built_tile(ahead4, xnnpack::WinogradMode::kOn) == 4);
  CHECK(built_tile(ahead4, xnnpack::WinogradMode::kOn2x2) == 2);
}

TEST_CASE("xnnpack compile spec winograd accepts auto, on, off, 2x2 and 4x4 and refuses anything else",
          "[xnnpack]") {
  const Geometry g{.h = 12, .w = 12, .c = 32, .o = 32, .kh = 3, .kw = 3, .pad = kPad1};
  const std::vector<uint8_t> blob = conv_blob(g, random_data(g, 5));
  for (const std::string value : {"auto", "on", "off", "2x2", "4x4"}) {
    SpecRunner runner;
    CHECK(runner.init(blob, {{"winograd", value}}).ok());
  }
  for (const std::string value : {"yes", "On", "", "2", "3x3"}) {
    INFO("value '" << value << "'");
    SpecRunner runner;
    const Status s = runner.init(blob, {{"winograd", value}});
    CHECK(s.error() == Error::InvalidArgument);
    CHECK_THAT(s.message(), Catch::Contains("winograd"));
    CHECK_THAT(s.message(), Catch::Contains("'" + value + "'"));
  }
}

double swish_ref(double v) { return v / (1.0 + std::exp(-v)); }

TEST_CASE("xnnpack Winograd convolution applies the residual, swish and concatenation epilogues",
          "[xnnpack]") {
  REQUIRE(xnnpack::native_convolution_available());
  const xnnpack::NativeIsa isa = GENERATE(from_range(native_isas()));
  INFO(isa_name(isa));
  const NativeIsaCap cap(isa);
  // x -> Clamp [-1, 1] -> r; r -> conv A (3x3 pad 1, 48->48, clamp [-2, 2])
  // -> t; Add(r, t) clamped to [0, inf) -> y0 (resnet's block).
  // x -> conv B (3x3 pad 1, 48->32) -> u; Sigmoid(u) -> s; Multiply(u, s)
  // -> y1 (swish folded in).
  // x -> conv C (3x3 pad 1, 48->16) -> c; Concatenate(c, x) -> cat (conv C
  // writes channels 0..15 of cat in place); Clamp [-100, 100] -> y2.
  // The three share one scratch, each run after another wrote it.
  const Geometry ga{.h = 9, .w = 10, .c = 48, .o = 48, .kh = 3, .kw = 3, .pad = kPad1, .lo = -2, .hi = 2};
  const Geometry gb{.h = 9, .w = 10, .c = 48, .o = 32, .kh = 3, .kw = 3, .pad = kPad1};
  const Geometry gc{.h = 9, .w = 10, .c = 48, .o = 16, .kh = 3, .kw = 3, .pad = kPad1};
  const ConvData da = random_data(ga, 11), db = random_data(gb, 12), dc = random_data(gc, 13);
  XnnpackBlobBuilder b;
  const uint32_t x = b.input({1, 9, 10, 48}, 0);
  const uint32_t r = b.tensor({1, 9, 10, 48});
  const uint32_t t = b.tensor({1, 9, 10, 48});
  const uint32_t u = b.tensor({1, 9, 10, 32});
  const uint32_t s = b.tensor({1, 9, 10, 32});
  const uint32_t c = b.tensor({1, 9, 10, 16});
  const uint32_t cat = b.tensor({1, 9, 10, 64});
  const uint32_t y0 = b.output({1, 9, 10, 48}, 0);
  const uint32_t y1 = b.output({1, 9, 10, 32}, 1);
  const uint32_t y2 = b.output({1, 9, 10, 64}, 2);
  auto& clamp = b.node(NodeType::Clamp, {x}, {r});
  clamp.output_min = -1.0f;
  clamp.output_max = 1.0f;
  set_window(b.node(NodeType::Convolution2d,
                    {r, b.constant({48, 3, 3, 48}, da.filter), b.constant({48}, da.bias)}, {t}),
             ga);
  b.node(NodeType::Add, {r, t}, {y0}).output_min = 0.0f;
  set_window(b.node(NodeType::Convolution2d,
                    {x, b.constant({32, 3, 3, 48}, db.filter), b.constant({32}, db.bias)}, {u}),
             gb);
  b.node(NodeType::Sigmoid, {u}, {s});
  b.node(NodeType::Multiply, {u, s}, {y1});
  set_window(b.node(NodeType::Convolution2d,
                    {x, b.constant({16, 3, 3, 48}, dc.filter), b.constant({16}, dc.bias)}, {c}),
             gc);
  b.node(NodeType::Concatenate, {c, x}, {cat}).axis = 3;
  auto& bound = b.node(NodeType::Clamp, {cat}, {y2});
  bound.output_min = -100.0f;
  bound.output_max = 100.0f;
  const std::vector<uint8_t> blob = b.build();
  {
    auto view = xnnpack::read_xnnpack_blob(blob.data(), blob.size());
    REQUIRE(view.ok());
    const xnnpack::StagePlan plan = xnnpack::plan_stages(view.get(), xnnpack::NativeConvolutions::kAll);
    CHECK(plan.writes_into[1].residual == r);
    CHECK(plan.writes_into[3].activation == xnnpack::ConvActivation::kSwish);
    CHECK(plan.writes_into[6].active);
    CHECK(plan.writes_into[6].tensor == cat);
  }

  std::vector<float> r_ref = da.x;
  for (float& v : r_ref) v = std::min(std::max(v, -1.0f), 1.0f);
  const std::vector<float> t_ref = reference(ga, r_ref, da.filter, da.bias);
  const std::vector<double> t_scale = magnitude(ga, r_ref, da.filter, da.bias);
  std::vector<float> want0(t_ref.size());
  for (size_t i = 0; i < want0.size(); ++i) want0[i] = std::max(r_ref[i] + t_ref[i], 0.0f);
  const std::vector<float> u_ref = reference(gb, da.x, db.filter, db.bias);
  const std::vector<double> u_scale = magnitude(gb, da.x, db.filter, db.bias);
  std::vector<float> want1(u_ref.size());
  for (size_t i = 0; i < want1.size(); ++i) want1[i] = static_cast<float>(swish_ref(u_ref[i]));
  const std::vector<float> c_ref = reference(gc, da.x, dc.filter, dc.bias);
  const std::vector<double> c_scale = magnitude(gc, da.x, dc.filter, dc.bias);
  std::vector<float> want2;
  std::vector<double> scale2;
  for (size_t p = 0; p < 90; ++p) {
    for (size_t o = 0; o < 16; ++o) want2.push_back(c_ref[p * 16 + o]), scale2.push_back(c_scale[p * 16 + o]);
    // Copied: exact up to the floor every element gets.
    for (size_t o = 0; o < 48; ++o) want2.push_back(da.x[p * 48 + o]), scale2.push_back(1.0);
  }

  std::vector<std::vector<float>> results;
  for (int threads : {1, 2}) {
    INFO(threads << " threads");
    SpecRunner runner(threads);
    REQUIRE(runner.init(blob, kWinograd).ok());
    std::vector<float> xin = da.x, out0(90 * 48, -7.0f), out1(90 * 32, -7.0f), out2(90 * 64, -7.0f);
    for (int run = 0; run < 2; ++run)
      REQUIRE(runner
                  .execute({{Shape{1, 9, 10, 48}, xin.data()},
                            {Shape{1, 9, 10, 48}, out0.data()},
                            {Shape{1, 9, 10, 32}, out1.data()},
                            {Shape{1, 9, 10, 64}, out2.data()}})
                  .ok());
    // The clamp, the residual and swish (slope at most 1.1) do not enlarge
    // the convolution's error.
    CHECK(count_far_scaled(out0, want0, t_scale, kTolerance) == 0);
    CHECK(count_far_scaled(out1, want1, u_scale, 2 * kTolerance) == 0);
    CHECK(count_far_scaled(out2, want2, scale2, kTolerance) == 0);
    results.insert(results.end(), {out0, out1, out2});
  }
  for (size_t k = 0; k < 3; ++k) CHECK(count_different(results[k], results[k + 3]) == 0);
}

}  // namespace
}  // namespace etc
