// XNNPACK preprocess: blob structure, weight layouts, layout flags, fusion
// and the debug handle map.
#include "preprocessors/xnnpack/xnnpack_preprocess.h"

#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cstring>
#include <utility>

#include "compiler/common/compile_error.h"
#include "preprocessors/xnnpack/blob_writer.h"
#include "runtime/backends/xnnpack/native_plan.h"
#include "runtime/backends/xnnpack/xnnpack_blob.h"
#include "tests/support/graph_builder.h"

namespace etc {
namespace {

using testing::GraphBuilder;
namespace fb = xnnpack::fb;

ir::Attrs conv_attrs(int64_t group, std::vector<int64_t> pads) {
  return ir::Attrs{{"strides", std::vector<int64_t>{1, 1}},
                   {"pads", pads},
                   {"dilations", std::vector<int64_t>{1, 1}},
                   {"group", group}};
}

std::vector<float> iota(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i);
  return v;
}

struct Blob {
  std::vector<uint8_t> bytes;
  const fb::Graph* graph = nullptr;
  size_t base = 0;

  explicit Blob(std::vector<uint8_t> b) : bytes(std::move(b)) {
    REQUIRE(bytes.size() >= 4);
    uint32_t size = 0;
    std::memcpy(&size, bytes.data(), 4);
    base = xnnpack::xnnpack_constant_base(size);
    REQUIRE(base <= bytes.size());
    flatbuffers::Verifier verifier(bytes.data(), 4 + size_t{size});
    REQUIRE(fb::VerifySizePrefixedGraphBuffer(verifier));
    REQUIRE(flatbuffers::BufferHasIdentifier(bytes.data(), xnnpack::kXnnpackBlobIdentifier, true));
    graph = fb::GetSizePrefixedGraph(bytes.data());
  }
  const fb::Tensor& tensor(uint32_t id) const { return *graph->tensors()->Get(id); }
  std::vector<uint64_t> dims(uint32_t id) const {
    const auto* d = tensor(id).dims();
    return std::vector<uint64_t>(d->begin(), d->end());
  }
  std::vector<float> data(uint32_t id) const {
    const fb::Tensor& t = tensor(id);
    REQUIRE(t.constant_size() > 0);
    REQUIRE(t.constant_offset() % 64 == 0);
    REQUIRE(base + t.constant_offset() + t.constant_size() <= bytes.size());
    std::vector<float> v(t.constant_size() / 4);
    std::memcpy(v.data(), bytes.data() + base + t.constant_offset(), t.constant_size());
    return v;
  }
};

TEST_CASE("xnnpack preprocess writes a conv with an OHWI filter and NHWC boundaries", "[xnnpack]") {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {1, 2, 4, 4});
  const auto w = b.constant_f32("w", {3, 2, 2, 2}, iota(24));  // [M=3, C=2, kh=2, kw=2]
  const auto bias = b.constant_f32("b", {3}, {1, 2, 3});
  ir::Attrs attrs = conv_attrs(1, {1, 0, 0, 1});  // top 1, left 0, bottom 0, right 1
  attrs.set("clamp_min", 0.0f);
  b.output(b.op(EdgeOp::Conv, {x, w, bias}, attrs));
  const Blob blob(xnnpack::XnnpackBackendDetails().preprocess(b.build(), {}).processed_bytes);

  const fb::Graph& g = *blob.graph;
  CHECK(g.version() == xnnpack::kXnnpackBlobVersion);
  CHECK(g.num_inputs() == 1);
  CHECK(g.num_outputs() == 1);
  REQUIRE(g.nodes()->size() == 1);
  const fb::Node& n = *g.nodes()->Get(0);
  CHECK(n.type() == fb::NodeType::Convolution2d);
  CHECK(std::vector<uint32_t>(n.padding()->begin(), n.padding()->end()) == std::vector<uint32_t>{1, 1, 0, 0});
  CHECK(n.groups() == 1);
  CHECK(n.group_input_channels() == 2);
  CHECK(n.group_output_channels() == 3);
  CHECK(n.output_min() == 0.0f);
  CHECK(std::isinf(n.output_max()));

