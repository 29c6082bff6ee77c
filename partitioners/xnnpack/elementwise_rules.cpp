// Rules for elementwise ops (binary with numpy broadcasting, unary, prelu)
// and softmax.
#include <cmath>

#include "partitioners/xnnpack/xnnpack_rules.h"

namespace etc::xnnpack {

bool is_square(const ir::Graph& g, const ir::Node& n) {
  if (n.op != EdgeOp::Pow || !present(n, 1) || !is_constant(g, n.inputs[1])) return false;
  const ir::Value& e = g.value(n.inputs[1]);
  return e.spec.dtype == DType::Float32 && e.spec.shape.numel() == 1 && e.constant_as<float>()[0] == 2.0f;
}

Support binary_rule(const ir::Graph& g, const ir::Node& n) {
  if (n.op == EdgeOp::Pow) {
    if (is_square(g, n)) return Support::yes();
    return Support::no("xnnpack: pow with an exponent other than a constant 2 (XNNPACK has square only)");
  }
  return Support::yes();
}

Support unary_rule(const ir::Graph& /*g*/, const ir::Node& n) {
  if (n.op == EdgeOp::Clip) {
    for (size_t i = 1; i < n.inputs.size(); ++i)
      if (present(n, i)) return Support::no("xnnpack: clip with bounds given as inputs");
    const float lo = attr_float(n, "min", -INFINITY), hi = attr_float(n, "max", INFINITY);
    if (std::isnan(lo) || std::isnan(hi) || !(lo < hi))
      return Support::no("xnnpack: clip with min >= max (XNNPACK clamp needs min < max)");
  }
  return Support::yes();
}

Support softmax_rule(const ir::Graph& /*g*/, const ir::Node& /*n*/) { return Support::yes(); }

Support prelu_rule(const ir::Graph& g, const ir::Node& n) {
  const Shape& x = shape_of(g, n.inputs[0]);
  if (x.rank() != 4)
    return Support::no("xnnpack: prelu on a " + std::to_string(x.rank()) + "-D tensor (4-D only)");
  if (!is_constant(g, n.inputs[1])) return Support::no("xnnpack: prelu with a non-constant slope");
  if (shape_of(g, n.outputs[0]) != x) return Support::no("xnnpack: prelu whose slope broadcasts the input");
  const Shape& slope = shape_of(g, n.inputs[1]);
  // Right-aligned against NCHW, only the channel axis may differ from 1.
  for (int i = 0; i < slope.rank(); ++i) {
    const int axis = 4 - slope.rank() + i;
    if (slope[i] != 1 && axis != 1)
      return Support::no("xnnpack: prelu with slope " + slope.str() + " (XNNPACK slopes are per channel)");
  }
  return Support::yes();
}

}  // namespace etc::xnnpack
