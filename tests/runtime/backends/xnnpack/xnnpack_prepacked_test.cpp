// Filters packed ahead of time for the backend's own kernel (xnnpack_blob.fbs
// WeightPacking NativePanels): read in place they give the bits of weights
// packed at init, on the native kernel, on XNNPACK (unpacked at init) and
// as Winograd (unpacked, then transformed); a classifier head runs from
// them whatever window fields its node holds; the delegate keeps the blob
// only while it reads it. Filters transformed for Winograd ahead of time
// (WinogradPanels) give the bits of those transformed at init and are read
// in place; the plain filter beside them serves the direct kernel and
// XNNPACK. The reader refuses packed or transformed constants of the wrong
// size or dims, off their 64-byte alignment, of an unknown packing, with
// biases other than the bias tensor's, read by anything but one
// convolution's filter, or named by a convolution Winograd cannot run.
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "runtime/backends/xnnpack/native_isa.h"
#include "runtime/backends/xnnpack/native_plan.h"
#include "tests/support/native_conv_fixtures.h"

namespace etc {
namespace {

using namespace testing::native_conv;
using testing::XnnpackBlobBuilder;
using testing::XnnpackRunner;
using xnnpack::fb::WeightPacking;

const std::array<uint32_t, 4> kPad1 = {1, 1, 1, 1};

std::vector<Geometry> geometries() {
  return {
      {.name = "1x1, 288->64, 16x16", .h = 16, .w = 16, .c = 288, .o = 64},
      {.name = "3x3 pad 1, 64->80 (a 16-wide last panel), 12x12, clamp [0, 6]",
       .h = 12,
       .w = 12,
       .c = 64,
       .o = 80,
       .kh = 3,
       .kw = 3,
       .pad = kPad1,
       .lo = 0,
       .hi = 6},
      {.name = "3x3 pad 1, 48->40 (8 idle lanes), 9x10, no bias",
       .h = 9,
       .w = 10,
       .c = 48,
       .o = 40,
       .kh = 3,
       .kw = 3,
       .pad = kPad1,
       .bias = false},
      {.name = "zero-bordered copy: 7x7 stride 2 pad 3, 3->64, 30x30, NCHW boundary",
       .h = 30,
       .w = 30,
       .c = 3,
       .o = 64,
       .kh = 7,
       .kw = 7,
       .sh = 2,
       .sw = 2,
       .pad = {3, 3, 3, 3},
       .nchw = true},
  };
}

TEST_CASE("native panels unpack to the filter they were packed from", "[xnnpack]") {
  for (const auto& [out_c, depth] :
       std::vector<std::pair<size_t, size_t>>{{1, 1}, {32, 9}, {40, 27}, {97, 5}}) {
    INFO(out_c << " x " << depth);
    std::vector<float> filter(out_c * depth), bias(out_c);
    for (size_t i = 0; i < filter.size(); ++i) filter[i] = static_cast<float>(i) + 0.5f;
    for (size_t i = 0; i < out_c; ++i) bias[i] = -static_cast<float>(i);
    const size_t panels = (out_c + 31) / 32;
    REQUIRE(xnnpack::native_panels_floats(out_c, depth) == panels * (32 + depth * 32));
    std::vector<float> packed(xnnpack::native_panels_floats(out_c, depth), 7.0f);
    xnnpack::pack_native_panels(filter.data(), bias.data(), out_c, depth, packed.data());
    // Panel p: 32 biases, then row k holds filter[p * 32 + j][k] in lane j.
    for (size_t o = 0; o < out_c; ++o) {
      const float* panel = packed.data() + (o / 32) * (32 + depth * 32);
      CHECK(panel[o % 32] == bias[o]);
      for (size_t k = 0; k < depth; ++k) CHECK(panel[32 + k * 32 + o % 32] == filter[o * depth + k]);
    }
    // Lanes past out_c are zero, biases included.
    for (size_t lane = out_c % 32; out_c % 32 != 0 && lane < 32; ++lane) {
      const float* last = packed.data() + (panels - 1) * (32 + depth * 32);
      CHECK(last[lane] == 0.0f);
      CHECK(last[32 + (depth - 1) * 32 + lane] == 0.0f);
    }
    std::vector<float> back(filter.size(), -1.0f);
    xnnpack::unpack_native_panels(packed.data(), out_c, depth, back.data());
    CHECK(back == filter);
  }
}

TEST_CASE("xnnpack filters packed ahead of time give the bits of filters packed at init", "[xnnpack]") {
  REQUIRE(xnnpack::native_convolution_available());
  uint32_t seed = 700;
  for (const Geometry& g : geometries()) {
    INFO(g.name);
    const ConvData d = random_data(g, ++seed);
    const std::vector<float> want = reference(g, d.x, d.filter, d.bias);
    // Native kernel: the panels read in place.
    const std::vector<float> plain_on = run_conv(g, d, kOn);
    const std::vector<float> packed_on = run_conv(g, d, kOn, 0, /*packed=*/true);
    CHECK(count_far(packed_on, want, 1e-4) == 0);
    CHECK(count_different(packed_on, plain_on) == 0);
    // Two threads read the same panels.
    CHECK(count_different(run_conv(g, d, kOn, 2, true), plain_on) == 0);
    // XNNPACK: unpacked at init.
    const std::vector<float> plain_off = run_conv(g, d, kOff);
    const std::vector<float> packed_off = run_conv(g, d, kOff, 0, true);
    CHECK(count_far(packed_off, want, 1e-4) == 0);
    CHECK(count_different(packed_off, plain_off) == 0);
    // Winograd (3x3 stride 1): unpacked, then transformed.
    if (g.kh == 3 && g.kw == 3 && g.sh == 1 && g.sw == 1) {
      const std::vector<Spec> winograd = {{"native_convolution", "on"}, {"winograd", "on"}};
      const std::vector<float> plain_w = run_conv(g, d, winograd);
      const std::vector<float> packed_w = run_conv(g, d, winograd, 0, true);
      CHECK(count_different(packed_w, plain_w) == 0);
      CHECK(count_far(packed_w, want, 1e-4) == 0);
    }
  }
}

TEST_CASE("xnnpack keeps the blob while a native convolution reads packed weights from it", "[xnnpack]") {
  REQUIRE(xnnpack::native_convolution_available());
  const Geometry g = geometries()[0];  // native under "auto"
  REQUIRE(xnnpack::native_gemm_pays({g.o, g.oh() * g.ow(), g.c, false}, false));
  const ConvData d = random_data(g, 800);
  const Shape in_shape = shape_of({g.n, g.h, g.w, g.c}), out_shape = shape_of({g.n, g.oh(), g.ow(), g.o});

  XnnpackRunner plain;
  REQUIRE(plain.init(conv_blob(g, d)).ok());
  CHECK(plain.freed_by_init());

  XnnpackRunner packed;
  REQUIRE(packed.init(conv_blob(g, d, 0, true)).ok());
  CHECK_FALSE(packed.freed_by_init());
  std::vector<testing::XnnpackArg> args = {{in_shape, d.x}, testing::zeros(out_shape)};
  REQUIRE(packed.execute(args).ok());
  CHECK(count_far(args[1].data, reference(g, d.x, d.filter, d.bias), 1e-4) == 0);
  // Kept for its weights, not for other sizes: a fixed-size delegate.
  std::vector<testing::XnnpackArg> smaller = {testing::zeros(shape_of({1, 8, 8, g.c})),
                                              testing::zeros(shape_of({1, 8, 8, g.o}))};
  const Status resized = packed.resize(smaller);
  CHECK(resized.error() == Error::NotSupported);

  // Misaligned processed bytes are read from an aligned copy, which the
  // delegate keeps: the processed bytes themselves can go.
  XnnpackRunner misaligned;
  REQUIRE(misaligned.init(conv_blob(g, d, 0, true), /*misalign=*/4).ok());
  CHECK(misaligned.freed_by_init());
  std::fill(misaligned.blob().begin(), misaligned.blob().end(), uint8_t{0xFF});
  std::vector<testing::XnnpackArg> again = {{in_shape, d.x}, testing::zeros(out_shape)};
  REQUIRE(misaligned.execute(again).ok());
  CHECK(count_different(again[1].data, args[1].data) == 0);
}

TEST_CASE("xnnpack Winograd filters transformed ahead of time give the bits of filters transformed at init",
          "[xnnpack]") {
  REQUIRE(xnnpack::native_convolution_available());
  uint32_t seed = 720;
  for (const Geometry& g : geometries()) {
    if (g.kh != 3 || g.kw != 3 || g.sh != 1 || g.sw != 1) continue;
    INFO(g.name);
    const ConvData d = random_data(g, ++seed);
    for (size_t tile : {4, 2}) {
      INFO("F(" << tile << "x" << tile << ", 3x3)");
      const std::vector<Spec>& specs = tile == 4 ? kWinograd4x4 : kWinograd2x2;
      for (int threads : {1, 2}) {
        INFO(threads << " thread(s)");
        const std::vector<float> at_init = run_conv(g, d, specs, threads);
        const std::vector<float> ahead = run_conv(g, d, specs, threads, false, tile);
        CHECK(count_far(ahead, reference(g, d.x, d.filter, d.bias), 1e-4) == 0);
        CHECK(count_different(ahead, at_init) == 0);
      }
      // The direct kernel and XNNPACK read the plain filter beside it.
      CHECK(count_different(run_conv(g, d, kOn, 0, false, tile), run_conv(g, d, kOn)) == 0);
      CHECK(count_different(run_conv(g, d, kOff, 0, false, tile), run_conv(g, d, kOff)) == 0);
    }
    // A filter transformed for the other variant than the spec names is
    // not read: the filter is transformed at init for the one named.
    CHECK(count_different(run_conv(g, d, kWinograd2x2, 1, false, 4), run_conv(g, d, kWinograd2x2, 1)) == 0);
    CHECK(count_different(run_conv(g, d, kWinograd4x4, 1, false, 2), run_conv(g, d, kWinograd4x4, 1)) == 0);
  }
}

TEST_CASE("xnnpack reads a Winograd filter transformed ahead of time in place from the blob", "[xnnpack]") {
  REQUIRE(xnnpack::native_convolution_available());
  // F(4x4, 3x3) at 28x28x64, F(2x2, 3x3) at 14x14x128: each the variant
  // "auto" takes for its shape, and Winograd pays there.
  for (const auto& [size, channels, tile] :
       std::vector<std::tuple<uint32_t, uint32_t, size_t>>{{28, 64, 4}, {14, 128, 2}}) {
    INFO("F(" << tile << "x" << tile << ", 3x3), " << size << "x" << size << "x" << channels);
    const Geometry g{.h = size, .w = size, .c = channels, .o = channels, .kh = 3, .kw = 3, .pad = kPad1};
    xnnpack::WinogradShape shape{1, size, size, channels, size, size, channels, 1, 1};
    REQUIRE(xnnpack::winograd_tile(shape) == tile);
    shape.tile = tile;
    REQUIRE(xnnpack::winograd_pays(shape, 1, xnnpack::core_fma_lanes()));
    const ConvData d = random_data(g, 810);
    const Shape in_shape = shape_of({1, size, size, channels}),
                out_shape = shape_of({1, size, size, channels});
    // Transformed at init: the blob can go, and what it holds afterwards
    // does not matter.
    XnnpackRunner at_init(1);
    REQUIRE(at_init.init(conv_blob(g, d)).ok());
    CHECK(at_init.freed_by_init());
    std::fill(at_init.blob().begin(), at_init.blob().end(), uint8_t{0});
    std::vector<testing::XnnpackArg> args = {{in_shape, d.x}, testing::zeros(out_shape)};
    REQUIRE(at_init.execute(args).ok());
    CHECK(count_different(args[1].data, run_conv(g, d, tile == 4 ? kWinograd4x4 : kWinograd2x2, 1)) == 0);
    // Transformed ahead of time: the blob stays, and every run reads the
    // transformed filter from it (zeros written there leave the bias alone
    // in every output).
    XnnpackRunner ahead(1);
    REQUIRE(ahead.init(conv_blob(g, d, 0, false, tile)).ok());
    CHECK_FALSE(ahead.freed_by_init());
    std::vector<testing::XnnpackArg> again = {{in_shape, d.x}, testing::zeros(out_shape)};
    REQUIRE(ahead.execute(again).ok());
    CHECK(count_different(again[1].data, args[1].data) == 0);
    std::fill(ahead.blob().begin(), ahead.blob().end(), uint8_t{0});
    REQUIRE(ahead.execute(again).ok());
    size_t not_bias = 0;
    for (size_t i = 0; i < again[1].data.size(); ++i) not_bias += again[1].data[i] != d.bias[i % channels];
    CHECK(not_bias == 0);
  }
}

TEST_CASE("xnnpack runs a filter packed for the direct kernel beside its Winograd transform", "[xnnpack]") {
  REQUIRE(xnnpack::native_convolution_available());
  // Preprocess writes both where Winograd pays on some cores or thread
  // counts and not others: Winograd reads the transform, the direct kernel
  // the panels, and XNNPACK the panels unpacked; each gives the bits it
  // gives from the plain filter.
  for (size_t tile : {size_t{4}, size_t{2}}) {
    INFO("F(" << tile << "x" << tile << ", 3x3)");
    const Geometry g{.h = 14, .w = 14, .c = 64, .o = 80, .kh = 3, .kw = 3, .pad = kPad1};
    const ConvData d = random_data(g, 830 + tile);
    const std::vector<Spec>& winograd = tile == 4 ? kWinograd4x4 : kWinograd2x2;
    for (int threads : {1, 2}) {
      INFO(threads << " threads");
      CHECK(count_different(run_conv(g, d, winograd, threads, true, tile),
                            run_conv(g, d, winograd, threads)) == 0);
      CHECK(count_different(run_conv(g, d, kOn, threads, true, tile), run_conv(g, d, kOn, threads)) == 0);
      CHECK(count_different(run_conv(g, d, kOff, threads, true, tile), run_conv(g, d, kOff, threads)) == 0);
    }
  }
}

// input -> conv(filter) -> output, where the test sets how `filter` is
// stored and what else reads it.
struct Damaged {
  std::string name;
  std::vector<uint8_t> blob;
  std::string message;
};

std::vector<Damaged> damaged_blobs() {
  const Geometry g = geometries()[0];
  const ConvData d = random_data(g, 900);
  const std::vector<float> panels = native_panels(g, d);
  std::vector<Damaged> cases;
  const auto conv = [&](XnnpackBlobBuilder& b, uint32_t x, uint32_t filter, uint32_t bias, uint32_t y) {
    set_window(b.node(NodeType::Convolution2d, {x, filter, bias}, {y}), g);
  };
  if (xnnpack::native_convolution_available()) {
    // The kernel reads the panels' biases: they must be the bias tensor's.
    XnnpackBlobBuilder b;
    const uint32_t x = b.input({1, 16, 16, 288}, 0);
    std::vector<float> other_bias = panels;
    other_bias[3] += 1.0f;
    const uint32_t w = b.packed_constant({64, 1, 1, 288}, other_bias);
    conv(b, x, w, b.constant({64}, d.bias), b.output({1, 16, 16, 64}, 0));
    cases.push_back({"panels whose bias differs from the bias tensor", b.build(),
                     "packed bias of output channel 3 differs from the bias tensor"});
  }
  {
    XnnpackBlobBuilder b;
    const uint32_t x = b.input({1, 16, 16, 288}, 0);
    std::vector<float> short_panels(panels.begin(), panels.end() - 32);
    const uint32_t w = b.packed_constant({64, 1, 1, 288}, short_panels);
    conv(b, x, w, b.constant({64}, d.bias), b.output({1, 16, 16, 64}, 0));
    cases.push_back({"panels one row short", b.build(), "packed in native panels"});
  }
  {
    XnnpackBlobBuilder b;
    const uint32_t x = b.input({1, 16, 16, 288}, 0);
    const uint32_t w = b.packed_constant({64, 1, 1, 288}, panels, static_cast<WeightPacking>(7));
    conv(b, x, w, b.constant({64}, d.bias), b.output({1, 16, 16, 64}, 0));
    cases.push_back({"an unknown packing", b.build(), "unknown weight packing 7"});
  }
  {
    XnnpackBlobBuilder b;
    const uint32_t x = b.input({1, 16, 16, 288}, 0);
    const uint32_t w = b.packed_constant({64, 1, 1, 288}, panels);
    conv(b, x, w, b.constant({64}, d.bias), b.output({1, 16, 16, 64}, 0));
    conv(b, x, w, b.constant({64}, d.bias), b.output({1, 16, 16, 64}, 1));
    cases.push_back(
        {"the filter of two convolutions", b.build(), "packed for the native kernel, as input 1"});
  }
  {
    XnnpackBlobBuilder b;
    const uint32_t x = b.input({1, 16, 16, 64}, 0);
    const uint32_t s =
        b.packed_constant({1, 1, 1, 64}, std::vector<float>(xnnpack::native_panels_floats(1, 64)));
    b.node(NodeType::Add, {x, s}, {b.output({1, 16, 16, 64}, 0)});
    cases.push_back({"read by an add", b.build(), "packed for the native kernel, as input 1"});
  }
  {
    XnnpackBlobBuilder b;
    const uint32_t x = b.input({1, 16, 16, 288}, 0);
    const uint32_t w = b.packed_constant({64, 1, 1, 288}, panels, WeightPacking::NativePanels, /*shift=*/4);
    conv(b, x, w, b.constant({64}, d.bias), b.output({1, 16, 16, 64}, 0));
    cases.push_back({"panels 4 bytes past a 64-byte boundary", b.build(), "not a multiple of 64"});
  }
  {
    XnnpackBlobBuilder b;
    const uint32_t x = b.input({1, 16, 16, 288}, 0);
    const uint32_t w = b.packed_constant({64, 1, 1, 288}, panels);
    std::vector<float> other = d.bias;
    other[37] += 1.0f;
    conv(b, x, w, b.constant({64}, other), b.output({1, 16, 16, 64}, 0));
    cases.push_back({"panel biases other than the bias tensor's", b.build(), "output channel 37 differs"});
  }
  {
    XnnpackBlobBuilder b;
    const uint32_t x = b.input({1, 16, 16, 64}, 0);
    const uint32_t s = b.packed_constant({64}, std::vector<float>(xnnpack::native_panels_floats(64, 1)));
    b.node(NodeType::Add, {x, s}, {b.output({1, 16, 16, 64}, 0)});
    cases.push_back({"a packed rank-1 constant", b.build(), "rank 2 or more"});
  }
  // A 3x3 convolution's filter transformed for Winograd, named by the
  // node's winograd_filter; `edit` damages the blob.
  const Geometry w3 = geometries()[1];  // 3x3 pad 1, 64->80, 12x12
  const ConvData d3 = random_data(w3, 910);
  const std::vector<float> form = winograd_form(w3, d3);
  using Edit = std::function<void(XnnpackBlobBuilder&, testing::XnnpackNodeSpec&)>;
  const auto winograd = [&](std::vector<uint64_t> form_dims, const std::vector<float>& form_data,
                            size_t shift = 0, const Edit& edit = {},
                            WeightPacking packing = WeightPacking::WinogradPanels) {
    XnnpackBlobBuilder b;
    const uint32_t x = b.input({1, 12, 12, 64}, 0);
    const uint32_t w = b.constant({80, 3, 3, 64}, d3.filter);
    auto& node =
        b.node(NodeType::Convolution2d, {x, w, b.constant({80}, d3.bias)}, {b.output({1, 12, 12, 80}, 0)});
    set_window(node, w3);
    node.winograd_filter =
        static_cast<int32_t>(b.packed_constant(std::move(form_dims), form_data, packing, shift));
    if (edit) edit(b, node);
    return b.build();
  };
  {
    const std::vector<float> short_form(form.begin(), form.end() - 32);
    cases.push_back({"a Winograd filter one row short", winograd({80, 3, 3, 64}, short_form),
                     "transformed for Winograd F(4x4, 3x3)"});
  }
  cases.push_back({"a filter transformed for F(4x4) marked F(2x2)",
                   winograd({80, 3, 3, 64}, form, 0, {}, WeightPacking::WinogradPanels2x2),
                   "transformed for Winograd F(2x2, 3x3) (" +
                       std::to_string(xnnpack::winograd_filter_floats(80, 64, 2) * 4) + " bytes)"});
  cases.push_back({"a Winograd filter 4 bytes past a 64-byte boundary", winograd({80, 3, 3, 64}, form, 4),
                   "not a multiple of 64"});
  cases.push_back({"a Winograd filter of rank 2",
                   winograd({80, 576}, std::vector<float>(xnnpack::winograd_filter_floats(80, 64, 4))),
                   "dims [out_c, 3, 3, in_c]"});
  cases.push_back({"a Winograd filter of other dims than the filter",
                   winograd({80, 3, 3, 32}, std::vector<float>(xnnpack::winograd_filter_floats(80, 32, 4))),
                   "its filter (tensor 1) [80, 3, 3, 64]"});
  cases.push_back({"winograd_filter past the tensors",
                   winograd({80, 3, 3, 64}, form, 0,
                            [](XnnpackBlobBuilder&, testing::XnnpackNodeSpec& n) { n.winograd_filter = 99; }),
                   "winograd_filter names tensor 99, past the"});
  cases.push_back({"winograd_filter naming the bias",
                   winograd({80, 3, 3, 64}, form, 0,
                            [](XnnpackBlobBuilder&, testing::XnnpackNodeSpec& n) {
                              n.winograd_filter = static_cast<int32_t>(n.inputs[2]);
                            }),
                   "not a constant transformed for Winograd"});
  cases.push_back(
      {"one Winograd filter named by two convolutions",
       winograd({80, 3, 3, 64}, form, 0,
                [&](XnnpackBlobBuilder& b, testing::XnnpackNodeSpec& n) {
                  auto& second = b.node(NodeType::Convolution2d, n.inputs, {b.output({1, 12, 12, 80}, 1)});
                  set_window(second, w3);
                  second.winograd_filter = n.winograd_filter;
                }),
       "also another node's winograd_filter"});
  {
    // A 1x1 convolution naming a 3x3 form.
    const Geometry g1 = geometries()[0];
    XnnpackBlobBuilder b;
    const uint32_t x = b.input({1, 16, 16, 288}, 0);
    const uint32_t w = b.constant({64, 1, 1, 288}, d.filter);
    auto& node =
        b.node(NodeType::Convolution2d, {x, w, b.constant({64}, d.bias)}, {b.output({1, 16, 16, 64}, 0)});
    set_window(node, g1);
    node.winograd_filter = static_cast<int32_t>(
        b.packed_constant({64, 3, 3, 288}, std::vector<float>(xnnpack::winograd_filter_floats(64, 288, 4)),
                          WeightPacking::WinogradPanels));
    cases.push_back({"a Winograd filter on a 1x1 convolution", b.build(), "runs as Winograd"});
  }
  {
    XnnpackBlobBuilder b;
    const uint32_t x = b.input({80, 3, 3, 64}, 0);
    const uint32_t f = b.packed_constant({80, 3, 3, 64}, form, WeightPacking::WinogradPanels);
    b.node(NodeType::Add, {x, f}, {b.output({80, 3, 3, 64}, 0)});
    cases.push_back({"a Winograd filter read by an add", b.build(), "transformed for Winograd, as input 1"});
  }
  {
    XnnpackBlobBuilder b;
    const uint32_t x = b.input({1, 12, 12, 64}, 0);
    // (Beside panels for the direct kernel it is valid: a test above.)
    const uint32_t w = b.packed_constant({80, 3, 3, 64}, form, WeightPacking::WinogradPanels);
    auto& node =
        b.node(NodeType::Convolution2d, {x, w, b.constant({80}, d3.bias)}, {b.output({1, 12, 12, 80}, 0)});
    set_window(node, w3);
    node.winograd_filter =
        static_cast<int32_t>(b.packed_constant({80, 3, 3, 64}, form, WeightPacking::WinogradPanels));
    cases.push_back(
        {"a Winograd filter beside another as the filter", b.build(), "[80, 3, 3, 64] packed for Winograd"});
  }
  return cases;
}

TEST_CASE("xnnpack runs a classifier head from its packed weights, whatever window fields its node holds",
          "[xnnpack]") {
  REQUIRE(xnnpack::native_convolution_available());
  // [1, 4096] x [64, 4096]^T: one row against 1 MiB of weights, native
  // under "auto"; the node also carries a 3x3 window, stride and padding,
  // which a fully connected node has no use for.
  const Geometry g{.h = 1, .w = 1, .c = 4096, .o = 64};
  const ConvData d = random_data(g, 950);
  XnnpackBlobBuilder b;
  const uint32_t x = b.input({1, 4096}, 0);
  const uint32_t w = b.packed_constant({64, 4096}, native_panels(g, d));
  const uint32_t y = b.output({1, 64}, 0);
  auto& node = b.node(NodeType::FullyConnected, {x, w, b.constant({64}, d.bias)}, {y});
  node.kernel = {3, 3};
  node.stride = {2, 2};
  node.padding = {1, 1, 1, 1};
  const std::vector<uint8_t> blob = b.build();
  std::vector<float> want(64);
  for (size_t o = 0; o < 64; ++o) {
    double acc = d.bias[o];
    for (size_t k = 0; k < 4096; ++k) acc += double(d.x[k]) * double(d.filter[o * 4096 + k]);
    want[o] = static_cast<float>(acc);
  }
  for (int threads : {1, 2}) {
    INFO(threads << " thread(s)");
    XnnpackRunner runner(threads);
    const Status s = runner.init(blob);
    INFO(s.message());
    REQUIRE(s.ok());
    CHECK_FALSE(runner.freed_by_init());  // read in place: native
    std::vector<testing::XnnpackArg> args = {{Shape{1, 4096}, d.x}, testing::zeros(Shape{1, 64})};
    REQUIRE(runner.execute(args).ok());
    CHECK(count_far(args[1].data, want, 1e-4) == 0);
  }
}

TEST_CASE("xnnpack refuses damaged packed weights, naming the tensor and the reason", "[xnnpack]") {
  for (const Damaged& c : damaged_blobs()) {
    INFO(c.name);
    XnnpackRunner runner;
    const Status s = runner.init(c.blob);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error() == Error::InvalidProgram);
    INFO(s.message());
    CHECK(s.message().find(c.message) != std::string::npos);
    CHECK(s.message().find("tensor ") != std::string::npos);
  }
}

}  // namespace
}  // namespace etc