  const uint32_t in = n.inputs()->Get(0), filter = n.inputs()->Get(1), out = n.outputs()->Get(0);
  CHECK(blob.tensor(in).external_input() == 0);
  CHECK(blob.tensor(in).layout() == fb::BoundaryLayout::NchwToNhwc);
  CHECK(blob.dims(in) == std::vector<uint64_t>{1, 4, 4, 2});
  CHECK(blob.tensor(out).external_output() == 0);
  CHECK(blob.tensor(out).layout() == fb::BoundaryLayout::NhwcToNchw);
  CHECK(blob.dims(out) == std::vector<uint64_t>{1, 4, 4, 3});
  CHECK(blob.dims(filter) == std::vector<uint64_t>{3, 2, 2, 2});
  // OHWI: filter[o][y][x][i] = w[o][i][y][x].
  const std::vector<float> f = blob.data(filter);
  for (int o = 0; o < 3; ++o)
    for (int i = 0; i < 2; ++i)
      for (int y = 0; y < 2; ++y)
        for (int xx = 0; xx < 2; ++xx)
          CHECK(f[((o * 2 + y) * 2 + xx) * 2 + i] == float(((o * 2 + i) * 2 + y) * 2 + xx));
  CHECK(blob.data(n.inputs()->Get(2)) == std::vector<float>{1, 2, 3});
}

TEST_CASE("xnnpack preprocess writes a depthwise conv with a [1, kh, kw, C*m] filter", "[xnnpack]") {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {1, 2, 5, 5});
  const auto w = b.constant_f32("w", {4, 1, 3, 3}, iota(36));  // C=2, multiplier 2
  b.output(b.op(EdgeOp::Conv, {x, w}, conv_attrs(2, {1, 1, 1, 1})));
  const Blob blob(xnnpack::XnnpackBackendDetails().preprocess(b.build(), {}).processed_bytes);
  const fb::Node& n = *blob.graph->nodes()->Get(0);
  CHECK(n.type() == fb::NodeType::DepthwiseConvolution2d);
  CHECK(n.depth_multiplier() == 2);
  CHECK(n.input_channels() == 2);
  const uint32_t filter = n.inputs()->Get(1);
  CHECK(blob.dims(filter) == std::vector<uint64_t>{1, 3, 3, 4});
  const std::vector<float> f = blob.data(filter);
  for (int o = 0; o < 4; ++o)
    for (int p = 0; p < 9; ++p) CHECK(f[p * 4 + o] == float(o * 9 + p));
  CHECK(blob.data(n.inputs()->Get(2)) == std::vector<float>(4, 0.0f));  // zero bias
}

TEST_CASE("xnnpack preprocess folds a relu into the conv and maps both handles", "[xnnpack]") {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {1, 2, 4, 4});
  const auto w = b.constant_f32("w", {2, 2, 1, 1}, iota(4));
  const auto c = b.op(EdgeOp::Conv, {x, w}, conv_attrs(1, {0, 0, 0, 0}));  // handle 1
  const auto r = b.op(EdgeOp::Relu, {c});                                  // handle 2
  const auto k = b.constant_f32("k", {2, 1, 1}, {2.0f, 3.0f});
  b.output(b.op(EdgeOp::Mul, {r, k}));  // handle 3
  const PreprocessResult result = xnnpack::XnnpackBackendDetails().preprocess(b.build(), {});
  const Blob blob(result.processed_bytes);
  REQUIRE(blob.graph->nodes()->size() == 2);
  const fb::Node& conv = *blob.graph->nodes()->Get(0);
  CHECK(conv.output_min() == 0.0f);
  CHECK(conv.debug_id() == 0);
  const fb::Node& mul = *blob.graph->nodes()->Get(1);
  // One value per channel: the native ChannelScale rather than XNNPACK's
  // broadcasting multiply.
  CHECK(mul.type() == fb::NodeType::ChannelScale);
  CHECK(mul.debug_id() == 1);
  // The [C, 1, 1] constant broadcasts over NHWC channels as [1, 1, 1, C].
  CHECK(blob.dims(mul.inputs()->Get(1)) == std::vector<uint64_t>{1, 1, 1, 2});
  CHECK(blob.data(mul.inputs()->Get(1)) == std::vector<float>{2.0f, 3.0f});
  const auto& map = std::get<IntDelegateDebugMap>(result.debug_handle_map);
  CHECK(map == IntDelegateDebugMap{{0, {1, 2}}, {1, {3}}});
}

