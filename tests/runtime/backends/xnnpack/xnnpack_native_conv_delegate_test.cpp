// The XNNPACK backend's own convolution (native_conv.h) inside a delegate:
// a convolution reading a delegate argument bound in place stays right
// when the argument moves between runs; native convolutions mix with
// XNNPACK stages; the stem convolution reads its NCHW argument without a
// staging copy. Each against a double-precision reference.
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <random>
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
  const MixedStages m = mixed_stages(g1, g2, g3, 401, /*c_output=*/true);
  const std::vector<uint8_t>& blob = m.blob;
  const ConvData& d1 = m.d1;
  const ConvData& d3 = m.d3;
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

  const std::vector<float>& c_ref = m.c_ref;
  const std::vector<float> x_nchw = nhwc_to_nchw(d1.x, 1, 120, 64);

  // The last: native_convolution by default, Winograd off (whose sums
  // differ from the direct kernel's; it may pay for conv2 at 2 threads).
  std::vector<std::vector<float>> ys, cs;
  for (const auto& [specs, threads] : std::vector<std::pair<std::vector<Spec>, int>>{
           {kOn, 1}, {kOn, 2}, {kOff, 1}, {kAuto, 2}, {{{"winograd", "off"}}, 2}}) {
    INFO(specs[0].first << "=" << specs[0].second << ", " << threads << " threads");
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
