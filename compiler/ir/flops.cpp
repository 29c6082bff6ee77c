#include "compiler/ir/flops.h"

namespace etc::ir {
namespace {

int64_t numel(const Graph& g, ValueId v) { return v == kNoValue ? 0 : g.value(v).spec.shape.numel(); }

int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

std::vector<int64_t> ints_attr(const Node& n, const char* name) {
  const AttrValue* a = n.attrs.find(name);
  if (const auto* v = a ? std::get_if<std::vector<int64_t>>(a) : nullptr) return *v;
  return {};
}

// Each output element of a convolution is a dot product over C/group × kernel.
int64_t conv_flops(const Graph& g, const Node& n) {
  const Shape& w = g.value(n.inputs[1]).spec.shape;
  int64_t per_output = 1;
  for (int d = 1; d < w.rank(); ++d) per_output *= w[d];
  if (n.op == EdgeOp::ConvTranspose) {
    // Each input element scatters into M/group × kernel outputs.
    return 2 * numel(g, n.inputs[0]) * per_output;
  }
  return 2 * numel(g, n.outputs[0]) * per_output;
}

// Output elements × the reduced dimension K.
int64_t linear_flops(const Graph& g, const Node& n) {
  const Shape& a = g.value(n.inputs[0]).spec.shape;
  int64_t k = a.rank() == 0 ? 1 : a[a.rank() - 1];
  if (n.op == EdgeOp::Gemm) {
    const AttrValue* t = n.attrs.find("trans_a");
    const bool trans_a = t && std::get<int64_t>(*t) != 0;
    k = trans_a ? a[0] : a[1];
  }
  return 2 * numel(g, n.outputs[0]) * k;
}

// Recurrent cells: per step and direction, [x, h] × gate weights.
int64_t rnn_flops(const Graph& g, const Node& n) {
  const Shape& w = g.value(n.inputs[1]).spec.shape;  // [dirs, gates*H, input]
  const Shape& r = g.value(n.inputs[2]).spec.shape;  // [dirs, gates*H, H]
  const Shape& x = g.value(n.inputs[0]).spec.shape;  // [seq, batch, input]
  const int64_t steps = x[0] * x[1];
  return 2 * steps * w[0] * w[1] * (w[2] + r[2]);
}

}  // namespace

int64_t estimate_flops(const ExportedProgram& program, const Node& node) {
  const Graph& g = program.graph;
  if (node.is_delegate_call()) {
    const auto& module = program.delegates.at(node.delegate);
    if (!module.original_program) return 0;
    int64_t total = 0;
    for (const Node& inner : module.original_program->graph.nodes())
      if (!inner.dead) total += estimate_flops(*module.original_program, inner);
    return total;
  }
  switch (node.op) {
    case EdgeOp::Conv:
    case EdgeOp::ConvTranspose: return conv_flops(g, node);
    case EdgeOp::MatMul:
    case EdgeOp::Gemm: return linear_flops(g, node);
    case EdgeOp::MaxPool:
    case EdgeOp::AvgPool: return numel(g, node.outputs[0]) * product(ints_attr(node, "kernel_shape"));
    case EdgeOp::Lstm:
    case EdgeOp::Gru: return rnn_flops(g, node);
    default: break;
  }
  int64_t total = 0;
  for (ValueId out : node.outputs) total += numel(g, out);
  return total;
}

}  // namespace etc::ir
