// A native pointwise convolution whose output only a depthwise convolution
// reads, larger than a core's cache, streams into it (stages.h
// StagePlan::expands_into, native_expand.h): the expanded tensor is never
// written, and the result matches a double-precision reference over
// strides, paddings, kernels, channel counts that are not a multiple of 16,
// several images and thread counts (chunks of rows that share input rows);
// the pair stays apart where the expanded tensor is read elsewhere or fits
// in cache.
#include <xnnpack.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <vector>

#include "runtime/backends/xnnpack/blob_reader.h"
#include "runtime/backends/xnnpack/native_conv.h"
#include "runtime/backends/xnnpack/stages.h"
#include "tests/support/native_conv_fixtures.h"
#include "tests/support/xnnpack_blob_builder.h"

namespace etc {
namespace {

using namespace testing::native_conv;
using testing::XnnpackBlobBuilder;
using xnnpack::fb::NodeType;

struct Block {
  const char* name;
  uint64_t n, h, w, c, e;           // input [n, h, w, c], expanded to e channels
  uint32_t k, s, pad;               // the depthwise window: k x k, stride s, padding pad on every side
  bool swish_expand;                // the expansion's activation: x * sigmoid(x) (else a [0, 6] clamp)
  bool swish_depthwise;             // x * sigmoid(x) after the depthwise convolution (else none)
  bool expanded_is_output = false;  // the expanded tensor is delegate output 1 too
  bool affine = false;              // then * 0.75 + 0.5 (a scalar Multiply and Add)

