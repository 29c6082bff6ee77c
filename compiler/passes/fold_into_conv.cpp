#include "compiler/passes/fold_into_conv.h"

#include <cmath>
#include <cstring>

#include "compiler/passes/absorb.h"

namespace etc::passes {
namespace {

bool is_f32_constant(const ir::Graph& g, ir::ValueId v) {
  return v != ir::kNoValue && g.value(v).is_constant() && g.value(v).spec.dtype == DType::Float32;
}

std::vector<float> floats(const ir::Graph& g, ir::ValueId v) {
  const ir::Value& value = g.value(v);
  std::vector<float> out(static_cast<size_t>(value.spec.shape.numel()));
  std::memcpy(out.data(), value.constant->data(), out.size() * sizeof(float));
  return out;
}

ir::ConstantData to_bytes(const std::vector<float>& v) {
  const auto* p = reinterpret_cast<const uint8_t*>(v.data());
  return std::make_shared<const std::vector<uint8_t>>(p, p + v.size() * sizeof(float));
}

bool is_conv(EdgeOp op) { return op == EdgeOp::Conv || op == EdgeOp::ConvTranspose; }

int64_t group_of(const ir::Node& conv) {
  const ir::AttrValue* group = conv.attrs.find("group");
  return group != nullptr ? std::get<int64_t>(*group) : 1;
}

// A conv's output channels: its weights are [M, C/group, k...] for Conv and
// [C, M/group, k...] for ConvTranspose.
int64_t output_channels(const ir::Graph& g, const ir::Node& conv) {
  const Shape& w = g.value(conv.inputs[1]).spec.shape;
  return conv.op == EdgeOp::Conv ? w[0] : w[1] * group_of(conv);
}

// Multiplies every weight of output channel o by k[o].
void scale_output_channels(const ir::Graph& g, const ir::Node& conv, std::vector<float>& w,
                           const std::vector<float>& k) {
  const auto m = static_cast<size_t>(output_channels(g, conv));
  if (conv.op == EdgeOp::Conv) {
    const size_t per_channel = w.size() / m;
    for (size_t o = 0; o < m; ++o)
      for (size_t i = 0; i < per_channel; ++i) w[o * per_channel + i] *= k[o];
    return;
  }
  const Shape& shape = g.value(conv.inputs[1]).spec.shape;
  const auto in = static_cast<size_t>(shape[0]), per_group = static_cast<size_t>(shape[1]);
  const auto groups = static_cast<size_t>(group_of(conv));
  const size_t taps = w.size() / (in * per_group), in_per_group = in / groups;
  for (size_t ci = 0; ci < in; ++ci)
    for (size_t j = 0; j < per_group; ++j) {
      const float f = k[ci / in_per_group * per_group + j];
      for (size_t t = 0; t < taps; ++t) w[(ci * per_group + j) * taps + t] *= f;
    }
}

// The conv that produces `bn`'s input, if the fold applies.
ir::Node* foldable_conv(ir::Graph& g, const ir::Node& bn, const std::vector<std::vector<ir::NodeId>>& users) {
  const ir::ValueId x = bn.inputs[0];
  const ir::Value& xv = g.value(x);
  if (xv.producer < 0 || users[x].size() != 1) return nullptr;
  for (ir::ValueId out : g.outputs())
    if (out == x) return nullptr;
  ir::Node& conv = g.node(xv.producer);
  if (conv.dead || !is_conv(conv.op) || conv.outputs.size() != 1) return nullptr;
  if (!is_f32_constant(g, conv.inputs[1])) return nullptr;
  if (conv.inputs.size() > 2 && conv.inputs[2] != ir::kNoValue && !is_f32_constant(g, conv.inputs[2]))
    return nullptr;
  for (int i = 1; i <= 4; ++i)
    if (!is_f32_constant(g, bn.inputs[i])) return nullptr;
  return &conv;
}

void fold(ir::Graph& g, ir::Node& conv, ir::Node& bn) {
  const float eps = std::get<float>(*bn.attrs.find("epsilon"));
  const std::vector<float> gamma = floats(g, bn.inputs[1]), beta = floats(g, bn.inputs[2]);
  const std::vector<float> mean = floats(g, bn.inputs[3]), var = floats(g, bn.inputs[4]);
  const ir::Value& wv = g.value(conv.inputs[1]);
  const int64_t m = output_channels(g, conv);
  std::vector<float> w = floats(g, conv.inputs[1]);
  const bool has_bias = conv.inputs.size() > 2 && conv.inputs[2] != ir::kNoValue;
  std::vector<float> b =
      has_bias ? floats(g, conv.inputs[2]) : std::vector<float>(static_cast<size_t>(m), 0.0f);
  std::vector<float> s(static_cast<size_t>(m));
  for (int64_t c = 0; c < m; ++c) {
    s[c] = gamma[c] / std::sqrt(var[c] + eps);
    b[c] = (b[c] - mean[c]) * s[c] + beta[c];
  }
  scale_output_channels(g, conv, w, s);
  const TensorSpec wspec = wv.spec;
  const std::string wname = wv.name + "_bn";
  conv.inputs[1] = g.add_constant(wname, wspec, to_bytes(w));
  const ir::ValueId bias = g.add_constant(g.value(conv.outputs[0]).name + "_bn_bias",
                                          TensorSpec{DType::Float32, Shape{m}}, to_bytes(b));
  if (conv.inputs.size() > 2)
    conv.inputs[2] = bias;
  else
    conv.inputs.push_back(bias);
  absorb_node(g, conv, bn);
}

bool is_conv_output(const ir::Graph& g, ir::ValueId v, const std::vector<std::vector<ir::NodeId>>& users) {
  const ir::Value& value = g.value(v);
  if (value.producer < 0 || users[v].size() != 1) return false;
  for (ir::ValueId out : g.outputs())
    if (out == v) return false;
  const ir::Node& conv = g.node(value.producer);
  if (conv.dead || !is_conv(conv.op) || conv.outputs.size() != 1 || conv.inputs.size() < 2) return false;
  if (conv.attrs.find("clamp_min") || conv.attrs.find("clamp_max")) return false;
  if (!is_f32_constant(g, conv.inputs[1])) return false;
  return conv.inputs.size() < 3 || conv.inputs[2] == ir::kNoValue || is_f32_constant(g, conv.inputs[2]);
}

// The M per-channel values of constant `c` combined with a conv output of
// shape `y` ([N, M, ...]): one value for every channel, or one per channel
// on the axis that lines up with y's axis 1 under broadcasting. Empty when
// c is not such a constant or a value is not finite.
std::vector<float> per_channel(const ir::Graph& g, ir::ValueId c, const Shape& y) {
  if (!is_f32_constant(g, c) || y.rank() < 2) return {};
  const Shape& cs = g.value(c).spec.shape;
  const int64_t m = y[1];
  if (cs.rank() > y.rank()) return {};
  std::vector<float> v = floats(g, c);
  for (float f : v)
    if (!std::isfinite(f)) return {};
  if (v.size() == 1) return std::vector<float>(static_cast<size_t>(m), v[0]);
  const int64_t axis = cs.rank() - (y.rank() - 1);  // c's axis under y's axis 1
  if (axis < 0 || static_cast<int64_t>(v.size()) != m || cs[axis] != m) return {};
  for (int64_t i = 0; i < cs.rank(); ++i)
    if (i != axis && cs[i] != 1) return {};
  return v;
}

// Folds binary node `n` into the conv producing operand `y`, if it applies.
bool fold_affine(ir::Graph& g, ir::Node& n, const std::vector<std::vector<ir::NodeId>>& users) {
  if (n.inputs.size() != 2 || n.outputs.size() != 1) return false;
  const bool commutes = n.op == EdgeOp::Mul || n.op == EdgeOp::Add;
  if (!commutes && n.op != EdgeOp::Sub && n.op != EdgeOp::Div) return false;
  for (int side = 0; side < (commutes ? 2 : 1); ++side) {
    const ir::ValueId y = n.inputs[side], c = n.inputs[1 - side];
    if (y == c || !is_conv_output(g, y, users)) continue;
    const Shape& shape = g.value(y).spec.shape;
    if (g.value(n.outputs[0]).spec.shape != shape || g.value(y).spec.dtype != DType::Float32) continue;
    std::vector<float> k = per_channel(g, c, shape);
    if (k.empty()) continue;
    if (n.op == EdgeOp::Div) {
      for (float& f : k) f = 1.0f / f;
      for (float f : k)
        if (!std::isfinite(f)) return false;
    }
    ir::Node& conv = g.node(g.value(y).producer);
    const ir::Value& wv = g.value(conv.inputs[1]);
    const auto m = static_cast<size_t>(output_channels(g, conv));
    if (m != k.size()) return false;
    const bool has_bias = conv.inputs.size() > 2 && conv.inputs[2] != ir::kNoValue;
    std::vector<float> b = has_bias ? floats(g, conv.inputs[2]) : std::vector<float>(m, 0.0f);
    const bool scales = n.op == EdgeOp::Mul || n.op == EdgeOp::Div;
    if (scales) {
      std::vector<float> w = floats(g, conv.inputs[1]);
      scale_output_channels(g, conv, w, k);
      for (size_t o = 0; o < m; ++o) b[o] *= k[o];
      conv.inputs[1] = g.add_constant(wv.name + "_scaled", wv.spec, to_bytes(w));
    } else {
      for (size_t o = 0; o < m; ++o) b[o] += n.op == EdgeOp::Add ? k[o] : -k[o];
    }
    const ir::ValueId bias =
        g.add_constant(g.value(n.outputs[0]).name + "_conv_bias",
                       TensorSpec{DType::Float32, Shape{static_cast<int64_t>(m)}}, to_bytes(b));
    if (conv.inputs.size() > 2)
      conv.inputs[2] = bias;
    else
      conv.inputs.push_back(bias);
    absorb_node(g, conv, n);
    return true;
  }
  return false;
}

}  // namespace

size_t fold_conv_affine(ir::Graph& g) {
  size_t folded = 0;
  const std::vector<std::vector<ir::NodeId>> users = g.users();
  // In node order, so a chain (conv -> Mul -> Add) folds link by link: once
  // the Mul is folded, the conv produces the value the Add reads.
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    ir::Node& n = g.nodes()[i];
    if (!n.dead && fold_affine(g, n, users)) ++folded;
  }
  return folded;
}

size_t fold_batch_norm(ir::Graph& g) {
  size_t folded = 0;
  std::vector<std::vector<ir::NodeId>> users = g.users();
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    ir::Node& bn = g.nodes()[i];
    if (bn.dead || bn.op != EdgeOp::BatchNorm || bn.inputs.size() != 5) continue;
    if (g.value(bn.outputs[0]).spec.dtype != DType::Float32) continue;
    if (ir::Node* conv = foldable_conv(g, bn, users)) {
      fold(g, *conv, bn);
      ++folded;
    }
  }
  return folded;
}

}  // namespace etc::passes