TEST_CASE("xnnpack preprocess maps every XNNPACK node of one edge node to its handles", "[xnnpack]") {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {2, 3});
  const auto h = b.op(EdgeOp::HardSigmoid, {x}, ir::Attrs{{"alpha", 0.2f}, {"beta", 0.5f}});  // handle 1
  b.output(b.op(EdgeOp::Neg, {h}));                                                           // handle 2
  ir::ExportedProgram p = b.build();
  p.graph.node(0).meta.debug_handles = {1, 7};  // e.g. a node that a pass fused
  const PreprocessResult result = xnnpack::XnnpackBackendDetails().preprocess(p, {});
  const Blob blob(result.processed_bytes);
  REQUIRE(blob.graph->nodes()->size() == 3);
  CHECK(blob.graph->nodes()->Get(0)->type() == fb::NodeType::Multiply);
  CHECK(blob.graph->nodes()->Get(1)->type() == fb::NodeType::Add);
  CHECK(blob.graph->nodes()->Get(1)->output_min() == 0.0f);
  CHECK(blob.graph->nodes()->Get(1)->output_max() == 1.0f);
  for (uint32_t i = 0; i < 3; ++i) CHECK(blob.graph->nodes()->Get(i)->debug_id() == i);
  const auto& map = std::get<IntDelegateDebugMap>(result.debug_handle_map);
  CHECK(map == IntDelegateDebugMap{{0, {1, 7}}, {1, {1, 7}}, {2, {2}}});
}

TEST_CASE("xnnpack preprocess transposes fully connected filters and folds alpha and beta", "[xnnpack]") {
  GraphBuilder b;
  const auto a = b.input("a", DType::Float32, {2, 3});
  const auto w = b.constant_f32("w", {3, 2}, iota(6));  // [K=3, N=2]
  const auto c = b.constant_f32("c", {1, 2}, {1.0f, -1.0f});
  b.output(
      b.op(EdgeOp::Gemm, {a, w, c},
           ir::Attrs{{"trans_a", int64_t{0}}, {"trans_b", int64_t{0}}, {"alpha", 2.0f}, {"beta", 0.5f}}));
  const Blob blob(xnnpack::XnnpackBackendDetails().preprocess(b.build(), {}).processed_bytes);
  const fb::Node& n = *blob.graph->nodes()->Get(0);
  CHECK(n.type() == fb::NodeType::FullyConnected);
  CHECK(blob.dims(n.inputs()->Get(1)) == std::vector<uint64_t>{2, 3});
  CHECK(blob.data(n.inputs()->Get(1)) == std::vector<float>{0, 4, 8, 2, 6, 10});
  CHECK(blob.data(n.inputs()->Get(2)) == std::vector<float>{0.5f, -0.5f});
  CHECK(n.flags() == 0);
}

TEST_CASE("xnnpack preprocess keeps 4-D pads in ONNX order without spatial neighbours", "[xnnpack]") {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {1, 2, 3, 3});
  b.output(b.op(EdgeOp::Pad, {x},
                ir::Attrs{{"pads", std::vector<int64_t>{0, 1, 2, 3, 0, 4, 5, 6}},
                          {"mode", std::string("constant")},
                          {"value", 1.5f}}));
  const Blob blob(xnnpack::XnnpackBackendDetails().preprocess(b.build(), {}).processed_bytes);
  const fb::Node& n = *blob.graph->nodes()->Get(0);
  CHECK(n.type() == fb::NodeType::StaticConstantPad);
  CHECK(std::vector<uint64_t>(n.pre_paddings()->begin(), n.pre_paddings()->end()) ==
        std::vector<uint64_t>{0, 1, 2, 3});
  CHECK(blob.graph->tensors()->Get(n.inputs()->Get(0))->nchw());
}

TEST_CASE("xnnpack preprocess permutes 4-D pads to NHWC after a spatial node", "[xnnpack]") {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {1, 2, 3, 3});
  const auto slope = b.constant_f32("slope", {2, 1, 1}, {0.5f, 0.25f});
  b.output(b.op(EdgeOp::Pad, {b.op(EdgeOp::PRelu, {x, slope})},
                ir::Attrs{{"pads", std::vector<int64_t>{0, 1, 2, 3, 0, 4, 5, 6}},
                          {"mode", std::string("constant")},
                          {"value", 1.5f}}));
  const Blob blob(xnnpack::XnnpackBackendDetails().preprocess(b.build(), {}).processed_bytes);
  const fb::Node& n = *blob.graph->nodes()->Get(1);
  CHECK(n.type() == fb::NodeType::StaticConstantPad);
  CHECK(std::vector<uint64_t>(n.pre_paddings()->begin(), n.pre_paddings()->end()) ==
        std::vector<uint64_t>{0, 2, 3, 1});
  CHECK(std::vector<uint64_t>(n.post_paddings()->begin(), n.post_paddings()->end()) ==
        std::vector<uint64_t>{0, 5, 6, 4});
  CHECK(n.padding_value() == 1.5f);
}

