// The epilogues of the XNNPACK backend's native convolution (stages.h
// ConvOutput): storing into a channel concatenation, x * sigmoid(x) (and the
// native swish pass), and a residual Add; each against XNNPACK alone
// (native_convolution=off) and a reference, with the plans that choose them
// and the cases they must leave alone.
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "runtime/backends/xnnpack/blob_reader.h"
#include "runtime/backends/xnnpack/native_conv.h"
#include "runtime/backends/xnnpack/native_plan.h"
#include "runtime/backends/xnnpack/stages.h"
#include "tests/support/native_conv_fixtures.h"
#include "tests/support/xnnpack_blob_builder.h"

namespace etc {
namespace {

using namespace testing::native_conv;
using testing::XnnpackBlobBuilder;
using xnnpack::fb::NodeType;

// An input or output of run_three_ways: its shape and its values.
struct Buffer {
  Shape shape;
  std::vector<float> values;
};

// `blob` run with the native kernel at 1 and 2 threads and on XNNPACK
// alone at 1 (in that order), `runs` times each over fresh copies of the
// inputs (later runs over the first's output), the output checked against
// `want` within 1e-4: the three outputs.
std::vector<std::vector<float>> run_three_ways(const std::vector<uint8_t>& blob,
                                               const std::vector<Buffer>& inputs, const Shape& out_shape,
                                               const std::vector<float>& want, int runs = 1) {
  std::vector<std::vector<float>> results;
  for (const auto& [specs, threads] :
       std::vector<std::pair<std::vector<Spec>, int>>{{kOn, 1}, {kOn, 2}, {kOff, 1}}) {
    INFO(specs[0].second << ", " << threads << " threads");
    SpecRunner runner(threads);
    REQUIRE(runner.init(blob, specs).ok());
    std::vector<Buffer> in = inputs;
    std::vector<float> out(want.size(), -7.0f);
    std::vector<SpecRunner::Arg> args;
    for (Buffer& b : in) args.push_back({b.shape, b.values.data()});
    args.push_back({out_shape, out.data()});
    for (int run = 0; run < runs; ++run) REQUIRE(runner.execute(args).ok());
    CHECK(count_far(out, want, 1e-4) == 0);
    results.push_back(out);
  }
  return results;
}

TEST_CASE("xnnpack native convolutions write straight into a channel concatenation", "[xnnpack]") {
  REQUIRE(xnnpack::native_convolution_available());
  const xnnpack::NativeIsa isa = GENERATE(from_range(native_isas()));
  INFO(isa_name(isa));
  const NativeIsaCap cap(isa);
  // x -> conv A (3x3 pad 1, 32->64) -> a; x -> Clamp -> c; x -> conv B (1x1,
  // 32->32) -> b; Concatenate(a, c, b) on channels -> cat -> Clamp -> y.
  // Under "on" A and B write into cat at channels 0 and 96; the
  // concatenation copies only c.
  const std::array<uint32_t, 4> p1 = {1, 1, 1, 1};
  const Geometry ga{.h = 8, .w = 8, .c = 32, .o = 64, .kh = 3, .kw = 3, .pad = p1};
  const Geometry gb{.h = 8, .w = 8, .c = 32, .o = 32};
  const ConvData da = random_data(ga, 601), db = random_data(gb, 602);
  XnnpackBlobBuilder b;
  const uint32_t x = b.input({1, 8, 8, 32}, 0);
  const uint32_t a = b.tensor({1, 8, 8, 64});
  const uint32_t c = b.tensor({1, 8, 8, 32});
  const uint32_t bt = b.tensor({1, 8, 8, 32});
  const uint32_t cat = b.tensor({1, 8, 8, 128});
  const uint32_t y = b.output({1, 8, 8, 128}, 0);
  set_window(b.node(NodeType::Convolution2d,
                    {x, b.constant({64, 3, 3, 32}, da.filter), b.constant({64}, da.bias)}, {a}),
             ga);
  auto& clamp = b.node(NodeType::Clamp, {x}, {c});
  clamp.output_min = -0.5f;
  clamp.output_max = 0.5f;
  set_window(b.node(NodeType::Convolution2d,
                    {x, b.constant({32, 1, 1, 32}, db.filter), b.constant({32}, db.bias)}, {bt}),
             gb);
  b.node(NodeType::Concatenate, {a, c, bt}, {cat}).axis = 3;
  auto& out = b.node(NodeType::Clamp, {cat}, {y});
  out.output_min = -100.0f;
  out.output_max = 100.0f;
  const std::vector<uint8_t> blob = b.build();
  {
    auto view = xnnpack::read_xnnpack_blob(blob.data(), blob.size());
    REQUIRE(view.ok());
    const xnnpack::StagePlan plan = xnnpack::plan_stages(view.get(), xnnpack::NativeConvolutions::kAll);
    REQUIRE(plan.writes_into.size() == 5);
    CHECK(plan.writes_into[0].active);
    CHECK(plan.writes_into[0].tensor == cat);
    CHECK(plan.writes_into[0].channel_offset == 0);
    CHECK(plan.writes_into[0].pixel_stride == 128);
    CHECK(plan.writes_into[2].active);
    CHECK(plan.writes_into[2].channel_offset == 96);
    CHECK(plan.in_place[3] == std::vector<bool>{true, false, true});
    // The replaced outputs take no memory; cat lives from conv A on, so it
    // cannot share memory with c (8x8x32 floats), which is still read after conv A.
    CHECK(plan.offset_of[a] == xnnpack::kNoOffset);
    CHECK(plan.offset_of[bt] == xnnpack::kNoOffset);
    REQUIRE(plan.offset_of[cat] != xnnpack::kNoOffset);
    REQUIRE(plan.offset_of[c] != xnnpack::kNoOffset);
    const int64_t cat_at = plan.offset_of[cat], c_at = plan.offset_of[c];
    CHECK((cat_at + 8 * 8 * 128 <= c_at || c_at + 8 * 8 * 32 <= cat_at));
    const xnnpack::StagePlan off = xnnpack::plan_stages(view.get(), xnnpack::NativeConvolutions::kOff);
    CHECK_FALSE(off.writes_into[0].active);
    CHECK(off.in_place[3] == std::vector<bool>{false, false, false});
  }
  const std::vector<float> a_ref = reference(ga, da.x, da.filter, da.bias);
  const std::vector<float> b_ref = reference(gb, da.x, db.filter, db.bias);
  std::vector<float> want;
  for (size_t p = 0; p < 64; ++p) {
    for (size_t o = 0; o < 64; ++o) want.push_back(a_ref[p * 64 + o]);
    for (size_t o = 0; o < 32; ++o) want.push_back(std::min(std::max(da.x[p * 32 + o], -0.5f), 0.5f));
    for (size_t o = 0; o < 32; ++o) want.push_back(b_ref[p * 32 + o]);
  }
  const std::vector<std::vector<float>> results =
      run_three_ways(blob, {{Shape{1, 8, 8, 32}, da.x}}, Shape{1, 8, 8, 128}, want, 2);
  CHECK(count_different(results[0], results[2]) == 0);
  CHECK(count_different(results[1], results[2]) == 0);
}

double swish_ref(double v) { return v / (1.0 + std::exp(-v)); }

TEST_CASE("xnnpack swish (sigmoid then multiply) runs in one pass, in a convolution's epilogue or alone",
          "[xnnpack]") {
  REQUIRE(xnnpack::native_convolution_available());
  const xnnpack::NativeIsa isa = GENERATE(from_range(native_isas()));
  INFO(isa_name(isa));
  const NativeIsaCap cap(isa);
  // x -> conv (1x1, 32->64) -> t; Sigmoid(t) -> s; Multiply(t, s) -> u;
  // u -> Clamp [-50, 50] -> v; Sigmoid(v) -> w; Multiply(w, v) -> y.
  // The first swish folds into the convolution, the second runs alone.
  const Geometry g{.h = 5, .w = 11, .c = 32, .o = 64};
  ConvData d = random_data(g, 701);
  for (float& f : d.filter) f *= 20.0f;  // large |t|: exp saturates on both sides
  XnnpackBlobBuilder b;
  const uint32_t x = b.input({1, 5, 11, 32}, 0);
  const uint32_t t = b.tensor({1, 5, 11, 64});
  const uint32_t s = b.tensor({1, 5, 11, 64});
  const uint32_t u = b.tensor({1, 5, 11, 64});
  const uint32_t v = b.tensor({1, 5, 11, 64});
  const uint32_t w = b.tensor({1, 5, 11, 64});
  const uint32_t y = b.output({1, 5, 11, 64}, 0);
  set_window(b.node(NodeType::Convolution2d,
                    {x, b.constant({64, 1, 1, 32}, d.filter), b.constant({64}, d.bias)}, {t}),
             g);
  b.node(NodeType::Sigmoid, {t}, {s});
  b.node(NodeType::Multiply, {t, s}, {u});
  auto& clamp = b.node(NodeType::Clamp, {u}, {v});
  clamp.output_min = -50.0f;
  clamp.output_max = 50.0f;
  b.node(NodeType::Sigmoid, {v}, {w});
  b.node(NodeType::Multiply, {w, v}, {y});
  const std::vector<uint8_t> blob = b.build();
  {
    auto view = xnnpack::read_xnnpack_blob(blob.data(), blob.size());
    REQUIRE(view.ok());
    const xnnpack::StagePlan plan = xnnpack::plan_stages(view.get(), xnnpack::NativeConvolutions::kAll);
    CHECK(plan.writes_into[0].active);
    CHECK(plan.writes_into[0].activation == xnnpack::ConvActivation::kSwish);
    CHECK(plan.writes_into[0].tensor == u);
    CHECK(plan.elided == std::vector<bool>{false, true, true, false, true, false});
    CHECK(plan.swish_input[5] == v);
    CHECK(plan.offset_of[t] == xnnpack::kNoOffset);
    CHECK(plan.offset_of[s] == xnnpack::kNoOffset);
    CHECK(plan.offset_of[w] == xnnpack::kNoOffset);
    REQUIRE(plan.stages.size() == 3);  // [conv + swish] [clamp] [swish]
    CHECK(plan.stages[0].native);
    CHECK(!plan.stages[1].native);
    CHECK(plan.stages[2].native);
    const xnnpack::StagePlan off = xnnpack::plan_stages(view.get(), xnnpack::NativeConvolutions::kOff);
    CHECK(off.elided == std::vector<bool>(6, false));
    CHECK(off.swish_input[5] == -1);
  }
  const std::vector<float> conv = reference(g, d.x, d.filter, d.bias);
  std::vector<double> want;
  bool saturated_low = false, saturated_high = false;
  for (float c : conv) {
    saturated_low = saturated_low || c < -40.0f;
    saturated_high = saturated_high || c > 40.0f;
    want.push_back(swish_ref(std::min(std::max(swish_ref(c), -50.0), 50.0)));
  }
  CHECK(saturated_low);
  CHECK(saturated_high);
  std::vector<std::vector<float>> results;
  for (const auto& [specs, threads] :
       std::vector<std::pair<std::vector<Spec>, int>>{{kOn, 1}, {kOn, 2}, {kOff, 1}}) {
    INFO((specs.empty() ? "default" : specs[0].second) << ", " << threads << " threads");
    SpecRunner runner(threads);
    REQUIRE(runner.init(blob, specs).ok());
    std::vector<float> xin = d.x, yout(55 * 64, -7.0f);
    REQUIRE(runner.execute({{Shape{1, 5, 11, 32}, xin.data()}, {Shape{1, 5, 11, 64}, yout.data()}}).ok());
    // The reference convolution rounds differently; |t| reaches ~100.
    size_t far = 0;
    for (size_t i = 0; i < want.size(); ++i)
      if (!(std::abs(yout[i] - want[i]) <= 1e-5 * (1.0 + std::abs(want[i])))) ++far;
    CHECK(far == 0);
    results.push_back(yout);
  }
  // Native ("on") and XNNPACK ("off") sum the convolution alike, so they
  // differ only by their sigmoids.
  size_t apart = 0;
  double worst = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double diff = std::abs(double(results[0][i]) - double(results[2][i])) / (1.0 + std::abs(want[i]));
    worst = std::max(worst, diff);
    if (!(diff <= 1e-6)) ++apart;
  }
  INFO("worst difference " << worst);
  CHECK(apart == 0);
  CHECK(count_different(results[0], results[1]) == 0);
}

TEST_CASE("xnnpack keeps sigmoid and multiply apart when they are not exactly a swish", "[xnnpack]") {
  const auto plan_of = [](const std::vector<uint8_t>& blob) {
    auto view = xnnpack::read_xnnpack_blob(blob.data(), blob.size());
    REQUIRE(view.ok());
    return xnnpack::plan_stages(view.get(), xnnpack::NativeConvolutions::kAll);
  };
  SECTION("the sigmoid's output is read again") {
    XnnpackBlobBuilder b;
    const uint32_t x = b.input({1, 4, 4, 8}, 0);
    const uint32_t s = b.output({1, 4, 4, 8}, 1);
    const uint32_t y = b.output({1, 4, 4, 8}, 0);
    b.node(NodeType::Sigmoid, {x}, {s});
    b.node(NodeType::Multiply, {x, s}, {y});
    const xnnpack::StagePlan plan = plan_of(b.build());
    CHECK(plan.elided == std::vector<bool>{false, false});
    CHECK(plan.swish_input[1] == -1);
  }
  SECTION("the multiply clamps its output") {
    XnnpackBlobBuilder b;
    const uint32_t x = b.input({1, 4, 4, 8}, 0);
    const uint32_t s = b.tensor({1, 4, 4, 8});
    const uint32_t y = b.output({1, 4, 4, 8}, 0);
    b.node(NodeType::Sigmoid, {x}, {s});
    b.node(NodeType::Multiply, {x, s}, {y}).output_min = 0.0f;
    CHECK(plan_of(b.build()).swish_input[1] == -1);
  }
  SECTION("the multiply reads another tensor than the sigmoid's input") {
    XnnpackBlobBuilder b;
    const uint32_t x = b.input({1, 4, 4, 8}, 0);
    const uint32_t z = b.input({1, 4, 4, 8}, 1);
    const uint32_t s = b.tensor({1, 4, 4, 8});
    const uint32_t y = b.output({1, 4, 4, 8}, 0);
    b.node(NodeType::Sigmoid, {x}, {s});
    b.node(NodeType::Multiply, {z, s}, {y});
    CHECK(plan_of(b.build()).swish_input[1] == -1);
  }
}

TEST_CASE("xnnpack folds a residual Add into the native convolution's epilogue", "[xnnpack]") {
  REQUIRE(xnnpack::native_convolution_available());
  const xnnpack::NativeIsa isa = GENERATE(from_range(native_isas()));
  INFO(isa_name(isa));
  const NativeIsaCap cap(isa);
  // x -> Clamp [-1, 1] -> r; r -> conv (3x3 pad 1, 64->64, clamp [-2, 2]) -> t;
  // Add(r, t) clamped to [0, inf) -> y (resnet's block).
  const std::array<uint32_t, 4> p1 = {1, 1, 1, 1};
  const Geometry g{.h = 7, .w = 9, .c = 64, .o = 64, .kh = 3, .kw = 3, .pad = p1, .lo = -2, .hi = 2};
  const ConvData d = random_data(g, 801);
  XnnpackBlobBuilder b;
  const uint32_t x = b.input({1, 7, 9, 64}, 0);
  const uint32_t r = b.tensor({1, 7, 9, 64});
  const uint32_t t = b.tensor({1, 7, 9, 64});
  const uint32_t y = b.output({1, 7, 9, 64}, 0);
  auto& clamp = b.node(NodeType::Clamp, {x}, {r});
  clamp.output_min = -1.0f;
  clamp.output_max = 1.0f;
  auto& conv = b.node(NodeType::Convolution2d,
                      {r, b.constant({64, 3, 3, 64}, d.filter), b.constant({64}, d.bias)}, {t});
  set_window(conv, g);
  conv.output_min = -2.0f;
  conv.output_max = 2.0f;
  b.node(NodeType::Add, {r, t}, {y}).output_min = 0.0f;
  const std::vector<uint8_t> blob = b.build();
  {
    auto view = xnnpack::read_xnnpack_blob(blob.data(), blob.size());
    REQUIRE(view.ok());
    const xnnpack::StagePlan plan = xnnpack::plan_stages(view.get(), xnnpack::NativeConvolutions::kAll);
    REQUIRE(plan.writes_into[1].active);
    CHECK(plan.writes_into[1].tensor == y);
    CHECK(plan.writes_into[1].residual == r);
    CHECK(plan.writes_into[1].residual_lo == 0.0f);
    CHECK(std::isinf(plan.writes_into[1].residual_hi));
    CHECK(plan.elided == std::vector<bool>{false, false, true});
    CHECK(plan.offset_of[t] == xnnpack::kNoOffset);
    REQUIRE(plan.offset_of[r] != xnnpack::kNoOffset);
    const xnnpack::StagePlan off = xnnpack::plan_stages(view.get(), xnnpack::NativeConvolutions::kOff);
    CHECK(off.elided == std::vector<bool>{false, false, false});
    // Per-node profiling keeps the fold (and says where the Add went);
    // logging node outputs needs the Add's own.
    const xnnpack::StagePlan per_node =
        xnnpack::plan_stages(view.get(), xnnpack::NativeConvolutions::kAll, DelegateDetail::kPerNode);
    CHECK(per_node.elided == std::vector<bool>{false, false, true});
    CHECK(per_node.folded_into == std::vector<int64_t>{-1, -1, 1});
    CHECK(per_node.stages.size() == 2);
    const xnnpack::StagePlan outputs =
        xnnpack::plan_stages(view.get(), xnnpack::NativeConvolutions::kAll, DelegateDetail::kNodeOutputs);
    CHECK(outputs.elided == std::vector<bool>{false, false, false});
    CHECK_FALSE(outputs.writes_into[1].active);
    CHECK(outputs.stages.size() == 3);
    CHECK(outputs.offset_of[t] != xnnpack::kNoOffset);
  }
  std::vector<float> r_ref = d.x;
  for (float& v : r_ref) v = std::min(std::max(v, -1.0f), 1.0f);
  const std::vector<float> t_ref = reference(g, r_ref, d.filter, d.bias);
  std::vector<float> want(t_ref.size());
  for (size_t i = 0; i < want.size(); ++i) want[i] = std::max(r_ref[i] + t_ref[i], 0.0f);
  const std::vector<std::vector<float>> results =
      run_three_ways(blob, {{Shape{1, 7, 9, 64}, d.x}}, Shape{1, 7, 9, 64}, want, 2);
  // The epilogue adds as XNNPACK's Add does: bitwise equal.
  CHECK(count_different(results[0], results[2]) == 0);
  CHECK(count_different(results[1], results[2]) == 0);
}

// A 1x1 convolution k.c -> k.o over k.h x k.w pixels, clamped to [-2, 2],
// plus the residual `res`, clamped to [0, inf): run_three_ways (`runs`
// times each) against the reference, its filter and bias from `seed`.
struct PointwiseCase {
  uint32_t h, w, c, o;
};
std::vector<std::vector<float>> run_pointwise_residual(const PointwiseCase& k, const std::vector<float>& res,
                                                       uint32_t seed, int runs) {
  const Geometry g{.h = k.h, .w = k.w, .c = k.c, .o = k.o, .lo = -2, .hi = 2};
  const ConvData d = random_data(g, seed);
  XnnpackBlobBuilder b;
  const uint32_t x = b.input({1, k.h, k.w, k.c}, 0);
  const uint32_t r = b.input({1, k.h, k.w, k.o}, 1);
  const uint32_t t = b.tensor({1, k.h, k.w, k.o});
  const uint32_t y = b.output({1, k.h, k.w, k.o}, 0);
  auto& conv = b.node(NodeType::Convolution2d,
                      {x, b.constant({k.o, 1, 1, k.c}, d.filter), b.constant({k.o}, d.bias)}, {t});
  set_window(conv, g);
  conv.output_min = -2.0f;
  conv.output_max = 2.0f;
  b.node(NodeType::Add, {t, r}, {y}).output_min = 0.0f;
  const std::vector<float> t_ref = reference(g, d.x, d.filter, d.bias);
  std::vector<float> want(t_ref.size());
  for (size_t i = 0; i < want.size(); ++i) want[i] = std::max(t_ref[i] + res[i], 0.0f);
  return run_three_ways(b.build(), {{Shape{1, k.h, k.w, k.c}, d.x}, {Shape{1, k.h, k.w, k.o}, res}},
                        Shape{1, k.h, k.w, k.o}, want, runs);
}

// Pixel counts one past a whole number of 12-row tiles: with AVX-512 the
// last whole tile of a 1x1 convolution takes the lone last row in (6 + 7
// rows), the residual and the epilogue included; the weights outweigh the
// input in the first two (panel by panel), not in the third (tile by
// tile); 160 output channels leave a lone last panel.
TEST_CASE("xnnpack native 1x1 convolution takes a lone last row into the tile before it", "[xnnpack]") {
  REQUIRE(xnnpack::native_convolution_available());
  const xnnpack::NativeIsa isa = GENERATE(from_range(native_isas()));
  INFO(isa_name(isa));
  const NativeIsaCap cap(isa);
  for (const PointwiseCase& k :
       {PointwiseCase{7, 7, 96, 128}, PointwiseCase{5, 5, 200, 160}, PointwiseCase{13, 13, 256, 64}}) {
    INFO(k.h << "x" << k.w << ", " << k.c << "->" << k.o);
    std::vector<float> res(size_t{k.h} * k.w * k.o);
    for (size_t i = 0; i < res.size(); ++i) res[i] = 0.01f * static_cast<float>(i % 97) - 0.5f;
    const std::vector<std::vector<float>> results = run_pointwise_residual(k, res, 803 + k.o, 1);
    // Each row's sums in the same order whichever tile computes it: the
    // native kernel's bits at 1 and 2 threads alike.
    CHECK(count_different(results[0], results[1]) == 0);
  }
}

// At 2 threads a 1x1 convolution walked panel by panel (the weights
// outweigh the input) gives each thread a range of pixels of its own where
// each keeps four tiles or more, its input, output and residual read from
// the range's first pixel: 110 pixels (four tiles, then four and two
// rows), 169 (seven, then seven and a lone row the tile before it takes
// in), 160 output channels leaving a lone last panel.
TEST_CASE("xnnpack native 1x1 convolution walked panel by panel splits its pixels between threads",
          "[xnnpack]") {
  REQUIRE(xnnpack::native_convolution_available());
  const xnnpack::NativeIsa isa = GENERATE(from_range(native_isas()));
  INFO(isa_name(isa));
  const NativeIsaCap cap(isa);
  for (const PointwiseCase& k :
       {PointwiseCase{10, 11, 64, 192}, PointwiseCase{13, 13, 64, 256}, PointwiseCase{10, 10, 48, 160}}) {
    INFO(k.h << "x" << k.w << ", " << k.c << "->" << k.o);
    REQUIRE(size_t{k.c} * k.o > size_t{k.h} * k.w * k.c);  // panel by panel
    std::mt19937 rng(812 + k.o);
    const std::vector<float> res = testing::random_floats(size_t{k.h} * k.w * k.o, rng);
    const std::vector<std::vector<float>> results = run_pointwise_residual(k, res, 811 + k.o, 2);
    CHECK(count_different(results[0], results[1]) == 0);
    CHECK(count_different(results[1], results[2]) == 0);
  }
}

TEST_CASE("xnnpack keeps an Add apart when it broadcasts or the convolution's output is read again",
          "[xnnpack]") {
  const Geometry g{.h = 8, .w = 8, .c = 32, .o = 32};
  const ConvData d = random_data(g, 802);
  SECTION("broadcast") {
    XnnpackBlobBuilder b;
    const uint32_t x = b.input({1, 8, 8, 32}, 0);
    const uint32_t r = b.input({1, 1, 1, 32}, 1);
    const uint32_t t = b.tensor({1, 8, 8, 32});
    const uint32_t y = b.output({1, 8, 8, 32}, 0);
    set_window(b.node(NodeType::Convolution2d, {x, b.constant({32, 1, 1, 32}, d.filter)}, {t}), g);
    b.node(NodeType::Add, {t, r}, {y});
    const std::vector<uint8_t> blob = b.build();
    auto view = xnnpack::read_xnnpack_blob(blob.data(), blob.size());
    REQUIRE(view.ok());
    const xnnpack::StagePlan plan = xnnpack::plan_stages(view.get(), xnnpack::NativeConvolutions::kAll);
    CHECK(plan.writes_into[0].residual == -1);
    CHECK(plan.elided == std::vector<bool>{false, false});
  }
  SECTION("the convolution's output is also a delegate output") {
    XnnpackBlobBuilder b;
    const uint32_t x = b.input({1, 8, 8, 32}, 0);
    const uint32_t t = b.output({1, 8, 8, 32}, 1);
    const uint32_t y = b.output({1, 8, 8, 32}, 0);
    set_window(b.node(NodeType::Convolution2d, {x, b.constant({32, 1, 1, 32}, d.filter)}, {t}), g);
    b.node(NodeType::Add, {t, x}, {y});
    const std::vector<uint8_t> blob = b.build();
    auto view = xnnpack::read_xnnpack_blob(blob.data(), blob.size());
    REQUIRE(view.ok());
    const xnnpack::StagePlan plan = xnnpack::plan_stages(view.get(), xnnpack::NativeConvolutions::kAll);
    CHECK(plan.writes_into[0].residual == -1);
    CHECK(plan.elided == std::vector<bool>{false, false});
  }
}

TEST_CASE("xnnpack native convolution writes over a residual that dies in its epilogue", "[xnnpack]") {
  REQUIRE(xnnpack::native_convolution_available());
  const xnnpack::NativeIsa isa = GENERATE(from_range(native_isas()));
  INFO(isa_name(isa));
  const NativeIsaCap cap(isa);
  // r = Clamp(x) [-1, 1]; a = Clamp(x) [-0.5, 0.5] (or a = r); t = conv(a)
  // (3x3 pad 1, 32->32); s = Add(t, r); y = Clamp(s) [-3, 3]. The sum may
  // take r's memory unless the convolution reads r itself.
  const std::array<uint32_t, 4> p1 = {1, 1, 1, 1};
  const Geometry g{.h = 6, .w = 5, .c = 32, .o = 32, .kh = 3, .kw = 3, .pad = p1};
  const ConvData d = random_data(g, 811);
  for (bool conv_reads_r : {false, true}) {
    INFO("the convolution reads the residual: " << conv_reads_r);
    XnnpackBlobBuilder b;
    const uint32_t x = b.input({1, 6, 5, 32}, 0);
    const uint32_t r = b.tensor({1, 6, 5, 32});
    const uint32_t a = conv_reads_r ? r : b.tensor({1, 6, 5, 32});
    const uint32_t t = b.tensor({1, 6, 5, 32});
    const uint32_t s = b.tensor({1, 6, 5, 32});
    const uint32_t y = b.output({1, 6, 5, 32}, 0);
    auto& cr = b.node(NodeType::Clamp, {x}, {r});
    cr.output_min = -1.0f, cr.output_max = 1.0f;
    if (!conv_reads_r) {
      auto& ca = b.node(NodeType::Clamp, {x}, {a});
      ca.output_min = -0.5f, ca.output_max = 0.5f;
    }
    set_window(b.node(NodeType::Convolution2d,
                      {a, b.constant({32, 3, 3, 32}, d.filter), b.constant({32}, d.bias)}, {t}),
               g);
    b.node(NodeType::Add, {t, r}, {s});
    auto& cy = b.node(NodeType::Clamp, {s}, {y});
    cy.output_min = -3.0f, cy.output_max = 3.0f;
    const std::vector<uint8_t> blob = b.build();
    {
      auto view = xnnpack::read_xnnpack_blob(blob.data(), blob.size());
      REQUIRE(view.ok());
      const xnnpack::StagePlan plan = xnnpack::plan_stages(view.get(), xnnpack::NativeConvolutions::kAll);
      const size_t conv = conv_reads_r ? 1 : 2;
      REQUIRE(plan.writes_into[conv].residual == r);
      REQUIRE(plan.offset_of[s] != xnnpack::kNoOffset);
      if (conv_reads_r)
        CHECK(std::abs(plan.offset_of[s] - plan.offset_of[r]) >= 6 * 5 * 32);
      else
        CHECK(plan.offset_of[s] == plan.offset_of[r]);
    }
    std::vector<float> r_ref = d.x, a_ref = d.x;
    for (float& v : r_ref) v = std::min(std::max(v, -1.0f), 1.0f);
    for (float& v : a_ref)
      v = conv_reads_r ? std::min(std::max(v, -1.0f), 1.0f) : std::min(std::max(v, -0.5f), 0.5f);
    const std::vector<float> t_ref = reference(g, a_ref, d.filter, d.bias);
    std::vector<float> want(t_ref.size());
    for (size_t i = 0; i < want.size(); ++i) want[i] = std::min(std::max(t_ref[i] + r_ref[i], -3.0f), 3.0f);
    for (const auto& [specs, threads] :
         std::vector<std::pair<std::vector<Spec>, int>>{{kOn, 1}, {kOn, 2}, {kWinograd, 2}, {kOff, 1}}) {
      INFO(specs[0].second << ", winograd " << specs.size() << ", " << threads << " threads");
      SpecRunner runner(threads);
      REQUIRE(runner.init(blob, specs).ok());
      std::vector<float> xin = d.x, yout(want.size(), -7.0f);
      for (int run = 0; run < 2; ++run)
        REQUIRE(runner.execute({{Shape{1, 6, 5, 32}, xin.data()}, {Shape{1, 6, 5, 32}, yout.data()}}).ok());
      CHECK(count_far(yout, want, 1e-4) == 0);
    }
  }
}

TEST_CASE("xnnpack native convolution with its reduction cut writes over a residual only at the last cut",
          "[xnnpack]") {
  REQUIRE(xnnpack::native_convolution_available());
  const xnnpack::NativeIsa isa = GENERATE(from_range(native_isas()));
  INFO(isa_name(isa));
  const NativeIsaCap cap(isa);
  // r = Clamp(x2) [-1, 1]; t = conv(x) (3x3 pad 1, 1040->o: a depth of 9360,
  // cut into segments on any L2 up to 4 MiB); s = Add(t, r), which takes r's
  // memory (the partial sums of the first segments must not land there);
  // y = Clamp(s) [-3, 3]. One panel over two whole tiles and a short one;
  // with AVX-512 a pair of panels and a lone one over the same, and a pair
  // over two whole tiles and a lone last row (conv_segmented_pair).
  struct Shape3 {
    uint32_t h, w, o;
  };
  for (const Shape3 s3 : {Shape3{6, 5, 32}, Shape3{6, 5, 96}, Shape3{5, 5, 64}}) {
    const uint32_t h = s3.h, w = s3.w, o = s3.o;
    INFO(h << "x" << w << ", " << o << " output channels");
    const std::array<uint32_t, 4> p1 = {1, 1, 1, 1};
    const Geometry g{.h = h, .w = w, .c = 1040, .o = o, .kh = 3, .kw = 3, .pad = p1};
    REQUIRE(xnnpack::native_depth_split(9, 1040, 3, xnnpack::core_cache_bytes()).segment_taps != 0);
    const ConvData d = random_data(g, 821 + o);
    std::mt19937 rng(822 + o);
    const std::vector<float> x2 = testing::random_floats(size_t{h} * w * o, rng);
    XnnpackBlobBuilder b;
    const uint32_t x = b.input({1, h, w, 1040}, 0);
    const uint32_t x2_id = b.input({1, h, w, o}, 1);
    const uint32_t r = b.tensor({1, h, w, o});
    const uint32_t t = b.tensor({1, h, w, o});
    const uint32_t sum = b.tensor({1, h, w, o});
    const uint32_t y = b.output({1, h, w, o}, 0);
    auto& cr = b.node(NodeType::Clamp, {x2_id}, {r});
    cr.output_min = -1.0f, cr.output_max = 1.0f;
    set_window(b.node(NodeType::Convolution2d,
                      {x, b.constant({o, 3, 3, 1040}, d.filter), b.constant({o}, d.bias)}, {t}),
               g);
    b.node(NodeType::Add, {t, r}, {sum});
    auto& cy = b.node(NodeType::Clamp, {sum}, {y});
    cy.output_min = -3.0f, cy.output_max = 3.0f;
    const std::vector<uint8_t> blob = b.build();
    {
      auto view = xnnpack::read_xnnpack_blob(blob.data(), blob.size());
      REQUIRE(view.ok());
      const xnnpack::StagePlan plan = xnnpack::plan_stages(view.get(), xnnpack::NativeConvolutions::kAll);
      REQUIRE(plan.writes_into[1].residual == r);
      REQUIRE(plan.offset_of[sum] != xnnpack::kNoOffset);
      CHECK(plan.offset_of[sum] == plan.offset_of[r]);
    }
    std::vector<float> r_ref = x2;
    for (float& v : r_ref) v = std::min(std::max(v, -1.0f), 1.0f);
    const std::vector<float> t_ref = reference(g, d.x, d.filter, d.bias);
    std::vector<float> want(t_ref.size());
    for (size_t i = 0; i < want.size(); ++i) want[i] = std::min(std::max(t_ref[i] + r_ref[i], -3.0f), 3.0f);
    const std::vector<std::vector<float>> results = run_three_ways(
        blob, {{Shape{1, h, w, 1040}, d.x}, {Shape{1, h, w, o}, x2}}, Shape{1, h, w, o}, want, 2);
    CHECK(count_different(results[0], results[2]) == 0);
    CHECK(count_different(results[1], results[2]) == 0);
  }
}

}  // namespace
}  // namespace etc
