// layer_norm → the native LayerNorm (over the trailing axes, in ONNX order);
// batch_norm that did not fold into a convolution → a per-channel multiply
// and add (XNNPACK nodes with broadcast constants, in the input's layout).
#include <cmath>

#include "partitioners/xnnpack/xnnpack_rules.h"
#include "preprocessors/xnnpack/lowering.h"

namespace etc::xnnpack {
namespace {

void emit_layer_norm(Lowering& l, const ir::Node& n) {
  const ir::ValueId x = n.inputs[0];
  const int rank = shape_of(l.graph(), x).rank();
  const uint32_t in = l.value_as(x, false);
  const uint32_t scale = l.value_as(n.inputs[1], false);
  std::vector<uint32_t> inputs = {in, scale};
  if (present(n, 2)) inputs.push_back(l.value_as(n.inputs[2], false));
  const uint32_t out = l.output_as(n.outputs[0], false);
  NodeRecord& r = l.add_node(fb::NodeType::LayerNorm, n);
  r.inputs = std::move(inputs);
  r.outputs = {out};
  const int64_t axis = attr_int(n, "axis", -1);
  r.axis = static_cast<uint32_t>(axis < 0 ? axis + rank : axis);
  r.epsilon = attr_float(n, "epsilon", 1e-5f);
}

// y = x * scale + shift, scale = gamma / sqrt(var + eps), shift = beta - mean * scale.
void emit_batch_norm(Lowering& l, const ir::Node& n) {
  const ir::ValueId x = n.inputs[0];
  const Shape& shape = shape_of(l.graph(), x);
  const bool nhwc = l.nhwc(x);
  const std::vector<float> gamma = l.floats(n.inputs[1]), beta = l.floats(n.inputs[2]),
                           mean = l.floats(n.inputs[3]), var = l.floats(n.inputs[4]);
  const float eps = attr_float(n, "epsilon", 1e-5f);
  std::vector<float> scale(gamma.size()), shift(gamma.size());
  for (size_t c = 0; c < gamma.size(); ++c) {
    scale[c] = gamma[c] / std::sqrt(var[c] + eps);
    shift[c] = beta[c] - mean[c] * scale[c];
  }
  // [1, C, 1, ...] against x, in x's blob order.
  Shape per_channel;
  for (int d = 0; d < shape.rank(); ++d) per_channel.push_back(d == 1 ? shape[1] : 1);
  const std::vector<uint64_t> dims = xnn_dims(per_channel, nhwc);
  const uint32_t in = l.value(x);
  const uint32_t s = l.blob().add_constant(dims, std::move(scale));
  const uint32_t t = l.blob().add_constant(dims, std::move(shift));
  TensorRecord mid_record;
  mid_record.dims = l.dims(x);
  mid_record.nchw = shape.rank() == 4 && !nhwc;
  const uint32_t mid = l.blob().add_tensor(std::move(mid_record));
  const uint32_t out = l.output_as(n.outputs[0], nhwc);
  NodeRecord& mul = l.add_node(fb::NodeType::Multiply, n);
  mul.inputs = {in, s};
  mul.outputs = {mid};
  NodeRecord& add = l.add_node(fb::NodeType::Add, n);
  add.inputs = {mid, t};
  add.outputs = {out};
  set_output_range(add, n);
}

}  // namespace

void emit_normalize(Lowering& l, const ir::Node& n) {
  if (n.op == EdgeOp::LayerNorm) return emit_layer_norm(l, n);
  emit_batch_norm(l, n);
}

}  // namespace etc::xnnpack
