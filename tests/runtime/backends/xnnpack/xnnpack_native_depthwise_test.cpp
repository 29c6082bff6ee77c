// The backend's own depthwise convolution (native_depthwise.h) takes every
// depthwise convolution with a depth multiplier of 1 on a CPU with AVX-512F
// under native_convolution=auto and =on, none under =off, whatever follows
// it; and it matches a double-precision reference over windows of 3, 5 and
// 7 (the strip path of eight pixels), strides 1 and 2, dilation (the
// four-pixel and per-pixel paths), paddings that differ by side, channel
// counts that are not a multiple of 16, rows shorter than a strip or than
// the window, strips past both ends of a row, several
// images and thread counts, with a clamp, a hardswish or a swish folded in,
// or a residual Add.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "runtime/backends/xnnpack/blob_reader.h"
#include "runtime/backends/xnnpack/native_depthwise.h"
#include "runtime/backends/xnnpack/native_isa.h"
#include "runtime/backends/xnnpack/stages.h"
#include "tests/support/native_conv_fixtures.h"
#include "tests/support/xnnpack_blob_builder.h"

namespace etc {
namespace {

using namespace testing::native_conv;
using testing::XnnpackBlobBuilder;
using xnnpack::fb::NodeType;

enum class After { kNone, kHardSwish, kSwish, kResidual };

struct Case {
  Geometry g;  // groups == c == o
  After after = After::kNone;
};

Geometry depthwise(const char* name, uint64_t n, uint64_t h, uint64_t w, uint64_t c, uint32_t k, uint32_t s,
                   std::array<uint32_t, 4> pad, uint32_t d = 1) {
  Geometry g;
  g.name = name;
  g.n = n, g.h = h, g.w = w, g.c = c, g.o = c, g.groups = static_cast<uint32_t>(c);
  g.kh = g.kw = k, g.sh = g.sw = s, g.dh = g.dw = d;
  g.pad = pad;
  return g;
}

// input 0 (and, for a residual, input 1) -> depthwise [-> activation or
// Add] -> output 0, NHWC at the boundary.
std::vector<uint8_t> depthwise_blob(const Case& q, const ConvData& d) {
  const Geometry& g = q.g;
  XnnpackBlobBuilder b;
  const uint32_t x = b.input({g.n, g.h, g.w, g.c}, 0);
  const std::vector<uint64_t> out = {g.n, g.oh(), g.ow(), g.o};
  const uint32_t r = q.after == After::kResidual ? b.input(out, 1) : 0;
  const uint32_t y = b.output(out, 0);
  const uint32_t t = q.after == After::kNone ? y : b.tensor(out);
  // The blob's depthwise filter is [1, kh, kw, c]; the fixture's is OHWI.
  const size_t taps = size_t{g.kh} * g.kw;
  std::vector<float> filter(taps * g.c);
  for (uint64_t ch = 0; ch < g.c; ++ch)
    for (size_t tap = 0; tap < taps; ++tap) filter[tap * g.c + ch] = d.filter[ch * taps + tap];
  auto& node = b.node(NodeType::DepthwiseConvolution2d,
                      {x, b.constant({1, g.kh, g.kw, g.c}, filter), b.constant({g.c}, d.bias)}, {t});
  set_window(node, g);
  node.depth_multiplier = 1;
  node.input_channels = static_cast<uint32_t>(g.c);
  switch (q.after) {
    case After::kNone: break;
    case After::kHardSwish: b.node(NodeType::HardSwish, {t}, {y}); break;
    case After::kSwish: {
      const uint32_t s = b.tensor(out);
      b.node(NodeType::Sigmoid, {t}, {s});
      b.node(NodeType::Multiply, {t, s}, {y});
      break;
    }
    case After::kResidual: b.node(NodeType::Add, {t, r}, {y}); break;
  }
  return b.build();
}

std::vector<float> case_reference(const Case& q, const ConvData& d, const std::vector<float>& residual) {
  std::vector<float> y = reference(q.g, d.x, d.filter, d.bias);
  for (size_t i = 0; i < y.size(); ++i) {
    const double v = y[i];
    switch (q.after) {
      case After::kNone: break;
      case After::kHardSwish:
        y[i] = static_cast<float>(v * std::min(std::max(v + 3.0, 0.0), 6.0) / 6.0);
        break;
      case After::kSwish: y[i] = static_cast<float>(v / (1.0 + std::exp(-v))); break;
      case After::kResidual: y[i] = static_cast<float>(v + double(residual[i])); break;
    }
  }
  return y;
}

// Whether plan_stages in `mode` runs the depthwise convolution (node 0) in
// a native stage, and folds the nodes after it there.
bool native_in(const std::vector<uint8_t>& blob, xnnpack::NativeConvolutions mode) {
  auto view = xnnpack::read_xnnpack_blob(blob.data(), blob.size());
  REQUIRE(view.ok());
  const xnnpack::StagePlan plan = xnnpack::plan_stages(view.get(), mode);
  for (const xnnpack::Stage& stage : plan.stages)
    if (stage.first_node == 0) return stage.native;
  return false;
}

std::vector<Case> cases() {
  std::vector<Case> c;
  // Strips of eight, then four, then single pixels at the right edge.
  c.push_back({depthwise("3x3 s1, 32 channels", 1, 9, 30, 32, 3, 1, {1, 1, 1, 1})});
  c.push_back({depthwise("3x3 s2, 24 channels, two images", 2, 11, 37, 24, 3, 2, {1, 1, 1, 1})});
  c.push_back({depthwise("5x5 s1, 72 channels, uneven padding", 1, 8, 27, 72, 5, 1, {2, 1, 2, 3})});
  c.push_back({depthwise("5x5 s2, 40 channels", 1, 13, 29, 40, 5, 2, {2, 2, 2, 2})});
  c.push_back({depthwise("7x7 s1, 16 channels", 1, 10, 25, 16, 7, 1, {3, 3, 3, 3})});
  c.push_back({depthwise("7x7 s2, 8 channels, no padding", 1, 15, 40, 8, 7, 2, {0, 0, 0, 0})});
  // No strip: dilated, a window of 4, rows shorter than eight pixels.
  c.push_back({depthwise("3x3 dilation 2, 48 channels", 1, 12, 26, 48, 3, 1, {2, 2, 2, 2}, 2)});
  c.push_back({depthwise("4x4 s1, 20 channels", 1, 9, 21, 20, 4, 1, {1, 2, 2, 1})});
  c.push_back({depthwise("3x3 s1, 6 pixels wide", 1, 7, 6, 64, 3, 1, {1, 1, 1, 1})});
  // Maps of few columns, where strips reach past both ends of the row:
  // efficientnet's 5x5 layers at 7x7 and 14x14, a window wider than the
  // map, a strided one whose last strip holds a pixel or two.
  c.push_back({depthwise("5x5 s1 at 7x7, 144 channels", 1, 7, 7, 144, 5, 1, {2, 2, 2, 2}), After::kSwish});
  c.push_back({depthwise("5x5 s1 at 14x14, 40 channels", 1, 14, 14, 40, 5, 1, {2, 2, 2, 2})});
  c.push_back({depthwise("7x7 s1 at 5x5, 24 channels", 1, 5, 5, 24, 7, 1, {3, 3, 3, 3})});
  c.push_back({depthwise("5x5 s2 at 19 wide, 48 channels, a residual", 1, 9, 19, 48, 5, 2, {2, 2, 2, 2}),
               After::kResidual});
  c.push_back({depthwise("3x3 s2 at 3x3, 32 channels", 2, 3, 3, 32, 3, 2, {1, 1, 1, 1})});
  Case clamp{depthwise("3x3 s1 clamped to [0, 6], 96 channels", 1, 10, 19, 96, 3, 1, {1, 1, 1, 1})};
  clamp.g.lo = 0.0f, clamp.g.hi = 6.0f;
  c.push_back(clamp);
  c.push_back({depthwise("5x5 s1 then hardswish, 120 channels", 1, 8, 22, 120, 5, 1, {2, 2, 2, 2}),
               After::kHardSwish});
  c.push_back(
      {depthwise("3x3 s2 then swish, 56 channels", 1, 14, 33, 56, 3, 2, {0, 1, 1, 0}), After::kSwish});
  c.push_back(
      {depthwise("3x3 s1 plus a residual, 40 channels", 2, 6, 28, 40, 3, 1, {1, 1, 1, 1}), After::kResidual});
  return c;
}

TEST_CASE("xnnpack runs depthwise convolutions on the backend's kernel and matches the reference",
          "[xnnpack]") {
  for (const Case& q : cases()) {
    INFO(q.g.name);
    const ConvData d = random_data(q.g, 61);
    std::mt19937 rng(62);
    const std::vector<float> residual =
        q.after == After::kResidual ? testing::random_floats(q.g.out_numel(), rng) : std::vector<float>();
    const std::vector<uint8_t> blob = depthwise_blob(q, d);
    const bool avx512 = xnnpack::native_avx512_available();
    CHECK(native_in(blob, xnnpack::NativeConvolutions::kAuto) == avx512);
    CHECK(native_in(blob, xnnpack::NativeConvolutions::kAll) == avx512);
    CHECK_FALSE(native_in(blob, xnnpack::NativeConvolutions::kOff));

    const std::vector<float> want = case_reference(q, d, residual);
    const Geometry& g = q.g;
    for (const auto& [mode, threads] :
         std::vector<std::pair<std::string, int>>{{"auto", 1}, {"auto", 2}, {"on", 3}, {"off", 1}}) {
      INFO("native_convolution=" << mode << ", " << threads << " threads");
      SpecRunner runner(threads);
      REQUIRE(runner.init(blob, {{"native_convolution", mode}}).ok());
      for (int run = 0; run < 2; ++run) {
        std::vector<float> x = d.x, r = residual, y(want.size(), -7.0f);
        std::vector<SpecRunner::Arg> args = {{shape_of({g.n, g.h, g.w, g.c}), x.data()}};
        if (q.after == After::kResidual) args.push_back({shape_of({g.n, g.oh(), g.ow(), g.o}), r.data()});
        args.push_back({shape_of({g.n, g.oh(), g.ow(), g.o}), y.data()});
        REQUIRE(runner.execute(args).ok());
        CHECK(count_far(y, want, 1e-4) == 0);
      }
    }
  }
}

}  // namespace
}  // namespace etc
