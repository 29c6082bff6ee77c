// Rules for the data-movement ops that XNNPACK partitions compute with the
// backend's native nodes (concatenate, slice, channel shuffle) instead of
// ending the partition at them.
#include <algorithm>

#include "partitioners/xnnpack/xnnpack_rules.h"

namespace etc::xnnpack {
namespace {

bool is_graph_output(const ir::Graph& g, ir::ValueId v) {
  return std::find(g.outputs().begin(), g.outputs().end(), v) != g.outputs().end();
}

bool static_reshape(const ir::Graph& g, const ir::Node& n) {
  return n.op == EdgeOp::Reshape && !n.dead && n.inputs.size() >= 1 &&
         (!present(n, 1) || is_constant(g, n.inputs[1]));
}

// The one live user of `v` when it has exactly one and is no graph output.
const ir::Node* only_user(const ir::Graph& g, const std::vector<std::vector<ir::NodeId>>& users,
                          ir::ValueId v) {
  if (users[v].size() != 1 || is_graph_output(g, v)) return nullptr;
  return &g.node(users[v][0]);
}

const ir::Node* producer_of(const ir::Graph& g, ir::ValueId v) {
  const ir::NodeId p = g.value(v).producer;
  return p < 0 ? nullptr : &g.node(p);
}

}  // namespace

std::optional<ChannelShuffle> find_channel_shuffle(const ir::Graph& g, const ir::Node& n) {
  // Walk back to the head reshape from whichever node was given.
  const ir::Node* head = &n;
  if (n.op == EdgeOp::Transpose) {
    head = producer_of(g, n.inputs[0]);
  } else if (n.op == EdgeOp::Reshape && shape_of(g, n.outputs[0]).rank() == 4) {
    const ir::Node* t = producer_of(g, n.inputs[0]);
    head = t != nullptr && t->op == EdgeOp::Transpose ? producer_of(g, t->inputs[0]) : nullptr;
  }
  if (head == nullptr || !static_reshape(g, *head) || head->outputs.size() != 1) return std::nullopt;
  const Shape& x = shape_of(g, head->inputs[0]);
  const Shape& split = shape_of(g, head->outputs[0]);
  if (x.rank() != 4 || split.rank() != 5 || split[0] != x[0] || split[1] * split[2] != x[1] ||
      split[3] != x[2] || split[4] != x[3] || split[1] < 2 || x.numel() == 0)
    return std::nullopt;
  const auto users = g.users();
  const ir::Node* transpose = only_user(g, users, head->outputs[0]);
  if (transpose == nullptr || transpose->op != EdgeOp::Transpose || transpose->outputs.size() != 1 ||
      attr_ints(*transpose, "perm") != std::vector<int64_t>{0, 2, 1, 3, 4})
    return std::nullopt;
  const ir::Node* tail = only_user(g, users, transpose->outputs[0]);
  if (tail == nullptr || !static_reshape(g, *tail) || tail->outputs.size() != 1 ||
      shape_of(g, tail->outputs[0]) != x)
    return std::nullopt;
  if (&n != head && &n != transpose && &n != tail) return std::nullopt;
  for (const ir::Node* p : {head, transpose, tail})
    if (g.value(p->inputs[0]).spec.dtype != DType::Float32) return std::nullopt;
  return ChannelShuffle{head, transpose, tail, split[1]};
}

Support concat_rule(const ir::Graph& /*g*/, const ir::Node& n) {
  if (n.inputs.size() > 256) return Support::no("xnnpack: concat of more than 256 inputs");
  return Support::yes();
}

Support slice_rule(const ir::Graph& g, const ir::Node& n) {
  if (n.inputs.size() > 1) return Support::no("xnnpack: slice with bounds computed at run time");
  for (int64_t step : attr_ints(n, "steps"))
    if (step != 1) return Support::no("xnnpack: slice with a step other than 1");
  const Shape& x = shape_of(g, n.inputs[0]);
  if (attr_ints(n, "starts").size() != static_cast<size_t>(x.rank()))
    return Support::no("xnnpack: slice without one start per dimension");
  return Support::yes();
}

Support split_rule(const ir::Graph& g, const ir::Node& n) {
  if (present(n, 1) && !is_constant(g, n.inputs[1]))
    return Support::no("xnnpack: split with sizes computed at run time");
  if (attr_ints(n, "sizes").size() != n.outputs.size())
    return Support::no("xnnpack: split without one size per output");
  return Support::yes();
}

bool is_data_movement(EdgeOp op) {
  switch (op) {
    case EdgeOp::Concat:
    case EdgeOp::Slice:
    case EdgeOp::Split:
    case EdgeOp::Reshape:
    case EdgeOp::Transpose:
    case EdgeOp::Pad: return true;
    default: return false;
  }
}

}  // namespace etc::xnnpack
