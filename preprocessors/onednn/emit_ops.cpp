// Inner product, elementwise, concat, softmax, reshape and batch norm
// lowerings (convolution and pooling: onednn_lowering.cpp).
#include "compiler/common/compile_error.h"
#include "compiler/ir/node_attrs.h"
#include "preprocessors/onednn/onednn_lowering.h"

namespace etc::onednn {

using ir::attr_float;
using ir::attr_int;
using ir::present;
using ir::shape_of;

// gemm: alpha * A op(B) + beta * C; matmul: A B. The weights become
// [N, K] (oneDNN's inner product reads them as output x input) scaled by
// alpha, and the bias beta * C, one value per output.
void emit_inner_product(Lowering& l, const ir::Node& n) {
  const ir::Graph& g = l.graph();
  const Shape& b = shape_of(g, n.inputs[1]);
  const bool transposed = n.op == EdgeOp::Gemm && attr_int(n, "trans_b", 0) != 0;
  const int64_t k = transposed ? b[1] : b[0], m = transposed ? b[0] : b[1];
  const float alpha = n.op == EdgeOp::Gemm ? attr_float(n, "alpha", 1.0f) : 1.0f;
  const std::span<const float> src = l.floats(n.inputs[1]);
  std::vector<float> w(src.size());
  for (int64_t o = 0; o < m; ++o)
    for (int64_t i = 0; i < k; ++i)
      w[static_cast<size_t>(o * k + i)] =
          alpha * src[static_cast<size_t>(transposed ? o * k + i : i * m + o)];
  fb::NodeT& ip = l.add(fb::NodeKind::InnerProduct, n);
  ip.inputs = {l.tensor(n.inputs[0]), l.constant({m, k}, std::move(w))};
  if (n.op == EdgeOp::Gemm && present(n, 2)) {
    const std::span<const float> c = l.floats(n.inputs[2]);
    const float beta = attr_float(n, "beta", 1.0f);
    std::vector<float> bias(static_cast<size_t>(m));
    for (size_t o = 0; o < bias.size(); ++o) bias[o] = beta * c[c.size() == 1 ? 0 : o];
    ip.inputs.push_back(l.constant({m}, std::move(bias)));
  }
  ip.outputs = {l.tensor(n.outputs[0])};
  add_activation(ip, fused_clamp(n));
}

void emit_binary(Lowering& l, const ir::Node& n) {
  const ir::Graph& g = l.graph();
  fb::NodeT& b = l.add(fb::NodeKind::Binary, n);
  switch (n.op) {
    case EdgeOp::Add: b.algorithm = fb::Algorithm::Add; break;
    case EdgeOp::Sub: b.algorithm = fb::Algorithm::Sub; break;
    case EdgeOp::Mul: b.algorithm = fb::Algorithm::Mul; break;
    case EdgeOp::Div: b.algorithm = fb::Algorithm::Div; break;
    case EdgeOp::Min: b.algorithm = fb::Algorithm::Min; break;
    case EdgeOp::Max: b.algorithm = fb::Algorithm::Max; break;
    default: throw CompileError(std::string("onednn: no binary algorithm for '") + edge_op_name(n.op) + "'");
  }
  const Shape& y = shape_of(g, n.outputs[0]);
  // oneDNN broadcasts the second operand only (the rule allows swapping
  // only where the op commutes).
  const bool swap = shape_of(g, n.inputs[0]) != y;
  const ir::ValueId full = n.inputs[swap ? 1 : 0], other = n.inputs[swap ? 0 : 1];
  uint32_t second = l.tensor(other);
  const Shape& o = shape_of(g, other);
  if (o.rank() != y.rank()) {
    // A lower-rank constant: the same elements with leading ones.
    std::vector<int64_t> dims(static_cast<size_t>(y.rank() - o.rank()), 1);
    for (int i = 0; i < o.rank(); ++i) dims.push_back(o[i]);
    const std::span<const float> values = l.floats(other);
    second = l.constant(dims, std::vector<float>(values.begin(), values.end()));
  }
  b.inputs = {l.tensor(full), second};
  b.outputs = {l.tensor(n.outputs[0])};
}

void emit_eltwise(Lowering& l, const ir::Node& n) {
  const Activation a = activation_of(n);
  if (a.algorithm == fb::Algorithm::None)
    throw CompileError(std::string("onednn: no eltwise algorithm for '") + edge_op_name(n.op) + "'");
  fb::NodeT& e = l.add(fb::NodeKind::Eltwise, n);
  e.algorithm = a.algorithm;
  e.alpha = a.alpha;
  e.beta = a.beta;
  e.inputs = {l.tensor(n.inputs[0])};
  e.outputs = {l.tensor(n.outputs[0])};
}

void emit_concat(Lowering& l, const ir::Node& n) {
  fb::NodeT& c = l.add(fb::NodeKind::Concat, n);
  for (ir::ValueId v : n.inputs) c.inputs.push_back(l.tensor(v));
  c.outputs = {l.tensor(n.outputs[0])};
  c.axis = static_cast<int32_t>(attr_int(n, "axis", 0));
}

void emit_softmax(Lowering& l, const ir::Node& n) {
  fb::NodeT& s = l.add(fb::NodeKind::Softmax, n);
  s.inputs = {l.tensor(n.inputs[0])};
  s.outputs = {l.tensor(n.outputs[0])};
  s.axis = static_cast<int32_t>(attr_int(n, "axis", shape_of(l.graph(), n.inputs[0]).rank() - 1));
  s.log = n.op == EdgeOp::LogSoftmax;
}

void emit_reshape(Lowering& l, const ir::Node& n) {
  fb::NodeT& r = l.add(fb::NodeKind::Reshape, n);
  r.inputs = {l.tensor(n.inputs[0])};
  r.outputs = {l.tensor(n.outputs[0])};
}

void emit_batch_norm(Lowering& l, const ir::Node& n) {
  fb::NodeT& b = l.add(fb::NodeKind::BatchNorm, n);
  for (size_t i = 0; i < 5; ++i) b.inputs.push_back(l.tensor(n.inputs[i]));
  b.outputs = {l.tensor(n.outputs[0])};
  b.epsilon = attr_float(n, "epsilon", 1e-5f);
}

}  // namespace etc::onednn