// x [1, 64, 16, 16] -> 1x1 conv (64 -> 64, pays on the native kernel) ->
// 3x3 stride-1 conv (Winograd may pay) -> 3x3 stride-2 conv -> output; with
// `shared`, a fourth conv reuses the first one's filter.
ir::ExportedProgram conv_chain(bool shared = false) {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {1, 64, 16, 16});
  const auto w1 = b.constant_f32("w1", {64, 64, 1, 1}, iota(64 * 64));
  const auto w3 = b.constant_f32("w3", {64, 64, 3, 3}, iota(64 * 64 * 9));
  const auto ws = b.constant_f32("ws", {64, 64, 3, 3}, iota(64 * 64 * 9));
  const auto bias = b.constant_f32("b", {64}, iota(64));
  auto y = b.op(EdgeOp::Conv, {x, w1, bias}, conv_attrs(1, {0, 0, 0, 0}));
  y = b.op(EdgeOp::Conv, {y, w3, bias}, conv_attrs(1, {1, 1, 1, 1}));
  ir::Attrs stride2 = conv_attrs(1, {1, 1, 1, 1});
  stride2.set("strides", std::vector<int64_t>{2, 2});
  y = b.op(EdgeOp::Conv, {y, ws, bias}, stride2);
  if (shared) y = b.op(EdgeOp::Conv, {y, w1, bias}, conv_attrs(1, {0, 0, 0, 0}));
  b.output(y);
  return b.build();
}

// Per conv node: whether its filter is packed for the native kernel.
std::vector<bool> packed_filters(const Blob& blob) {
  std::vector<bool> packed;
  for (const fb::Node* n : *blob.graph->nodes())
    if (n->type() == fb::NodeType::Convolution2d)
      packed.push_back(blob.tensor(n->inputs()->Get(1)).packing() == fb::WeightPacking::NativePanels);
  return packed;
}

TEST_CASE("xnnpack preprocess packs the filters the native kernel takes, unless told not to", "[xnnpack]") {
  using Specs = std::vector<CompileSpec>;
  const auto compile = [](const ir::ExportedProgram& p, const Specs& specs) {
    return Blob(xnnpack::XnnpackBackendDetails().preprocess(p, specs).processed_bytes);
  };
  {
    const Blob blob = compile(conv_chain(), {});
    // The 3x3 stride-1 conv may run as Winograd: its transform is written
    // too (below), and the direct kernel's panels serve where Winograd
    // does not pay.
    CHECK(packed_filters(blob) == std::vector<bool>{true, true, true});
    const fb::Node& first = *blob.graph->nodes()->Get(0);
    const std::vector<float> panels = blob.data(first.inputs()->Get(1));
    REQUIRE(panels.size() == 2 * (32 + 64 * 32));
    // Panel 0: biases 0..31, then filter row k of channel j in lane j.
    CHECK(panels[5] == 5.0f);
    CHECK(panels[32 + 3 * 32 + 7] == static_cast<float>(7 * 64 + 3));
    // The second panel: channels 32..63.
    CHECK(panels[(32 + 64 * 32) + 32 + 10 * 32 + 1] == static_cast<float>(33 * 64 + 10));
    // The 3x3 stride-2 filter, relaid out to OHWI and packed as the blob is
    // written: row k = (y * 3 + x) * 64 + i of channel j holds ws[j][i][y][x].
    const std::vector<float> strided = blob.data(blob.graph->nodes()->Get(2)->inputs()->Get(1));
    REQUIRE(strided.size() == 2 * (32 + 9 * 64 * 32));
    for (const auto& [j, i, y, x] : {std::array<int, 4>{0, 0, 0, 0}, {5, 17, 1, 2}, {40, 63, 2, 1}}) {
      const int k = (y * 3 + x) * 64 + i;
      CHECK(strided[(j / 32) * (32 + 9 * 64 * 32) + 32 + k * 32 + j % 32] ==
            static_cast<float>(((j * 64 + i) * 3 + y) * 3 + x));
    }
  }
  CHECK(packed_filters(compile(conv_chain(), {CompileSpec::from_string("winograd", "off")})) ==
        std::vector<bool>{true, true, true});
  CHECK(packed_filters(compile(conv_chain(), {CompileSpec::from_string("prepack", "off")})) ==
        std::vector<bool>{false, false, false});
  CHECK(packed_filters(compile(conv_chain(), {CompileSpec::from_string("native_convolution", "off")})) ==
        std::vector<bool>{false, false, false});
  // A filter two convolutions read stays unpacked.
  CHECK(packed_filters(compile(conv_chain(true), {})) == std::vector<bool>{false, true, true, false});
  CHECK_THROWS_WITH(compile(conv_chain(), {CompileSpec::from_string("prepack", "yes")}),
                    Catch::Contains("prepack='yes'"));
}

