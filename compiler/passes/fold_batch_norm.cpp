#include "compiler/passes/fold_batch_norm.h"

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

// The conv that produces `bn`'s input, if the fold applies.
ir::Node* foldable_conv(ir::Graph& g, const ir::Node& bn, const std::vector<std::vector<ir::NodeId>>& users) {
  const ir::ValueId x = bn.inputs[0];
  const ir::Value& xv = g.value(x);
  if (xv.producer < 0 || users[x].size() != 1) return nullptr;
  for (ir::ValueId out : g.outputs())
    if (out == x) return nullptr;
  ir::Node& conv = g.node(xv.producer);
  if (conv.dead || conv.op != EdgeOp::Conv || conv.outputs.size() != 1) return nullptr;
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
  const int64_t m = wv.spec.shape[0];
  std::vector<float> w = floats(g, conv.inputs[1]);
  const bool has_bias = conv.inputs.size() > 2 && conv.inputs[2] != ir::kNoValue;
  std::vector<float> b =
      has_bias ? floats(g, conv.inputs[2]) : std::vector<float>(static_cast<size_t>(m), 0.0f);
  const int64_t per_channel = static_cast<int64_t>(w.size()) / m;
  for (int64_t c = 0; c < m; ++c) {
    const float s = gamma[c] / std::sqrt(var[c] + eps);
    for (int64_t i = 0; i < per_channel; ++i) w[c * per_channel + i] *= s;
    b[c] = (b[c] - mean[c]) * s + beta[c];
  }
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

}  // namespace

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
