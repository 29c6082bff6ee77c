// Which convolutions the XNNPACK backend runs on its own kernel: runs_natively
// ("auto", the default), can_run_natively ("on") and plan_stages pick the
// convolutions they document, case by case at each boundary; the compile spec
// native_convolution takes auto, on and off and refuses anything else; a
// convolution too large to index is refused without allocating.
#include <xnnpack.h>

#include <array>
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/backends/xnnpack/native_conv.h"
#include "runtime/backends/xnnpack/native_plan.h"
#include "tests/support/native_conv_fixtures.h"
#include "tests/support/xnnpack_blob_builder.h"

namespace etc {
namespace {

using namespace testing::native_conv;
using testing::XnnpackBlobBuilder;
using xnnpack::fb::NodeType;

TEST_CASE("xnnpack runs_natively, can_run_natively and plan_stages pick the convolutions they document",
          "[xnnpack]") {
  // native: can_run_natively (one group, no flags; spec "on").
  // auto_native: runs_natively (spec "auto"): also at most 1/4 of the
  // panel lanes idle (32-channel panels, the last one 16 wide when it has at
  // most 16 channels), and >= 48 output pixels and depth (taps x input
  // channels) >= 32 (16 before a swish or hardswish: the section below), or
  // <= 12 pixels and >= 256 KiB of weights. On a CPU with AVX2 and not
  // AVX-512 a depth of 16 suffices everywhere (native_plan.h GemmRival):
  // `avx2_auto` marks the cases that then run natively too.
  // Each case misses at most one of those.
  const std::array<uint32_t, 4> p1 = {1, 1, 1, 1};
  struct Case {
    Geometry g;
    uint32_t flags = 0;
    bool avx2_auto = false;
  };
  const xnnpack::NativeIsa isa = GENERATE(from_range(native_isas()));
  INFO(isa_name(isa));
  const NativeIsaCap cap(isa);
  const bool avx2 = isa == xnnpack::NativeIsa::kAvx2;
  const std::vector<Case> cases = {
      {{.name = "2 groups: neither",
        .h = 12,
        .w = 12,
        .c = 256,
        .o = 64,
        .kh = 3,
        .kw = 3,
        .pad = p1,
        .groups = 2,
        .native = false}},
      {{.name = "TensorFlow SAME padding flag: neither",
        .h = 12,
        .w = 12,
        .c = 128,
        .o = 64,
        .kh = 3,
        .kw = 3,
        .pad = p1,
        .native = false},
       XNN_FLAG_TENSORFLOW_SAME_PADDING},
      {{.name = "16 output channels (one 16-wide panel): auto",
        .h = 12,
        .w = 12,
        .c = 4096,
        .o = 16,
        .auto_native = true}},
      {{.name = "48 output channels (a 32-wide and a 16-wide panel): auto",
        .h = 12,
        .w = 12,
        .c = 160,
        .o = 48,
        .kh = 3,
        .kw = 3,
        .pad = p1,
        .auto_native = true}},
      {{.name = "20 output channels (one 32-wide panel, waste 12/32): not auto",
        .h = 12,
        .w = 12,
        .c = 160,
        .o = 20,
        .kh = 3,
        .kw = 3,
        .pad = p1}},
      {{.name = "80 output channels (96 padded, waste 1/6): auto",
        .h = 12,
        .w = 12,
        .c = 96,
        .o = 80,
        .kh = 3,
        .kw = 3,
        .pad = p1,
        .auto_native = true}},
      {{.name = "100 output channels (96 + a 16-wide panel, waste 12/112): auto",
        .h = 12,
        .w = 12,
        .c = 768,
        .o = 100,
        .auto_native = true}},
      {{.name = "120 output channels (96 + a 32-wide panel, waste 8/128): auto",
        .h = 12,
        .w = 12,
        .c = 768,
        .o = 120,
        .auto_native = true}},
      {{.name = "116 output channels (96 + a 32-wide panel, waste 12/128): auto",
        .h = 12,
        .w = 12,
        .c = 768,
        .o = 116,
        .auto_native = true}},
      {{.name = "84 output channels (64 + a 32-wide panel, waste 12/96 < 1/4): auto",
        .h = 12,
        .w = 12,
        .c = 768,
        .o = 84,
        .auto_native = true}},
      {{.name = "52 output channels (32 + a 32-wide panel, waste 12/64 < 1/4): auto",
        .h = 12,
        .w = 12,
        .c = 768,
        .o = 52,
        .auto_native = true}},
      {{.name = "24 output channels (32 padded, waste 8/32 = 1/4): auto",
        .h = 12,
        .w = 12,
        .c = 144,
        .o = 24,
        .auto_native = true}},
      {{.name = "23 output channels (32 padded, waste 9/32 > 1/4): not auto",
        .h = 12,
        .w = 12,
        .c = 144,
        .o = 23}},
      {{.name = "112 output channels (128 padded, waste 1/8): auto",
        .h = 12,
        .w = 12,
        .c = 576,
        .o = 112,
        .auto_native = true}},
      {{.name = "28 output channels (32 padded, waste 1/8): auto",
        .h = 12,
        .w = 12,
        .c = 256,
        .o = 28,
        .kh = 3,
        .kw = 3,
        .pad = p1,
        .auto_native = true}},
      {{.name = "64 output channels, 1x1 spatial output, 36 MiB of weights: auto (reading them is the work)",
        .h = 3,
        .w = 3,
        .c = 16384,
        .o = 64,
        .kh = 3,
        .kw = 3,
        .auto_native = true}},
      {{.name = "1x1 spatial output, 64 x 1023 weights (just under 256 KiB): not auto",
        .h = 1,
        .w = 1,
        .c = 1023,
        .o = 64}},
      {{.name = "1x1 spatial output, 64 x 1024 weights (256 KiB): auto",
        .h = 1,
        .w = 1,
        .c = 1024,
        .o = 64,
        .auto_native = true}},
      {{.name = "12 pixels (one row tile), 256 KiB of weights: auto",
        .h = 3,
        .w = 4,
        .c = 1024,
        .o = 64,
        .auto_native = true}},
      {{.name = "13 pixels, 256 KiB of weights: not auto", .h = 1, .w = 13, .c = 1024, .o = 64}},
      {{.name = "1x1 spatial output, 256 KiB of weights in 20 output channels (waste 12/32): not auto",
        .h = 1,
        .w = 1,
        .c = 3277,
        .o = 20}},
      {{.name = "64 output channels, 7x7 output (49 pixels): auto",
        .h = 7,
        .w = 7,
        .c = 320,
        .o = 64,
        .kh = 3,
        .kw = 3,
        .pad = p1,
        .auto_native = true}},
      {{.name = "64 output channels, 47 pixels (1x47): not auto",
        .h = 1,
        .w = 47,
        .c = 160,
        .o = 64,
        .kh = 1,
        .kw = 3,
        .pad = {0, 1, 0, 1}}},
      {{.name = "64 output channels, 48 pixels (6x8): auto",
        .h = 6,
        .w = 8,
        .c = 160,
        .o = 64,
        .kh = 3,
        .kw = 3,
        .pad = p1,
        .auto_native = true}},
      {{.name = "batch 2 of 4x6 (48 pixels): auto",
        .n = 2,
        .h = 4,
        .w = 6,
        .c = 160,
        .o = 64,
        .kh = 3,
        .kw = 3,
        .pad = p1,
        .auto_native = true}},
      {{.name = "depth 31 (1x1, 31 input channels), 4096 pixels: not auto (auto with AVX2)",
        .h = 64,
        .w = 64,
        .c = 31,
        .o = 64},
       0,
       true},
      {{.name = "depth 32 (1x1, 32 input channels), 4096 pixels: auto",
        .h = 64,
        .w = 64,
        .c = 32,
        .o = 64,
        .auto_native = true}},
      {{.name = "depth 27 (3x3 kernel, 3 input channels, zero-bordered copy): auto",
        .h = 64,
        .w = 64,
        .c = 3,
        .o = 64,
        .kh = 3,
        .kw = 3,
        .pad = p1,
        .auto_native = true}},
      {{.name = "depth 12 (2x2 kernel, 3 input channels, zero-bordered copy): not auto",
        .h = 64,
        .w = 64,
        .c = 3,
        .o = 64,
        .kh = 2,
        .kw = 2}},
      {{.name =
            "depth 18 (3x3 kernel, 2 input channels, column dilation 2: no copy): not auto (auto with AVX2)",
        .h = 64,
        .w = 64,
        .c = 2,
        .o = 64,
        .kh = 3,
        .kw = 3,
        .dw = 2},
       0,
       true},
      {{.name = "a small convolution (48 pixels x depth 32 x 32 channels): auto, no minimum of work",
        .h = 6,
        .w = 8,
        .c = 32,
        .o = 32,
        .auto_native = true}},
  };
  for (const Case& c : cases) {
    INFO(c.g.name);
    check_classification(conv_blob(c.g, random_data(c.g, 500), c.flags), c.g.native,
                         c.g.auto_native || (avx2 && c.avx2_auto));
  }
  SECTION("a depth of 16 suffices before a swish or hardswish the epilogue computes") {
    // 1x1, 16 -> 64 at 64x64 (depth 16) -> t, then what `after` says -> y.
    const Geometry g{.h = 64, .w = 64, .c = 16, .o = 64};
    const ConvData d = random_data(g, 501);
    for (const std::string after : {"relu", "hardswish", "swish", "hardswish, t also clamped"}) {
      INFO(after);
      XnnpackBlobBuilder b;
      const uint32_t x = b.input({1, 64, 64, 16}, 0);
      const uint32_t t = b.tensor({1, 64, 64, 64});
      const uint32_t y = b.output({1, 64, 64, 64}, 0);
      set_window(b.node(NodeType::Convolution2d,
                        {x, b.constant({64, 1, 1, 16}, d.filter), b.constant({64}, d.bias)}, {t}),
                 g);
      if (after == "relu") {
        b.node(NodeType::Clamp, {t}, {y}).output_min = 0.0f;
      } else if (after == "swish") {
        const uint32_t s = b.tensor({1, 64, 64, 64});
        b.node(NodeType::Sigmoid, {t}, {s});
        b.node(NodeType::Multiply, {t, s}, {y});
      } else {
        b.node(NodeType::HardSwish, {t}, {y});
        if (after != "hardswish")
          b.node(NodeType::Clamp, {t}, {b.output({1, 64, 64, 64}, 1)}).output_min = 0.0f;
      }
      const std::vector<uint8_t> blob = b.build();
      auto view = xnnpack::read_xnnpack_blob(blob.data(), blob.size());
      REQUIRE(view.ok());
      const xnnpack::StagePlan plan = xnnpack::plan_stages(view.get(), xnnpack::NativeConvolutions::kAuto);
      const bool folds = after == "hardswish" || after == "swish";
      CHECK(plan.stages[0].native == (folds || avx2));
      CHECK(plan.writes_into[0].active == folds);
    }
  }
  SECTION("a depthwise convolution is not the GEMM's, but runs on the depthwise kernel with AVX-512F") {
    XnnpackBlobBuilder b;
    const uint32_t x = b.input({1, 32, 32, 64}, 0);
    const uint32_t y = b.output({1, 32, 32, 64}, 0);
    auto& node = b.node(NodeType::DepthwiseConvolution2d,
                        {x, b.constant({1, 3, 3, 64}, std::vector<float>(576, 0.5f))}, {y});
    node.padding = {1, 1, 1, 1};
    node.kernel = {3, 3};
    node.input_channels = 64;
    node.depth_multiplier = 1;
    const Classification c = classify(b.build());
    CHECK_FALSE(c.can_run);
    CHECK_FALSE(c.runs);
    CHECK(c.all_stage == xnnpack::native_avx512_available());
    CHECK(c.auto_stage == xnnpack::native_avx512_available());
  }
}

TEST_CASE("xnnpack native_depth_split cuts reductions whose panel outgrows a quarter of the cache",
          "[xnnpack]") {
  using xnnpack::native_depth_split;
  constexpr size_t kKiB = 1024;
  // A panel step is 32 floats (128 bytes): 512 KiB of L2 leaves 1024 steps.
  SECTION("a panel within the budget is not cut") {
    CHECK(native_depth_split(9, 64, 100, 512 * kKiB).segment_taps == 0);    // 576 steps
    CHECK(native_depth_split(1, 1024, 100, 512 * kKiB).segment_taps == 0);  // exactly 1024
    CHECK(native_depth_split(9, 256, 5, 2048 * kKiB).segment_taps == 0);    // 2304 of 4096
    // 4608 of 4096: eight taps fit, cut as five and four.
    CHECK(native_depth_split(9, 512, 5, 2048 * kKiB).segment_taps == 5);
  }
  SECTION("whole taps where a tap fits") {
    // resnet's 3x3 512-channel layer at 7x7: 64 KiB a tap, two per segment;
    // a tile reads 12 x 1024 floats (48 KiB) per segment: five in half the cache.
    const auto s = native_depth_split(9, 512, 5, 512 * kKiB);
    CHECK(s.segment_taps == 2);
    CHECK(s.segment_depth == 512);
    CHECK(s.group_tiles == 5);
    // At most five a group: 16 tiles as four groups of four, 17 as groups
    // of five (the last of two).
    CHECK(native_depth_split(9, 512, 16, 512 * kKiB).group_tiles == 4);
    CHECK(native_depth_split(9, 512, 17, 512 * kKiB).group_tiles == 5);
  }
  SECTION("one tap in even pieces where a tap does not fit") {
    const auto s = native_depth_split(1, 2048, 17, 512 * kKiB);
    CHECK(s.segment_taps == 1);
    CHECK(s.segment_depth == 1024);
    CHECK(s.group_tiles == 5);
    CHECK(native_depth_split(1, 1000, 3, 256 * kKiB).segment_depth == 500);  // 512 steps a piece
  }
  SECTION("a cache too small to say still leaves segments of 64 steps and groups of one tile") {
    const auto s = native_depth_split(3, 100, 4, 0);
    CHECK(s.segment_taps == 1);
    CHECK(s.segment_depth == 50);
    CHECK(s.group_tiles == 1);
  }
}

TEST_CASE("xnnpack compile spec native_convolution accepts auto, on and off and refuses anything else",
          "[xnnpack]") {
  const Geometry g{.o = 64};
  const std::vector<uint8_t> blob = conv_blob(g, random_data(g, 600));
  for (const std::vector<Spec>& specs :
       std::vector<std::vector<Spec>>{{},
                                      kOn,
                                      kOff,
                                      kAuto,
                                      {{"unrelated", "maybe"}},
                                      {{"unrelated", "x"}, {"native_convolution", "off"}}}) {
    SpecRunner runner;
    const Status s = runner.init(blob, specs);
    INFO(s.message());
    CHECK(s.ok());
  }
  for (const std::string value : {"maybe", "ON", "Auto", "", "on "}) {
    INFO("value '" << value << "'");
    SpecRunner runner;
    const Status s = runner.init(blob, {{"native_convolution", value}});
    CHECK(s.error() == Error::InvalidArgument);
    CHECK_THAT(s.message(), Catch::Contains("native_convolution"));
    CHECK_THAT(s.message(), Catch::Contains("'" + value + "'"));
  }
}

TEST_CASE("xnnpack refuses a native convolution too large to index, without allocating it", "[xnnpack]") {
  REQUIRE(xnnpack::native_convolution_available());
  // 2^26 pixels of 16 channels (read pixel by pixel, not in padded rows),
  // 7x7: about 3.3e9 input row pointers (26 GB). The activations are
  // delegate arguments, so nothing else is allocated.
  XnnpackBlobBuilder b;
  const uint32_t x = b.input({1, 8192, 8192, 16}, 0);
  const uint32_t y = b.output({1, 8192, 8192, 1}, 0);
  auto& conv =
      b.node(NodeType::Convolution2d, {x, b.constant({1, 7, 7, 16}, std::vector<float>(784, 0.5f))}, {y});
  conv.padding = {3, 3, 3, 3};
  conv.kernel = {7, 7};
  conv.group_input_channels = 16;
  conv.group_output_channels = 1;
  SpecRunner runner;
  const Status s = runner.init(b.build(), kOn);
  CHECK(s.error() == Error::DelegateMemoryAllocationFailed);
  CHECK_THAT(s.message(), Catch::Contains("input row pointers"));
}

}  // namespace
}  // namespace etc
