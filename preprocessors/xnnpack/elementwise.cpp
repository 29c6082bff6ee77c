// Elementwise ops and softmax. Binary ops broadcast numpy-style in XNNPACK
// too; against a 4-D NHWC output, a lower-rank constant operand is first
// padded to 4-D in NCHW and then stored in NHWC, so it broadcasts along the
// same logical axes. A lower-rank activation operand makes the node compute
// in NCHW (layout_plan.cpp), where numpy broadcasting needs no rewriting.
#include <utility>

#include "compiler/common/compile_error.h"
#include "partitioners/xnnpack/xnnpack_rules.h"
#include "preprocessors/xnnpack/lowering.h"

namespace etc::xnnpack {
namespace {

fb::NodeType binary_type(EdgeOp op) {
  switch (op) {
    case EdgeOp::Add: return fb::NodeType::Add;
    case EdgeOp::Sub: return fb::NodeType::Subtract;
    case EdgeOp::Mul: return fb::NodeType::Multiply;
    case EdgeOp::Div: return fb::NodeType::Divide;
    case EdgeOp::Min: return fb::NodeType::Minimum;
    case EdgeOp::Max: return fb::NodeType::Maximum;
    default: throw CompileError(std::string("xnnpack: '") + edge_op_name(op) + "' is not a binary op here");
  }
}

fb::NodeType unary_type(EdgeOp op) {
  switch (op) {
    case EdgeOp::Sigmoid: return fb::NodeType::Sigmoid;
    case EdgeOp::HardSwish: return fb::NodeType::HardSwish;
    case EdgeOp::LeakyRelu: return fb::NodeType::LeakyRelu;
    case EdgeOp::Elu: return fb::NodeType::Elu;
    case EdgeOp::Abs: return fb::NodeType::Abs;
    case EdgeOp::Neg: return fb::NodeType::Negate;
    case EdgeOp::Floor: return fb::NodeType::Floor;
    case EdgeOp::Ceil: return fb::NodeType::Ceiling;
    case EdgeOp::Round: return fb::NodeType::BankersRounding;  // ONNX Round is half-to-even
    case EdgeOp::Sqrt: return fb::NodeType::SquareRoot;
    case EdgeOp::Pow: return fb::NodeType::Square;
    case EdgeOp::Relu:
    case EdgeOp::Clip: return fb::NodeType::Clamp;
    default: throw CompileError(std::string("xnnpack: '") + edge_op_name(op) + "' is not a unary op here");
  }
}

// Operand v of a node computing in NHWC (`nhwc`) or NCHW.
uint32_t operand(Lowering& l, ir::ValueId v, bool nhwc) {
  const Shape& s = shape_of(l.graph(), v);
  if (!nhwc || s.rank() == 4 || !is_constant(l.graph(), v)) return l.value_as(v, nhwc);
  return l.constant(v, kBroadcastNhwc, [&] {
    Shape padded;
    for (int i = s.rank(); i < 4; ++i) padded.push_back(1);
    for (int64_t d : s) padded.push_back(d);
    return l.blob().add_constant(xnn_dims(padded, true), nchw_to_nhwc(l.floats(v), padded));
  });
}

// Whether a binary node computes in NHWC: when its output is planned so and
// no activation operand has a lower rank.
bool binary_nhwc(Lowering& l, const ir::Node& n) {
  if (!l.nhwc(n.outputs[0])) return false;
  for (ir::ValueId v : n.inputs)
    if (!is_constant(l.graph(), v) && shape_of(l.graph(), v).rank() != 4) return false;
  return true;
}

}  // namespace

// Whether `scale` (blob dims, right-aligned against `x`) holds one value per
// channel (last dim), optionally per batch (first dim): the shape this
// XNNPACK broadcasts slowly (row by row, a pool task per pixel).
bool per_channel(const std::vector<uint64_t>& x, std::vector<uint64_t> scale) {
  if (x.size() < 3 || scale.size() > x.size() || x.back() < 2) return false;
  while (scale.size() < x.size()) scale.insert(scale.begin(), 1);
  for (size_t d = 1; d + 1 < x.size(); ++d)
    if (scale[d] != 1) return false;
  return scale.back() == x.back() && (scale[0] == 1 || scale[0] == x[0]);
}

void emit_binary(Lowering& l, const ir::Node& n) {
  if (n.op == EdgeOp::Pow) return emit_unary(l, n);  // pow(x, 2): the rule accepts nothing else
  const bool nhwc = binary_nhwc(l, n);
  uint32_t a = operand(l, n.inputs[0], nhwc);
  uint32_t b = operand(l, n.inputs[1], nhwc);
  const uint32_t out = l.output_as(n.outputs[0], nhwc);
  const std::vector<uint64_t> out_dims = l.blob().tensor(out).dims;
  if (n.op == EdgeOp::Mul) {
    if (l.blob().tensor(a).dims != out_dims) std::swap(a, b);
    if (l.blob().tensor(a).dims == out_dims && per_channel(out_dims, l.blob().tensor(b).dims)) {
      // The scale as [1 or N, 1, ..., 1, C]: a constant reshaped once, an
      // activation through a (free) reshape of its dims.
      std::vector<uint64_t> dims(out_dims.size(), 1);
      const std::vector<uint64_t>& bd = l.blob().tensor(b).dims;
      dims.back() = out_dims.back();
      dims[0] = bd.size() == out_dims.size() ? bd[0] : 1;
      if (bd != dims && l.blob().tensor(b).constant) {
        TensorRecord t = l.blob().tensor(b);  // the same constant bytes
        t.dims = dims;
        b = l.blob().add_tensor(std::move(t));
      } else if (bd != dims) {
        TensorRecord t;
        t.dims = dims;
        const uint32_t reshaped = l.blob().add_tensor(std::move(t));
        NodeRecord& reshape = l.add_node(fb::NodeType::StaticReshape, n);
        reshape.inputs = {b};
        reshape.outputs = {reshaped};
        reshape.new_shape = dims;
        b = reshaped;
      }
      NodeRecord& r = l.add_node(fb::NodeType::ChannelScale, n);
      r.inputs = {a, b};
      r.outputs = {out};
      return;
    }
  }
  NodeRecord& r = l.add_node(binary_type(n.op), n);
  r.inputs = {a, b};
  r.outputs = {out};
}

// hard_sigmoid(x) = clamp(alpha * x + beta, 0, 1): a multiply, then an add
// with the clamp as its output range. Both XNNPACK nodes stand for `n`.
void emit_hard_sigmoid(Lowering& l, const ir::Node& n) {
  const uint32_t in = l.value(n.inputs[0]);
  const uint32_t alpha = l.blob().add_constant({1}, {attr_float(n, "alpha", 0.2f)});
  const uint32_t beta = l.blob().add_constant({1}, {attr_float(n, "beta", 0.5f)});
  TensorRecord scaled;
  scaled.dims = l.dims(n.inputs[0]);
  const uint32_t mid = l.blob().add_tensor(std::move(scaled));
  const uint32_t out = l.value(n.outputs[0]);
  NodeRecord& mul = l.add_node(fb::NodeType::Multiply, n);
  mul.inputs = {in, alpha};
  mul.outputs = {mid};
  NodeRecord& add = l.add_node(fb::NodeType::Add, n);
  add.inputs = {mid, beta};
  add.outputs = {out};
  add.output_min = 0.0f;
  add.output_max = 1.0f;
}

void emit_unary(Lowering& l, const ir::Node& n) {
  if (n.op == EdgeOp::HardSigmoid) return emit_hard_sigmoid(l, n);
  const uint32_t in = l.value(n.inputs[0]);
  const uint32_t out = l.value(n.outputs[0]);
  NodeRecord& r = l.add_node(unary_type(n.op), n);
  r.inputs = {in};
  r.outputs = {out};
  if (n.op == EdgeOp::Relu) r.output_min = 0.0f;
  if (n.op == EdgeOp::Clip) {
    r.output_min = attr_float(n, "min", -INFINITY);
    r.output_max = attr_float(n, "max", INFINITY);
  }
  if (n.op == EdgeOp::LeakyRelu) r.alpha = attr_float(n, "alpha", 0.01f);
  if (n.op == EdgeOp::Elu) r.alpha = attr_float(n, "alpha", 1.0f);
}

// XNNPACK's softmax normalizes the last blob axis; any other axis, a
// flattened range of axes and log-softmax run as the native AxisSoftmax.
void emit_softmax(Lowering& l, const ir::Node& n) {
  const ir::ValueId x = n.inputs[0];
  const int rank = shape_of(l.graph(), x).rank();
  const bool flatten = attr_int(n, "flatten", 0) != 0;
  const auto axis = static_cast<size_t>(attr_int(n, "axis", rank - 1));
  // With flatten, axes axis.. are normalized together; in NHWC the planner
  // allows it only where they are the trailing blob axes too (axis <= 1).
  const bool nhwc = l.nhwc(x) && !(flatten && axis > 1);
  const uint32_t stored = flatten ? static_cast<uint32_t>(axis) : stored_axes(rank, nhwc)[axis];
  const bool last = stored + 1 == static_cast<uint32_t>(rank);
  const uint32_t in = l.value_as(x, nhwc);
  const uint32_t out = l.output_as(n.outputs[0], nhwc);
  const bool log = n.op == EdgeOp::LogSoftmax;
  NodeRecord& r = l.add_node(last && !log ? fb::NodeType::Softmax : fb::NodeType::AxisSoftmax, n);
  r.inputs = {in};
  r.outputs = {out};
  if (r.type == fb::NodeType::AxisSoftmax) {
    r.axis = stored;
    r.flags = (log ? 1u : 0u) | (flatten ? 2u : 0u);
  }
}

void emit_math(Lowering& l, const ir::Node& n) {  // tanh, erf, gelu, exp, log, reciprocal, softplus
  const uint32_t in = l.value(n.inputs[0]);
  const uint32_t out = l.output_as(n.outputs[0], l.nhwc(n.inputs[0]));
  NodeRecord& r = l.add_node(fb::NodeType::UnaryMath, n);
  r.inputs = {in};
  r.outputs = {out};
  switch (n.op) {
    case EdgeOp::Tanh: r.unary_op = fb::UnaryOp::Tanh; break;
    case EdgeOp::Erf: r.unary_op = fb::UnaryOp::Erf; break;
    case EdgeOp::Gelu:
      r.unary_op =
          attr_string(n, "approximate", "none") == "tanh" ? fb::UnaryOp::GeluTanh : fb::UnaryOp::Gelu;
      break;
    case EdgeOp::Exp: r.unary_op = fb::UnaryOp::Exp; break;
    case EdgeOp::Log: r.unary_op = fb::UnaryOp::Log; break;
    case EdgeOp::Reciprocal: r.unary_op = fb::UnaryOp::Reciprocal; break;
    case EdgeOp::Softplus: r.unary_op = fb::UnaryOp::Softplus; break;
    default:
      throw CompileError(std::string("xnnpack: '") + edge_op_name(n.op) + "' is not a native function");
  }
}

void emit_prelu(Lowering& l, const ir::Node& n) {
  const int64_t channels = shape_of(l.graph(), n.inputs[0])[1];
  const uint32_t in = l.value(n.inputs[0]);
  const uint32_t slope = l.constant(n.inputs[1], kPreluSlope, [&] {
    const std::vector<float> s = l.floats(n.inputs[1]);
    std::vector<float> per_channel(static_cast<size_t>(channels));
    for (int64_t c = 0; c < channels; ++c) per_channel[c] = s[s.size() == 1 ? 0 : c];
    return l.blob().add_constant({uint64_t(channels)}, std::move(per_channel));
  });
  const uint32_t out = l.value(n.outputs[0]);
  NodeRecord& r = l.add_node(fb::NodeType::PRelu, n);
  r.inputs = {in, slope};
  r.outputs = {out};
}

}  // namespace etc::xnnpack
