// conv → convolution_2d or depthwise_convolution_2d; conv_transpose →
// deconvolution_2d. Filters are rewritten into XNNPACK's layouts:
//   convolution   ONNX [M, C/g, kh, kw]      → [M, kh, kw, C/g]  (OHWI)
//   depthwise     ONNX [C*m, 1, kh, kw]      → [1, kh, kw, C*m]
//   deconvolution ONNX [C, M/g, kh, kw]      → [g*M/g, kh, kw, C/g]
#include "partitioners/xnnpack/xnnpack_rules.h"
#include "preprocessors/xnnpack/lowering.h"

namespace etc::xnnpack {
namespace {

std::vector<uint32_t> u32(const std::vector<int64_t>& v) { return std::vector<uint32_t>(v.begin(), v.end()); }

// Edge pads (top, left, bottom, right) → XNNPACK's top, right, bottom, left.
std::vector<uint32_t> padding(const ir::Node& n) {
  std::vector<int64_t> p = attr_ints(n, "pads");
  p.resize(4, 0);
  return {uint32_t(p[0]), uint32_t(p[3]), uint32_t(p[2]), uint32_t(p[1])};
}

std::vector<uint32_t> pair_attr(const ir::Node& n, const char* name) {
  std::vector<int64_t> v = attr_ints(n, name);
  v.resize(2, 1);
  return u32(v);
}

// Relaid out as the blob is written (BlobWriter::add_constant with a fill),
// from the graph's constant: a model's filters are most of its weights.
uint32_t conv_filter(Lowering& l, ir::ValueId w) {
  return l.constant(w, kConvFilter, [&] {
    const Shape& s = shape_of(l.graph(), w);
    const int64_t m = s[0], c = s[1], kh = s[2], kw = s[3];
    const std::span<const float> src = l.float_view(w);
    return l.blob().add_constant(
        {uint64_t(m), uint64_t(kh), uint64_t(kw), uint64_t(c)}, src.size(), [src, m, c, kh, kw](float* dst) {
          for (int64_t o = 0; o < m; ++o)
            for (int64_t i = 0; i < c; ++i)
              for (int64_t y = 0; y < kh; ++y)
                for (int64_t x = 0; x < kw; ++x)
                  dst[((o * kh + y) * kw + x) * c + i] = src[((o * c + i) * kh + y) * kw + x];
        });
  });
}

uint32_t depthwise_filter(Lowering& l, ir::ValueId w) {
  return l.constant(w, kDepthwiseFilter, [&] {
    const Shape& s = shape_of(l.graph(), w);
    const int64_t m = s[0], khw = s[2] * s[3];
    const std::span<const float> src = l.float_view(w);
    std::vector<float> dst(src.size());
    for (int64_t o = 0; o < m; ++o)
      for (int64_t p = 0; p < khw; ++p) dst[p * m + o] = src[o * khw + p];
    return l.blob().add_constant({1, uint64_t(s[2]), uint64_t(s[3]), uint64_t(m)}, std::move(dst));
  });
}

uint32_t deconv_filter(Lowering& l, ir::ValueId w, int64_t groups) {
  return l.constant(w, kDeconvFilter, [&] {
    const Shape& s = shape_of(l.graph(), w);
    const int64_t cin = s[0], mg = s[1], kh = s[2], kw = s[3], cg = cin / groups;
    const std::span<const float> src = l.float_view(w);
    std::vector<float> dst(src.size());
    for (int64_t gi = 0; gi < groups; ++gi)
      for (int64_t o = 0; o < mg; ++o)
        for (int64_t i = 0; i < cg; ++i)
          for (int64_t y = 0; y < kh; ++y)
            for (int64_t x = 0; x < kw; ++x)
              dst[(((gi * mg + o) * kh + y) * kw + x) * cg + i] =
                  src[(((gi * cg + i) * mg + o) * kh + y) * kw + x];
    return l.blob().add_constant({uint64_t(groups * mg), uint64_t(kh), uint64_t(kw), uint64_t(cg)},
                                 std::move(dst));
  });
}

// The bias, or zeros when the node has none (XNNPACK's convolution takes one).
uint32_t bias(Lowering& l, const ir::Node& n, int64_t channels) {
  if (present(n, 2))
    return l.constant(n.inputs[2], kBias,
                      [&] { return l.blob().add_constant({uint64_t(channels)}, l.floats(n.inputs[2])); });
  return l.blob().add_constant({uint64_t(channels)}, std::vector<float>(channels, 0.0f));
}

}  // namespace

void emit_conv(Lowering& l, const ir::Node& n) {
  const Shape& x = shape_of(l.graph(), n.inputs[0]);
  const Shape& w = shape_of(l.graph(), n.inputs[1]);
  const int64_t groups = attr_int(n, "group", 1);
  const bool depthwise = is_depthwise_conv(l.graph(), n);
  const uint32_t in = l.value(n.inputs[0]);
  const uint32_t filter = depthwise ? depthwise_filter(l, n.inputs[1]) : conv_filter(l, n.inputs[1]);
  const uint32_t b = bias(l, n, w[0]);
  const uint32_t out = l.value(n.outputs[0]);
  NodeRecord& r =
      l.add_node(depthwise ? fb::NodeType::DepthwiseConvolution2d : fb::NodeType::Convolution2d, n);
  r.inputs = {in, filter, b};
  r.outputs = {out};
  r.padding = padding(n);
  r.kernel = {uint32_t(w[2]), uint32_t(w[3])};
  r.stride = pair_attr(n, "strides");
  r.dilation = pair_attr(n, "dilations");
  if (depthwise) {
    r.depth_multiplier = static_cast<uint32_t>(w[0] / x[1]);
    r.input_channels = static_cast<uint64_t>(x[1]);
  } else {
    r.groups = static_cast<uint32_t>(groups);
    r.group_input_channels = static_cast<uint64_t>(x[1] / groups);
    r.group_output_channels = static_cast<uint64_t>(w[0] / groups);
  }
  set_output_range(r, n);
}

void emit_conv_transpose(Lowering& l, const ir::Node& n) {
  const Shape& w = shape_of(l.graph(), n.inputs[1]);
  const int64_t groups = attr_int(n, "group", 1);
  const int64_t out_channels = w[1] * groups;
  const uint32_t in = l.value(n.inputs[0]);
  const uint32_t filter = deconv_filter(l, n.inputs[1], groups);
  const uint32_t b = bias(l, n, out_channels);
  const uint32_t out = l.value(n.outputs[0]);
  NodeRecord& r = l.add_node(fb::NodeType::Deconvolution2d, n);
  r.inputs = {in, filter, b};
  r.outputs = {out};
  r.padding = padding(n);
  std::vector<int64_t> adjustment = attr_ints(n, "output_padding");
  adjustment.resize(2, 0);
  r.adjustment = u32(adjustment);
  r.kernel = {uint32_t(w[2]), uint32_t(w[3])};
  r.stride = pair_attr(n, "strides");
  r.dilation = pair_attr(n, "dilations");
  r.groups = static_cast<uint32_t>(groups);
  r.group_input_channels = static_cast<uint64_t>(w[0] / groups);
  r.group_output_channels = static_cast<uint64_t>(w[1]);
  set_output_range(r, n);
}

}  // namespace etc::xnnpack
