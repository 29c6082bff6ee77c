#include "compiler/passes/trim_conv_taps.h"

#include <algorithm>
#include <string>
#include <vector>

#include "compiler/ir/node_attrs.h"

namespace etc::passes {
namespace {

struct Trim {
  int64_t first = 0, last = 0;  // the kept taps [first, last]
};

// The taps of one spatial dim that some output reads inside the input.
// Empty range (first > last) when there is none.
Trim reached_taps(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t dilation,
                  int64_t pad_begin) {
  Trim t{kernel, -1};
  for (int64_t k = 0; k < kernel; ++k) {
    // Output o reads input index lo + o * stride; the first o at or past
    // index 0 is the one to check against the input's end.
    const int64_t lo = k * dilation - pad_begin;
    const int64_t first = lo >= 0 ? 0 : (-lo + stride - 1) / stride;
    if (first < out && lo + first * stride < in) {
      t.first = std::min(t.first, k);
      t.last = k;
    }
  }
  return t;
}

bool trim(ir::Graph& g, ir::Node& conv) {
  if (conv.inputs.size() < 2) return false;
  const ir::Value& wv = g.value(conv.inputs[1]);
  if (!wv.is_constant() || wv.spec.dtype != DType::Float32) return false;
  const Shape& x = g.value(conv.inputs[0]).spec.shape;
  const Shape& y = g.value(conv.outputs[0]).spec.shape;
  const Shape& w = wv.spec.shape;
  const int spatial = w.rank() - 2;
  if (spatial < 1 || x.rank() != w.rank() || y.rank() != w.rank()) return false;
  std::vector<int64_t> pads = ir::attr_ints(conv, "pads"), strides = ir::attr_ints(conv, "strides"),
                       dilations = ir::attr_ints(conv, "dilations");
  if (pads.size() != static_cast<size_t>(2 * spatial) || strides.size() != static_cast<size_t>(spatial) ||
      dilations.size() != static_cast<size_t>(spatial))
    return false;
  std::vector<Trim> keep(static_cast<size_t>(spatial));
  bool smaller = false;
  for (int d = 0; d < spatial; ++d) {
    const size_t i = static_cast<size_t>(d);
    const int64_t k = w[d + 2];
    keep[i] = reached_taps(x[d + 2], y[d + 2], k, strides[i], dilations[i], pads[i]);
    if (keep[i].first > keep[i].last) return false;  // an output of bias alone: left as written
    const int64_t begin = pads[i] - keep[i].first * dilations[i];
    const int64_t end = pads[i + spatial] - (k - 1 - keep[i].last) * dilations[i];
    if (begin < 0 || end < 0) return false;
    smaller = smaller || keep[i].first > 0 || keep[i].last < k - 1;
  }
  if (!smaller) return false;
  // The kept weights: every [M, C/g] pair's window cut to the kept taps.
  Shape trimmed = w;
  for (int d = 0; d < spatial; ++d)
    trimmed[d + 2] = keep[static_cast<size_t>(d)].last - keep[static_cast<size_t>(d)].first + 1;
  const int64_t planes = w[0] * w[1];
  int64_t old_window = 1, new_window = 1;
  for (int d = 0; d < spatial; ++d) old_window *= w[d + 2], new_window *= trimmed[d + 2];
  const float* src = wv.constant_as<float>();
  std::vector<float> out(static_cast<size_t>(planes * new_window));
  std::vector<int64_t> at(static_cast<size_t>(spatial), 0);  // index in the trimmed window
  for (int64_t t = 0; t < new_window; ++t) {
    int64_t offset = 0;
    for (int d = 0; d < spatial; ++d)
      offset = offset * w[d + 2] + at[static_cast<size_t>(d)] + keep[static_cast<size_t>(d)].first;
    for (int64_t p = 0; p < planes; ++p)
      out[static_cast<size_t>(p * new_window + t)] = src[p * old_window + offset];
    for (int d = spatial - 1; d >= 0; --d) {
      if (++at[static_cast<size_t>(d)] < trimmed[d + 2]) break;
      at[static_cast<size_t>(d)] = 0;
    }
  }
  for (int d = 0; d < spatial; ++d) {
    const size_t i = static_cast<size_t>(d);
    pads[i] -= keep[i].first * dilations[i];
    pads[i + spatial] -= (w[d + 2] - 1 - keep[i].last) * dilations[i];
  }
  const auto* bytes = reinterpret_cast<const uint8_t*>(out.data());
  conv.inputs[1] =
      g.add_constant(wv.name + "_trimmed", TensorSpec{DType::Float32, trimmed},
                     std::make_shared<const std::vector<uint8_t>>(bytes, bytes + out.size() * sizeof(float)));
  conv.attrs.set("pads", pads);
  return true;
}

}  // namespace

size_t trim_conv_taps(ir::Graph& g) {
  size_t trimmed = 0;
  for (ir::Node& n : g.nodes())
    if (!n.dead && n.delegate < 0 && n.op == EdgeOp::Conv && trim(g, n)) ++trimmed;
  return trimmed;
}

}  // namespace etc::passes