  Geometry expand() const { return Geometry{.n = n, .h = h, .w = w, .c = c, .o = e}; }
  Geometry depthwise() const {
    return Geometry{.n = n,
                    .h = h,
                    .w = w,
                    .c = e,
                    .o = e,
                    .kh = k,
                    .kw = k,
                    .sh = s,
                    .sw = s,
                    .pad = {pad, pad, pad, pad},
                    .groups = static_cast<uint32_t>(e)};
  }
};

struct BlockData {
  ConvData expand, depthwise;  // depthwise filter OHWI with one input channel: [e][k][k]
};

// x*sigmoid(x) as a Sigmoid and a Multiply, or the tensor itself.
uint32_t activation(XnnpackBlobBuilder& b, uint32_t t, std::vector<uint64_t> dims, bool swish, uint32_t out) {
  if (!swish) return t;
  const uint32_t s = b.tensor(dims);
  b.node(NodeType::Sigmoid, {t}, {s});
  b.node(NodeType::Multiply, {t, s}, {out});
  return out;
}

// x (input 0) -> 1x1 conv [-> swish] -> t -> depthwise [-> swish] -> y (output 0).
std::vector<uint8_t> block_blob(const Block& q, const BlockData& d) {
  const Geometry ge = q.expand(), gd = q.depthwise();
  XnnpackBlobBuilder b;
  const uint32_t x = b.input({q.n, q.h, q.w, q.c}, 0);
  const std::vector<uint64_t> expanded = {q.n, q.h, q.w, q.e}, out = {q.n, gd.oh(), gd.ow(), q.e};
  const uint32_t t = q.expanded_is_output ? b.output(expanded, 1) : b.tensor(expanded);
  const uint32_t y = b.output(out, 0);
  const uint32_t e0 = q.swish_expand || q.affine ? b.tensor(expanded) : t;
  auto& conv =
      b.node(NodeType::Convolution2d,
             {x, b.constant({q.e, 1, 1, q.c}, d.expand.filter), b.constant({q.e}, d.expand.bias)}, {e0});
  set_window(conv, ge);
  if (!q.swish_expand) conv.output_min = 0.0f, conv.output_max = 6.0f;
  if (q.affine) {
    const uint32_t activated = b.tensor(expanded), scaled = b.tensor(expanded);
    activation(b, e0, expanded, q.swish_expand, q.swish_expand ? activated : e0);
    b.node(NodeType::Multiply, {q.swish_expand ? activated : e0, b.constant({1}, {0.75f})}, {scaled});
    b.node(NodeType::Add, {scaled, b.constant({1}, {0.5f})}, {t});
  } else {
    activation(b, e0, expanded, q.swish_expand, t);
  }
  // The blob's depthwise filter is [1, k, k, e].
  std::vector<float> filter(q.k * q.k * q.e);
  for (uint64_t ch = 0; ch < q.e; ++ch)
    for (uint64_t tap = 0; tap < q.k * q.k; ++tap)
      filter[tap * q.e + ch] = d.depthwise.filter[ch * q.k * q.k + tap];
  const uint32_t d0 = q.swish_depthwise ? b.tensor(out) : y;
  auto& dw = b.node(NodeType::DepthwiseConvolution2d,
                    {t, b.constant({1, q.k, q.k, q.e}, filter), b.constant({q.e}, d.depthwise.bias)}, {d0});
  set_window(dw, gd);
  dw.depth_multiplier = 1;
  dw.input_channels = q.e;
  activation(b, d0, out, q.swish_depthwise, y);
  return b.build();
}

void swish_in_place(std::vector<float>& v) {
  for (float& f : v) f = static_cast<float>(double(f) / (1.0 + std::exp(-double(f))));
}

std::vector<float> block_reference(const Block& q, const BlockData& d, const std::vector<float>& x) {
  Geometry ge = q.expand();
  if (!q.swish_expand) ge.lo = 0.0f, ge.hi = 6.0f;
  std::vector<float> t = reference(ge, x, d.expand.filter, d.expand.bias);
  if (q.swish_expand) swish_in_place(t);
  if (q.affine)
    for (float& f : t) f = f * 0.75f + 0.5f;
  std::vector<float> y = reference(q.depthwise(), t, d.depthwise.filter, d.depthwise.bias);
  if (q.swish_depthwise) swish_in_place(y);
  return y;
}

xnnpack::StagePlan plan_of(const std::vector<uint8_t>& blob, xnnpack::NativeConvolutions mode) {
  auto view = xnnpack::read_xnnpack_blob(blob.data(), blob.size());
  REQUIRE(view.ok());
  return xnnpack::plan_stages(view.get(), mode);
}

int64_t node_of_type(const std::vector<uint8_t>& blob, NodeType type) {
  auto view = xnnpack::read_xnnpack_blob(blob.data(), blob.size());
  REQUIRE(view.ok());
  const auto* nodes = view.get().graph->nodes();
  for (flatbuffers::uoffset_t n = 0; n < nodes->size(); ++n)
    if (nodes->Get(n)->type() == type) return n;
  return -1;
}

// Rows of images of `e` channels, enough that the expanded tensor (n x side
// x side x e floats) is larger than this CPU's per-core cache.
uint64_t side_beyond_cache(uint64_t n, uint64_t e) {
  const double pixels = static_cast<double>(xnnpack::core_cache_bytes()) / (4.0 * double(n * e));
  return static_cast<uint64_t>(std::ceil(std::sqrt(pixels))) + 3;
}

BlockData block_data(const Block& q, uint32_t seed) {
  BlockData d;
  d.expand = random_data(q.expand(), seed);
  d.depthwise = random_data(q.depthwise(), seed + 1);
  return d;
}

TEST_CASE("xnnpack streams an expansion into the depthwise convolution that reads it", "[xnnpack]") {
  REQUIRE(xnnpack::native_convolution_available());
  std::vector<Block> blocks;
  {
    const uint64_t side = side_beyond_cache(1, 48);
    blocks.push_back({"relu6 expansion, 3x3 stride 1", 1, side, side, 16, 48, 3, 1, 1, false, false});
  }
  {
    const uint64_t side = side_beyond_cache(2, 40);
    blocks.push_back({"swish on both, 3x3 stride 2, two images, 40 channels", 2, side, side + 1, 16, 40, 3, 2,
                      1, true, true});
  }
  {
    const uint64_t side = side_beyond_cache(1, 72);
    blocks.push_back(
        {"swish expansion, 5x5 stride 2 pad 2", 1, side + 2, side, 24, 72, 5, 2, 2, true, false});
  }
  {
    // PP-OCR's learnable affine blocks: a scalar multiply and add after the
    // activation, which the expansion's epilogue computes.
    const uint64_t side = side_beyond_cache(1, 40);
    Block relu6{
        "relu6 expansion, then * 0.75 + 0.5, 3x3 stride 2", 1, side, side, 16, 40, 3, 2, 1, false, false};
    relu6.affine = true;
    blocks.push_back(relu6);
    Block swish{
        "swish expansion, then * 0.75 + 0.5, 3x3 stride 1", 1, side, side, 16, 40, 3, 1, 1, true, false};
    swish.affine = true;
    blocks.push_back(swish);
  }
  for (const Block& q : blocks) {
    INFO(q.name << ", " << q.h << "x" << q.w);
    const BlockData d = block_data(q, 41);
    const std::vector<uint8_t> blob = block_blob(q, d);
    const int64_t conv = node_of_type(blob, NodeType::Convolution2d);
    const int64_t dw = node_of_type(blob, NodeType::DepthwiseConvolution2d);
    // The depthwise kernel that reads the expansion is AVX-512 alone:
    // without it the two run apart (and give the same outputs below).
    for (xnnpack::NativeConvolutions mode :
         {xnnpack::NativeConvolutions::kAuto, xnnpack::NativeConvolutions::kAll}) {
      const xnnpack::StagePlan plan = plan_of(blob, mode);
      if (!xnnpack::native_avx512_available()) {
        CHECK(plan.expands_into[static_cast<size_t>(conv)] == -1);
        CHECK(!plan.elided[static_cast<size_t>(dw)]);
        continue;
      }
      CHECK(plan.expands_into[static_cast<size_t>(conv)] == dw);
      CHECK(plan.elided[static_cast<size_t>(dw)]);
      CHECK(plan.folded_into[static_cast<size_t>(dw)] == conv);
      // The expanded tensor (the depthwise convolution's input) has no buffer.
      auto view = xnnpack::read_xnnpack_blob(blob.data(), blob.size());
      REQUIRE(view.ok());
      const uint32_t expanded =
          view.get().graph->nodes()->Get(static_cast<flatbuffers::uoffset_t>(dw))->inputs()->Get(0);
      CHECK(plan.offset_of[expanded] == xnnpack::kNoOffset);
    }
    CHECK(plan_of(blob, xnnpack::NativeConvolutions::kOff).expands_into[static_cast<size_t>(conv)] == -1);

    const std::vector<float> want = block_reference(q, d, d.expand.x);
    const uint64_t oh = q.depthwise().oh(), ow = q.depthwise().ow();
    for (const auto& [specs, threads] : std::vector<std::pair<std::vector<Spec>, int>>{
             {kAuto, 1}, {kAuto, 2}, {kAuto, 3}, {kOn, 2}, {kOff, 1}}) {
      INFO(specs[0].second << ", " << threads << " threads");
      SpecRunner runner(threads);
      REQUIRE(runner.init(blob, specs).ok());
      for (int run = 0; run < 2; ++run) {
        std::vector<float> x = d.expand.x, y(want.size(), -7.0f);
        REQUIRE(runner
                    .execute({{shape_of({q.n, q.h, q.w, q.c}), x.data()},
                              {shape_of({q.n, oh, ow, q.e}), y.data()}})
                    .ok());
        CHECK(count_far(y, want, 1e-4) == 0);
      }
    }
  }
}

TEST_CASE("xnnpack keeps an expansion apart where its output is read elsewhere or fits in cache",
          "[xnnpack]") {
  REQUIRE(xnnpack::native_convolution_available());
  const uint64_t side = side_beyond_cache(1, 48);
  Block read_elsewhere{"expanded tensor is an output", 1, side, side, 16, 48, 3, 1, 1, true, false, true};
  const std::vector<uint8_t> blob = block_blob(read_elsewhere, block_data(read_elsewhere, 43));
  const int64_t conv = node_of_type(blob, NodeType::Convolution2d);
  CHECK(plan_of(blob, xnnpack::NativeConvolutions::kAuto).expands_into[static_cast<size_t>(conv)] == -1);

  const Block small{"fits in cache", 1, 16, 16, 16, 48, 3, 1, 1, true, false};
  const BlockData d = block_data(small, 44);
  const std::vector<uint8_t> small_blob = block_blob(small, d);
  const xnnpack::StagePlan plan = plan_of(small_blob, xnnpack::NativeConvolutions::kAuto);
  CHECK(plan.expands_into[static_cast<size_t>(node_of_type(small_blob, NodeType::Convolution2d))] == -1);
  // And runs correctly apart.
  SpecRunner runner(2);
  REQUIRE(runner.init(small_blob, kAuto).ok());
  std::vector<float> x = d.expand.x, y(small.n * 16 * 16 * small.e, -7.0f);
  REQUIRE(
      runner.execute({{shape_of({1, 16, 16, 16}), x.data()}, {shape_of({1, 16, 16, 48}), y.data()}}).ok());
  CHECK(count_far(y, block_reference(small, d, d.expand.x), 1e-4) == 0);
}

}  // namespace
}  // namespace etc
