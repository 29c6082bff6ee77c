// The backend's own grouped convolution (native_grouped.h) takes the grouped
// convolutions of 2, 4 or 8 channels a group on a CPU with AVX-512F under
// native_convolution=auto and =on, none under =off, and leaves wider groups
// and groups with more outputs than inputs to XNNPACK; it matches a
// double-precision reference over 3x3 and 1x1 windows, strides 1 and 2,
// dilation, uneven padding, rows shorter than its four-pixel blocks, several
// images and thread counts, with and without a bias, clamped, or with a
// residual Add folded in.
#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "runtime/backends/xnnpack/blob_reader.h"
#include "runtime/backends/xnnpack/native_isa.h"
#include "runtime/backends/xnnpack/stages.h"
#include "tests/support/native_conv_fixtures.h"
#include "tests/support/xnnpack_blob_builder.h"

namespace etc {
namespace {

using namespace testing::native_conv;
using testing::XnnpackBlobBuilder;
using xnnpack::fb::NodeType;

Geometry grouped(const char* name, uint64_t n, uint64_t h, uint64_t w, uint64_t c, uint32_t groups,
                 uint32_t k, uint32_t s, std::array<uint32_t, 4> pad, uint32_t d = 1) {
  Geometry g;
  g.name = name;
  g.n = n, g.h = h, g.w = w, g.c = c, g.o = c, g.groups = groups;
  g.kh = g.kw = k, g.sh = g.sw = s, g.dh = g.dw = d;
  g.pad = pad;
  return g;
}

// input 0 and input 1 -> grouped convolution -> Add -> output 0.
std::vector<uint8_t> residual_blob(const Geometry& g, const ConvData& d) {
  XnnpackBlobBuilder b;
  const uint32_t x = b.input({g.n, g.h, g.w, g.c}, 0);
  const std::vector<uint64_t> out = {g.n, g.oh(), g.ow(), g.o};
  const uint32_t r = b.input(out, 1);
  const uint32_t y = b.output(out, 0);
  const uint32_t t = b.tensor(out);
  auto& node =
      b.node(NodeType::Convolution2d,
             {x, b.constant({g.o, g.kh, g.kw, g.c / g.groups}, d.filter), b.constant({g.o}, d.bias)}, {t});
  set_window(node, g);
  b.node(NodeType::Add, {t, r}, {y});
  return b.build();
}

bool native_in(const std::vector<uint8_t>& blob, xnnpack::NativeConvolutions mode) {
  auto view = xnnpack::read_xnnpack_blob(blob.data(), blob.size());
  REQUIRE(view.ok());
  const xnnpack::StagePlan plan = xnnpack::plan_stages(view.get(), mode);
  for (const xnnpack::Stage& stage : plan.stages)
    if (stage.first_node == 0) return stage.native;
  return false;
}

struct Case {
  Geometry g;
  bool residual = false;
  bool native = true;  // expected to run on the backend's kernel (with AVX-512F)
};

std::vector<Case> cases() {
  std::vector<Case> c;
  c.push_back(
      {grouped("ResNeXt layer 1: 3x3 s1, groups of 4, 128 channels", 1, 9, 13, 128, 32, 3, 1, {1, 1, 1, 1})});
  c.push_back(
      {grouped("3x3 s2, groups of 8, 64 channels, two images", 2, 11, 15, 64, 8, 3, 2, {1, 1, 1, 1})});
  c.push_back({grouped("3x3 s1, groups of 2, 16 channels, rows of 3", 1, 5, 3, 16, 8, 3, 1, {1, 1, 1, 1})});
  c.push_back({grouped("3x3 dilation 2, groups of 8, 32 channels, uneven padding", 1, 10, 17, 32, 4, 3, 1,
                       {2, 1, 0, 2}, 2)});
  c.push_back({grouped("1x1 groups of 4, 48 channels", 1, 6, 7, 48, 12, 1, 1, {0, 0, 0, 0})});
  Case clamp{
      grouped("3x3 s1 clamped to [0, inf), groups of 8, 32 channels", 1, 7, 9, 32, 4, 3, 1, {1, 1, 1, 1})};
  clamp.g.lo = 0.0f;
  c.push_back(clamp);
  Case no_bias{
      grouped("3x3 s1 without a bias, groups of 4, 16 channels", 1, 6, 8, 16, 4, 3, 1, {1, 1, 1, 1})};
  no_bias.g.bias = false;
  c.push_back(no_bias);
  c.push_back(
      {grouped("3x3 s1 plus a residual, groups of 8, 64 channels", 2, 6, 10, 64, 8, 3, 1, {1, 1, 1, 1}),
       true});
  c.push_back({grouped("groups of 16 stay with XNNPACK", 1, 7, 7, 64, 4, 3, 1, {1, 1, 1, 1}), false, false});
  Case wider{
      grouped("more outputs than inputs a group stay with XNNPACK", 1, 7, 7, 32, 8, 3, 1, {1, 1, 1, 1}),
      false, false};
  wider.g.o = 64;
  c.push_back(wider);
  return c;
}

TEST_CASE(
    "xnnpack runs grouped convolutions of narrow groups on the backend's kernel and matches the reference",
    "[xnnpack]") {
  for (const Case& q : cases()) {
    INFO(q.g.name);
    const Geometry& g = q.g;
    const ConvData d = random_data(g, 71);
    std::mt19937 rng(72);
    const std::vector<float> residual =
        q.residual ? testing::random_floats(g.out_numel(), rng) : std::vector<float>();
    const std::vector<uint8_t> blob = q.residual ? residual_blob(g, d) : conv_blob(g, d);
    const bool native = q.native && xnnpack::native_avx512_available();
    CHECK(native_in(blob, xnnpack::NativeConvolutions::kAuto) == native);
    CHECK(native_in(blob, xnnpack::NativeConvolutions::kAll) == native);
    CHECK_FALSE(native_in(blob, xnnpack::NativeConvolutions::kOff));

    std::vector<float> want = reference(g, d.x, d.filter, d.bias);
    for (size_t i = 0; i < residual.size(); ++i) want[i] += residual[i];
    for (const auto& [mode, threads] :
         std::vector<std::pair<std::string, int>>{{"auto", 1}, {"auto", 2}, {"on", 3}, {"off", 1}}) {
      INFO("native_convolution=" << mode << ", " << threads << " threads");
      SpecRunner runner(threads);
      REQUIRE(runner.init(blob, {{"native_convolution", mode}}).ok());
      for (int run = 0; run < 2; ++run) {
        std::vector<float> x = d.x, r = residual, y(want.size(), -7.0f);
        std::vector<SpecRunner::Arg> args = {{shape_of({g.n, g.h, g.w, g.c}), x.data()}};
        if (q.residual) args.push_back({shape_of({g.n, g.oh(), g.ow(), g.o}), r.data()});
        args.push_back({shape_of({g.n, g.oh(), g.ow(), g.o}), y.data()});
        REQUIRE(runner.execute(args).ok());
        CHECK(count_far(y, want, 1e-4) == 0);
      }
    }
  }
}

}  // namespace
}  // namespace etc