// Per conv node: its winograd_filter.
std::vector<int32_t> winograd_filters(const Blob& blob) {
  std::vector<int32_t> ids;
  for (const fb::Node* n : *blob.graph->nodes())
    if (n->type() == fb::NodeType::Convolution2d) ids.push_back(n->winograd_filter());
  return ids;
}

TEST_CASE("xnnpack preprocess transforms the filters Winograd may run ahead of time, unless told not to",
          "[xnnpack]") {
  using Specs = std::vector<CompileSpec>;
  const auto compile = [](const ir::ExportedProgram& p, const Specs& specs) {
    return Blob(xnnpack::XnnpackBackendDetails().preprocess(p, specs).processed_bytes);
  };
  const Blob blob = compile(conv_chain(), {});
  // Only the 3x3 stride-1 conv: the tensor after every other.
  const uint32_t last = blob.graph->tensors()->size() - 1;
  REQUIRE(winograd_filters(blob) == std::vector<int32_t>{-1, static_cast<int32_t>(last), -1});
  const fb::Tensor& form = blob.tensor(last);
  CHECK(form.packing() == fb::WeightPacking::WinogradPanels);
  CHECK(blob.dims(last) == std::vector<uint64_t>{64, 3, 3, 64});
  // The filter stays, packed for the direct kernel; unpacked it is OHWI:
  // w3[o][i][y][x] at [o][y][x][i].
  const uint32_t filter_id = blob.graph->nodes()->Get(1)->inputs()->Get(1);
  CHECK(blob.tensor(filter_id).packing() == fb::WeightPacking::NativePanels);
  const std::vector<float> packed = blob.data(filter_id);
  REQUIRE(packed.size() == xnnpack::native_panels_floats(64, 9 * 64));
  std::vector<float> plain(64 * 9 * 64);
  xnnpack::unpack_native_panels(packed.data(), 64, 9 * 64, plain.data());
  CHECK(plain[((5 * 3 + 2) * 3 + 1) * 64 + 17] == static_cast<float>(((5 * 64 + 17) * 3 + 2) * 3 + 1));
  // The form holds the plain filter's transform, bit for bit, and lies
  // with the packed constants after the plain ones.
  const std::vector<float> transformed = blob.data(last);
  // F(4x4, 3x3): the variant winograd_tile takes for 16x16x64.
  std::vector<float> want(xnnpack::winograd_filter_floats(64, 64, 4));
  xnnpack::transform_winograd_filter(plain.data(), 64, 64, 4, want.data());
  REQUIRE(transformed.size() == want.size());
  CHECK(std::memcmp(transformed.data(), want.data(), want.size() * sizeof(float)) == 0);
  for (uint32_t t = 0; t < last; ++t)
    if (blob.tensor(t).constant_size() > 0 && blob.tensor(t).packing() == fb::WeightPacking::Plain)
      CHECK(blob.tensor(t).constant_offset() < form.constant_offset());

  for (const char* off : {"winograd", "prepack", "native_convolution"})
    CHECK(winograd_filters(compile(conv_chain(), {CompileSpec::from_string(off, "off")})) ==
          std::vector<int32_t>{-1, -1, -1});
  // prepack=panels: the panels alone.
  const Blob panels = compile(conv_chain(), {CompileSpec::from_string("prepack", "panels")});
  CHECK(winograd_filters(panels) == std::vector<int32_t>{-1, -1, -1});
  CHECK(packed_filters(panels) == std::vector<bool>{true, false, true});
  // Under winograd=on, still only the one Winograd applies to.
  const Blob on = compile(conv_chain(), {CompileSpec::from_string("winograd", "on")});
  CHECK(winograd_filters(on)[0] == -1);
  CHECK(winograd_filters(on)[1] >= 0);
  CHECK(winograd_filters(on)[2] == -1);
  // winograd=2x2 and 4x4: that variant's transform.
  for (const auto& [value, tile] : {std::pair<const char*, size_t>{"2x2", 2}, {"4x4", 4}}) {
    INFO("winograd=" << value);
    const Blob forced = compile(conv_chain(), {CompileSpec::from_string("winograd", value)});
    REQUIRE(winograd_filters(forced)[1] >= 0);
    const auto id = static_cast<uint32_t>(winograd_filters(forced)[1]);
    CHECK(forced.tensor(id).packing() == xnnpack::winograd_packing(tile));
    std::vector<float> want_forced(xnnpack::winograd_filter_floats(64, 64, tile));
    xnnpack::transform_winograd_filter(plain.data(), 64, 64, tile, want_forced.data());
    const std::vector<float> got = forced.data(id);
    REQUIRE(got.size() == want_forced.size());
    CHECK(std::memcmp(got.data(), want_forced.data(), got.size() * sizeof(float)) == 0);
  }
  CHECK_THROWS_WITH(compile(conv_chain(), {CompileSpec::from_string("winograd", "2")}),
                    Catch::Contains("winograd='2' (expected auto, on, 2x2, 4x4 or off)"));
}

