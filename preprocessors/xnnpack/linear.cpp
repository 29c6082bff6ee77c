// gemm and matmul → fully_connected. The filter is stored [output_channels,
// input_channels] (no XNN_FLAG_TRANSPOSE_WEIGHTS); gemm's alpha is folded
// into the filter and beta * C into the per-channel bias. A matmul's bias
// add (an add of a per-channel constant that alone reads the product, as
// exporters write nn.Linear on 3-D input) folds into the bias too, with its
// fused activation (Lowering::bias_add).
#include <algorithm>

#include "partitioners/xnnpack/xnnpack_rules.h"
#include "preprocessors/xnnpack/lowering.h"

namespace etc::xnnpack {
namespace {

// B [K, N] (or [N, K] when transposed) → filter [N, K], scaled by alpha.
std::vector<float> filter_of(std::span<const float> b, int64_t k, int64_t n, bool transposed, float alpha) {
  std::vector<float> f(b.size());
  for (int64_t o = 0; o < n; ++o)
    for (int64_t i = 0; i < k; ++i) f[o * k + i] = alpha * (transposed ? b[o * k + i] : b[i * n + o]);
  return f;
}

// C broadcast to [N] (the partitioner ensured it does not vary by row).
std::vector<float> bias_of(Lowering& l, ir::ValueId c_value, int64_t channels, float beta) {
  std::vector<float> bias(static_cast<size_t>(channels), 0.0f);
  if (c_value == ir::kNoValue) return bias;
  const std::vector<float> c = l.floats(c_value);
  const int64_t last = c.size() == 1 ? 1 : shape_of(l.graph(), c_value).dim(-1);
  for (int64_t o = 0; o < channels; ++o) bias[o] = beta * c[last == 1 ? 0 : o];
  return bias;
}

// The constant operand of a bias add.
ir::ValueId bias_operand(const ir::Graph& g, const ir::Node& add) {
  return is_constant(g, add.inputs[0]) ? add.inputs[0] : add.inputs[1];
}

}  // namespace

const ir::Node* foldable_bias_add(const ir::Graph& g, const std::vector<std::vector<ir::NodeId>>& users,
                                  const ir::Node& n) {
  if (n.op != EdgeOp::MatMul || n.attrs.find("clamp_min") || n.attrs.find("clamp_max")) return nullptr;
  const ir::ValueId y = n.outputs[0];
  if (users[y].size() != 1 || std::find(g.outputs().begin(), g.outputs().end(), y) != g.outputs().end())
    return nullptr;
  const ir::Node& add = g.node(users[y][0]);
  if (add.op != EdgeOp::Add || add.dead || add.inputs.size() != 2 || add.inputs[0] == add.inputs[1])
    return nullptr;
  const ir::ValueId c = bias_operand(g, add);
  if (!is_constant(g, c) || g.value(c).spec.dtype != DType::Float32) return nullptr;
  // Broadcasting along the last axis only: [N] or [1, ..., 1, N] (or one value).
  const Shape& cs = shape_of(g, c);
  const int64_t channels = shape_of(g, y).dim(-1);
  if (cs.rank() > shape_of(g, y).rank() || shape_of(g, add.outputs[0]) != shape_of(g, y)) return nullptr;
  for (int d = 0; d + 1 < cs.rank(); ++d)
    if (cs[d] != 1) return nullptr;
  if (cs.rank() > 0 && cs.dim(-1) != channels && cs.dim(-1) != 1) return nullptr;
  return &add;
}

namespace {}  // namespace

void emit_linear(Lowering& l, const ir::Node& n) {
  const Shape& b = shape_of(l.graph(), n.inputs[1]);
  const bool gemm = n.op == EdgeOp::Gemm;
  const bool trans_b = gemm && attr_int(n, "trans_b", 0) != 0;
  const int64_t k = trans_b ? b[1] : b[0];
  const int64_t channels = trans_b ? b[0] : b[1];
  const float alpha = gemm ? attr_float(n, "alpha", 1.0f) : 1.0f;
  const float beta = gemm ? attr_float(n, "beta", 1.0f) : 1.0f;
  // Fully connected multiplies along the last blob axis: ONNX order.
  const uint32_t in = l.value_as(n.inputs[0], false);
  const uint32_t filter = l.blob().add_constant(
      {uint64_t(channels), uint64_t(k)}, filter_of(l.float_view(n.inputs[1]), k, channels, trans_b, alpha));
  const ir::Node* add = l.bias_add(n);
  const ir::ValueId c = add ? bias_operand(l.graph(), *add) : present(n, 2) ? n.inputs[2] : ir::kNoValue;
  const uint32_t bias = l.blob().add_constant({uint64_t(channels)}, bias_of(l, c, channels, beta));
  const uint32_t out = l.output_as(add ? add->outputs[0] : n.outputs[0], false);
  NodeRecord& r = l.add_node(fb::NodeType::FullyConnected, n);
  r.inputs = {in, filter, bias};
  r.outputs = {out};
  if (add) r.covers.push_back(add);
  set_output_range(r, add ? *add : n);
}

}  // namespace etc::xnnpack
