// The oneDNN backend's per-node rules (onednn_ops.def's Rule column).
#include "partitioners/onednn/onednn_rules.h"

#include <cmath>

#include "compiler/ir/node_attrs.h"
#include "runtime/backends/onednn/winograd_rule.h"

namespace etc::onednn {
namespace {

using ir::attr_float;
using ir::attr_int;
using ir::attr_ints;
using ir::attr_string;
using ir::is_constant;
using ir::present;
using ir::shape_of;

Support no(const std::string& why) { return Support::no("onednn: " + why); }

std::string op_word(const ir::Node& n) { return edge_op_name(n.op); }

Support spatial_rank(const ir::Graph& g, const ir::Node& n) {
  const int rank = shape_of(g, n.inputs[0]).rank();
  if (rank < 3 || rank > 5)
    return no(op_word(n) + " on a " + std::to_string(rank) + "-D input (1-D to 3-D windows: ranks 3 to 5)");
  return Support::yes();
}

Support window_attrs(const ir::Node& n) {
  for (const char* name : {"strides", "dilations"})
    for (int64_t v : attr_ints(n, name))
      if (v < 1) return no(op_word(n) + " with " + name + " < 1");
  for (int64_t p : attr_ints(n, "pads"))
    if (p < 0) return no(op_word(n) + " with negative pads");
  return Support::yes();
}

Support constant_weights(const ir::Graph& g, const ir::Node& n) {
  if (!is_constant(g, n.inputs[1])) return no(op_word(n) + " with non-constant weights");
  if (present(n, 2) && !is_constant(g, n.inputs[2])) return no(op_word(n) + " with a non-constant bias");
  return Support::yes();
}

// Each dim of `b` equals `a`'s or is 1 (numpy broadcasting into `a`).
bool broadcasts_into(const Shape& b, const Shape& a) {
  if (b.rank() > a.rank()) return false;
  for (int i = 0; i < b.rank(); ++i) {
    const int64_t d = b[b.rank() - 1 - i];
    if (d != 1 && d != a[a.rank() - 1 - i]) return false;
  }
  return true;
}

}  // namespace

bool is_data_movement(EdgeOp op) { return op == EdgeOp::Reshape || op == EdgeOp::Concat; }

bool is_same_shape_binary(const ir::Graph& g, const ir::Node& n) {
  return n.inputs.size() == 2 && shape_of(g, n.inputs[0]) == shape_of(g, n.outputs[0]) &&
         shape_of(g, n.inputs[1]) == shape_of(g, n.outputs[0]);
}

bool is_winograd_candidate(const ir::Graph& g, const ir::Node& n) {
  if (n.op != EdgeOp::Conv || !is_constant(g, n.inputs[1])) return false;
  const Shape& w = shape_of(g, n.inputs[1]);
  if (w.rank() != 4) return false;
  bool unit = true;
  for (const char* name : {"strides", "dilations"})
    for (int64_t v : attr_ints(n, name)) unit = unit && v == 1;
  return winograd_applies(WinogradMode::kAuto, w[2], w[3], attr_int(n, "group", 1), unit, w[0], w[1]);
}

Support conv_rule(const ir::Graph& g, const ir::Node& n) {
  Support s = spatial_rank(g, n);
  if (s.supported) s = constant_weights(g, n);
  if (s.supported) s = window_attrs(n);
  return s;
}

Support pool_rule(const ir::Graph& g, const ir::Node& n) {
  if (n.outputs.size() != 1) return no("max_pool with an indices output");
  Support s = spatial_rank(g, n);
  if (s.supported) s = window_attrs(n);
  if (!s.supported || attr_int(n, "global", 0) != 0) return s;
  const std::vector<int64_t> d = attr_ints(n, "dilations");
  if (n.op == EdgeOp::AvgPool)
    for (int64_t v : d)
      if (v != 1) return no("avg_pool with dilations (oneDNN average pooling has none)");
  const size_t dims = static_cast<size_t>(shape_of(g, n.inputs[0]).rank() - 2);
  if (attr_ints(n, "kernel_shape").size() != dims || attr_ints(n, "strides").size() != dims ||
      d.size() != dims || attr_ints(n, "pads").size() != 2 * dims)
    return no(op_word(n) + " without explicit window attributes");
  // ceil_mode: more end padding reproduces the extra window; averaging that
  // counts padding would count it too, which ONNX does not.
  const std::vector<int64_t> extra = ir::pool_ceil_padding(g, n);
  if (extra.empty()) return no(op_word(n) + " whose output size oneDNN cannot reproduce");
  for (int64_t e : extra)
    if (e > 0 && n.op == EdgeOp::AvgPool && attr_int(n, "count_include_pad", 0) != 0)
      return no("avg_pool with count_include_pad=1 and ceil_mode=1 adding an output position");
  return Support::yes();
}

Support global_pool_rule(const ir::Graph& g, const ir::Node& n) {
  if (ir::is_global_avg_pool(g, n)) return Support::yes();
  return no("reduce_mean other than over H and W of a 4-D tensor (global average pooling)");
}

Support gemm_rule(const ir::Graph& g, const ir::Node& n) {
  if (attr_int(n, "trans_a", 0) != 0) return no("gemm with trans_a=1");
  if (!is_constant(g, n.inputs[1])) return no("gemm with a non-constant B");
  if (!present(n, 2)) return Support::yes();
  if (!is_constant(g, n.inputs[2])) return no("gemm with a non-constant C");
  const Shape& c = shape_of(g, n.inputs[2]);
  if (c.numel() != 1 && c.numel() != shape_of(g, n.outputs[0])[1])
    return no("gemm with C of shape " + c.str() + " (a fully connected bias is one value per output)");
  return Support::yes();
}

Support matmul_rule(const ir::Graph& g, const ir::Node& n) {
  if (shape_of(g, n.inputs[0]).rank() != 2 || shape_of(g, n.inputs[1]).rank() != 2)
    return no("matmul of other than two 2-D operands (inner product)");
  if (!is_constant(g, n.inputs[1])) return no("matmul with a non-constant right operand");
  return Support::yes();
}

Support binary_rule(const ir::Graph& g, const ir::Node& n) {
  const Shape& y = shape_of(g, n.outputs[0]);
  const Shape &a = shape_of(g, n.inputs[0]), &b = shape_of(g, n.inputs[1]);
  const bool commutes =
      n.op == EdgeOp::Add || n.op == EdgeOp::Mul || n.op == EdgeOp::Min || n.op == EdgeOp::Max;
  const bool a_full = a == y, b_full = b == y;
  if (!a_full && !(commutes && b_full))
    return no(op_word(n) + " whose first operand broadcasts (oneDNN broadcasts the second only)");
  const ir::ValueId other = a_full ? n.inputs[1] : n.inputs[0];
  const Shape& o = shape_of(g, other);
  if (!broadcasts_into(o, y)) return no(op_word(n) + " with operands " + a.str() + " and " + b.str());
  if (o.rank() != y.rank() && !is_constant(g, other))
    return no(op_word(n) + " with a lower-rank operand computed at run time");
  return Support::yes();
}

Support eltwise_rule(const ir::Graph& g, const ir::Node& n) {
  if (n.op == EdgeOp::Clip) {
    for (size_t i = 1; i < n.inputs.size(); ++i)
      if (present(n, i)) return no("clip with bounds given as inputs");
    const float lo = attr_float(n, "min", -INFINITY), hi = attr_float(n, "max", INFINITY);
    if (std::isnan(lo) || std::isnan(hi) || lo > hi) return no("clip with min > max or a NaN bound");
  }
  if (shape_of(g, n.outputs[0]) != shape_of(g, n.inputs[0])) return no(op_word(n) + " that changes shape");
  return Support::yes();
}

Support concat_rule(const ir::Graph& g, const ir::Node& n) {
  for (ir::ValueId v : n.inputs)
    if (shape_of(g, v).rank() != shape_of(g, n.outputs[0]).rank()) return no("concat of mixed ranks");
  return Support::yes();
}

Support softmax_rule(const ir::Graph& g, const ir::Node& n) {
  const int rank = shape_of(g, n.inputs[0]).rank();
  if (attr_int(n, "flatten", 0) != 0 && attr_int(n, "axis", rank - 1) != rank - 1)
    return no(op_word(n) + " over several trailing dims (opset < 13 flatten)");
  return Support::yes();
}

Support reshape_rule(const ir::Graph& g, const ir::Node& n) {
  if (present(n, 1) && !is_constant(g, n.inputs[1])) return no("reshape to a shape computed at run time");
  if (n.attrs.find("infer_dim") != nullptr) return no("reshape that follows a dynamic input size");
  return Support::yes();
}

Support batch_norm_rule(const ir::Graph& g, const ir::Node& n) {
  const Shape& x = shape_of(g, n.inputs[0]);
  if (x.rank() < 2) return no("batch_norm on a 1-D input");
  for (size_t i = 1; i < 5; ++i) {
    if (!present(n, i) || !is_constant(g, n.inputs[i])) return no("batch_norm with a non-constant parameter");
    if (shape_of(g, n.inputs[i]) != Shape{x[1]}) return no("batch_norm with parameters not shaped [C]");
  }
  return Support::yes();
}

}  // namespace etc::onednn
