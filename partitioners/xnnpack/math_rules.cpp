// Rules for the ops XNNPACK partitions compute with the backend's native
// compute nodes (runtime/backends/xnnpack/native_math.h): matrix products of
// two activations, transpose, layer_norm, reductions, elementwise functions;
// and batch_norm, which becomes a per-channel multiply and add.
#include "partitioners/xnnpack/xnnpack_rules.h"

namespace etc::xnnpack {

Support transpose_rule(const ir::Graph& /*g*/, const ir::Node& /*n*/) { return Support::yes(); }

Support layer_norm_rule(const ir::Graph& /*g*/, const ir::Node& n) {
  if (n.outputs.size() != 1) return Support::no("xnnpack: layer_norm with mean or inv_std_dev outputs");
  return Support::yes();
}

Support batch_norm_rule(const ir::Graph& g, const ir::Node& n) {
  const Shape& x = shape_of(g, n.inputs[0]);
  if (x.rank() < 2) return Support::no("xnnpack: batch_norm of a tensor without a channel axis");
  for (size_t i = 1; i < 5; ++i) {
    if (!present(n, i) || !is_constant(g, n.inputs[i]))
      return Support::no("xnnpack: batch_norm with statistics or parameters computed at run time");
    if (shape_of(g, n.inputs[i]).rank() != 1)
      return Support::no("xnnpack: batch_norm with per-element (spatial=0) parameters");
  }
  return Support::yes();
}

Support reduce_rule(const ir::Graph& g, const ir::Node& n) {
  if (present(n, 1)) return Support::no("xnnpack: reduction with axes computed at run time");
  if (attr_ints(n, "axes").empty())
    return Support::no("xnnpack: reduction over no axes (a copy, or every axis by noop_with_empty_axes)");
  (void)g;
  return Support::yes();
}

Support math_rule(const ir::Graph& /*g*/, const ir::Node& /*n*/) { return Support::yes(); }

}  // namespace etc::xnnpack
