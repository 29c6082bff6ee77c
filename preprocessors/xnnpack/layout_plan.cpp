// Which 4-D activations of a partition are held NHWC.
//
// Spatial nodes (convolutions, pooling, resize, depth_to_space, prelu, the
// channel shuffle) compute NHWC only. Layout-agnostic nodes (elementwise,
// concat, slice, pad, softmax, reductions that keep their dims…) compute in
// either layout as long as their 4-D activations share it, so they join
// those activations into one group. A group is NHWC when a spatial node
// touches it and NCHW otherwise; nodes that need ONNX's order (matmul, a
// reshape that reorders elements, a broadcast against a lower-rank
// activation) get their operands converted by a native transpose
// (Lowering::value_as / output_as). Transposes take any layout on either
// side. A model without spatial nodes (a transformer) thus never converts,
// and one without 4-D matrix products never leaves NHWC.
#include <numeric>

#include "partitioners/xnnpack/xnnpack_rules.h"
#include "preprocessors/xnnpack/lowering.h"

namespace etc::xnnpack {
namespace {

enum class Role { kSpatial, kAgnostic, kLogical, kFree };

bool is_4d(const ir::Graph& g, ir::ValueId v) {
  return v != ir::kNoValue && !is_constant(g, v) && shape_of(g, v).rank() == 4;
}

Role binary_role(const ir::Graph& g, const ir::Node& n) {
  const int out_rank = shape_of(g, n.outputs[0]).rank();
  for (ir::ValueId v : n.inputs)
    if (v != ir::kNoValue && !is_constant(g, v) && shape_of(g, v).rank() != out_rank) return Role::kLogical;
  return Role::kAgnostic;
}

Role role_of(const ir::Graph& g, const ir::Node& n) {
  if ((n.op == EdgeOp::Reshape || n.op == EdgeOp::Transpose) && find_channel_shuffle(g, n))
    return Role::kSpatial;
  switch (n.op) {
    case EdgeOp::Conv:
    case EdgeOp::ConvTranspose:
    case EdgeOp::MaxPool:
    case EdgeOp::AvgPool:
    case EdgeOp::Resize:
    case EdgeOp::DepthToSpace:
    case EdgeOp::PRelu: return Role::kSpatial;
    case EdgeOp::Transpose: return Role::kFree;
    case EdgeOp::MatMul:
    case EdgeOp::Gemm: return Role::kLogical;
    case EdgeOp::Reshape:
      for (ir::ValueId v : {n.inputs[0], n.outputs[0]})
        if (!layout_free(shape_of(g, v))) return Role::kLogical;
      return Role::kFree;
    case EdgeOp::Add:
    case EdgeOp::Sub:
    case EdgeOp::Mul:
    case EdgeOp::Div:
    case EdgeOp::Min:
    case EdgeOp::Max:
    case EdgeOp::Pow: return binary_role(g, n);
    case EdgeOp::ReduceMean:
      if (is_global_avg_pool(g, n)) return Role::kSpatial;
      [[fallthrough]];
    case EdgeOp::ReduceSum:
    case EdgeOp::ReduceMax:
    case EdgeOp::ReduceMin:
    case EdgeOp::ReduceSumSquare: return attr_int(n, "keepdims", 1) != 0 ? Role::kAgnostic : Role::kLogical;
    case EdgeOp::LayerNorm: return Role::kLogical;
    case EdgeOp::Softmax:
    case EdgeOp::LogSoftmax: {
      // Axes axis.. flattened are trailing in NHWC too only from axis 1 on.
      const bool flatten = attr_int(n, "flatten", 0) != 0;
      return flatten && attr_int(n, "axis", 0) > 1 ? Role::kLogical : Role::kAgnostic;
    }
    default: return Role::kAgnostic;
  }
}

struct Groups {
  std::vector<ir::ValueId> parent;
  explicit Groups(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  ir::ValueId find(ir::ValueId v) {
    while (parent[v] != v) v = parent[v] = parent[parent[v]];
    return v;
  }
  void join(ir::ValueId a, ir::ValueId b) { parent[find(a)] = find(b); }
};

}  // namespace

std::vector<bool> plan_nhwc(const ir::Graph& g) {
  const size_t count = g.values().size();
  const auto num_values = static_cast<ir::ValueId>(count);
  Groups groups(count);
  std::vector<bool> spatial(count, false);
  for (const ir::Node& n : g.nodes()) {
    if (n.dead) continue;
    std::vector<ir::ValueId> operands;
    for (ir::ValueId v : n.inputs)
      if (is_4d(g, v)) operands.push_back(v);
    for (ir::ValueId v : n.outputs)
      if (is_4d(g, v)) operands.push_back(v);
    switch (role_of(g, n)) {
      case Role::kSpatial:
        for (ir::ValueId v : operands) spatial[v] = true;
        break;
      case Role::kAgnostic:
        for (size_t i = 1; i < operands.size(); ++i) groups.join(operands[i], operands[0]);
        break;
      default: break;
    }
  }
  std::vector<bool> group_nhwc(count, false);
  for (ir::ValueId v = 0; v < num_values; ++v)
    if (spatial[v]) group_nhwc[groups.find(v)] = true;
  std::vector<bool> nhwc(count, false);
  for (ir::ValueId v = 0; v < num_values; ++v) nhwc[v] = is_4d(g, v) && group_nhwc[groups.find(v)];
  return nhwc;
}

}  // namespace etc::xnnpack