TEST_CASE("xnnpack preprocess transforms for Winograd the filters it pays for on the cores named",
          "[xnnpack]") {
  using Specs = std::vector<CompileSpec>;
  const auto compile = [](const Specs& specs) {
    // googlenet's 16->32 3x3 layer at 28x28: Winograd pays where a core
    // retires 16 multiply-adds a cycle, not 32.
    GraphBuilder b;
    const auto x = b.input("x", DType::Float32, {1, 16, 28, 28});
    const auto w = b.constant_f32("w", {32, 16, 3, 3}, iota(32 * 16 * 9));
    b.output(b.op(EdgeOp::Conv, {x, w, b.constant_f32("b", {32}, iota(32))}, conv_attrs(1, {1, 1, 1, 1})));
    return Blob(xnnpack::XnnpackBackendDetails().preprocess(b.build(), specs).processed_bytes);
  };
  CHECK(winograd_filters(compile({}))[0] >= 0);
  CHECK(winograd_filters(compile({CompileSpec::from_string("fma_lanes", "any")}))[0] >= 0);
  CHECK(winograd_filters(compile({CompileSpec::from_string("fma_lanes", "16")}))[0] >= 0);
  CHECK(winograd_filters(compile({CompileSpec::from_string("fma_lanes", "32")}))[0] == -1);
  // Either way the direct kernel's panels are there.
  CHECK(packed_filters(compile({CompileSpec::from_string("fma_lanes", "32")})) == std::vector<bool>{true});
  CHECK(packed_filters(compile({})) == std::vector<bool>{true});
  CHECK_THROWS_WITH(compile({CompileSpec::from_string("fma_lanes", "8")}),
                    Catch::Contains("fma_lanes='8' (expected any, 16 or 32)"));
}

TEST_CASE("xnnpack blob writer fills every constant in its place, and reports a fill that fails",
          "[xnnpack]") {
  // The fills run on several threads: each constant still holds its own.
  xnnpack::BlobWriter writer;
  for (uint32_t i = 0; i < 64; ++i)
    writer.add_constant({i + 1}, i + 1,
                        [i](float* out) { std::fill(out, out + i + 1, static_cast<float>(i)); });
  const Blob blob(writer.finish(0, 0, {}));
  for (uint32_t i = 0; i < 64; ++i) CHECK(blob.data(i) == std::vector<float>(i + 1, static_cast<float>(i)));

  xnnpack::BlobWriter failing;
  for (uint32_t i = 0; i < 16; ++i)
    failing.add_constant({4}, 4, [i](float* out) {
      if (i == 9) throw CompileError("constant 9 cannot be written");
      std::fill(out, out + 4, 1.0f);
    });
  CHECK_THROWS_WITH(failing.finish(0, 0, {}), Catch::Contains("constant 9 cannot be written"));
}

TEST_CASE("xnnpack preprocess names the node it cannot lower", "[xnnpack]") {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {4});
  b.output(b.op(EdgeOp::Sin, {x}));
  CHECK_THROWS_WITH(xnnpack::XnnpackBackendDetails().preprocess(b.build(), {}),
                    Catch::Contains("sin_1") && Catch::Contains("xnnpack: no XNNPACK node for 'sin'"));
}

}  // namespace
}  // namespace etc
