// Data movement computed by the backend's native nodes: concat →
// Concatenate, slice and split → Slice, ShuffleNet's reshape / transpose /
// reshape → ChannelShuffle. 4-D tensors are NHWC here, so axes and offsets
// are given in NHWC order.
#include "compiler/common/compile_error.h"
#include "partitioners/xnnpack/xnnpack_rules.h"
#include "preprocessors/xnnpack/lowering.h"

namespace etc::xnnpack {
namespace {

// An ONNX axis of a rank-`rank` tensor, in XNNPACK dims order.
uint32_t xnn_axis(int64_t axis, int rank) {
  static constexpr uint32_t kNhwcPosition[4] = {0, 3, 1, 2};
  return rank == 4 ? kNhwcPosition[axis] : static_cast<uint32_t>(axis);
}

// Per-dimension values in ONNX order → XNNPACK dims order.
std::vector<uint64_t> xnn_order(const std::vector<int64_t>& v) {
  std::vector<uint64_t> out(v.begin(), v.end());
  if (out.size() == 4) out = {out[0], out[2], out[3], out[1]};
  return out;
}

void emit_slice_window(Lowering& l, const ir::Node& n, ir::ValueId out, const std::vector<int64_t>& starts) {
  const uint32_t x = l.value(n.inputs[0]);
  const uint32_t y = l.value(out);
  NodeRecord& r = l.add_node(fb::NodeType::Slice, n);
  r.inputs = {x};
  r.outputs = {y};
  r.offsets = xnn_order(starts);
}

}  // namespace

void emit_movement(Lowering& l, const ir::Node& n) {
  const ir::Graph& g = l.graph();
  switch (n.op) {
    case EdgeOp::Concat: {
      const int rank = shape_of(g, n.outputs[0]).rank();
      std::vector<uint32_t> inputs;
      for (ir::ValueId v : n.inputs) inputs.push_back(l.value(v));
      const uint32_t y = l.value(n.outputs[0]);
      NodeRecord& r = l.add_node(fb::NodeType::Concatenate, n);
      r.inputs = std::move(inputs);
      r.outputs = {y};
      r.axis = xnn_axis(attr_int(n, "axis", 0), rank);
      return;
    }
    case EdgeOp::Slice: return emit_slice_window(l, n, n.outputs[0], attr_ints(n, "starts"));
    case EdgeOp::Split: {
      const int rank = shape_of(g, n.inputs[0]).rank();
      const int64_t axis = attr_int(n, "axis", 0);
      const std::vector<int64_t> sizes = attr_ints(n, "sizes");
      std::vector<int64_t> starts(static_cast<size_t>(rank), 0);
      for (size_t i = 0; i < n.outputs.size(); ++i) {
        emit_slice_window(l, n, n.outputs[i], starts);
        starts[static_cast<size_t>(axis)] += sizes[i];
      }
      return;
    }
    case EdgeOp::Reshape:
    case EdgeOp::Transpose: {
      const std::optional<ChannelShuffle> shuffle = find_channel_shuffle(g, n);
      if (!shuffle) throw CompileError("xnnpack: not part of a channel shuffle");
      if (&n != shuffle->head) return;  // the head emits the whole pattern
      const uint32_t x = l.value(n.inputs[0]);
      const uint32_t y = l.value(shuffle->tail->outputs[0]);
      NodeRecord& r = l.add_node(fb::NodeType::ChannelShuffle, n);
      r.covers.push_back(shuffle->transpose);
      r.covers.push_back(shuffle->tail);
      r.inputs = {x};
      r.outputs = {y};
      r.groups = static_cast<uint32_t>(shuffle->groups);
      return;
    }
    default: throw CompileError("xnnpack: no native node for this op");
  }
}

}  // namespace etc::xnnpack
