// Data movement computed by the backend's native nodes: concat →
// Concatenate, slice and split → Slice, transpose → Transpose, ShuffleNet's
// reshape / transpose / reshape → ChannelShuffle. Axes and offsets are given
// in each tensor's blob order (NHWC for 4-D activations planned so).
#include <algorithm>

#include "compiler/common/compile_error.h"
#include "partitioners/xnnpack/xnnpack_rules.h"
#include "preprocessors/xnnpack/lowering.h"

namespace etc::xnnpack {
namespace {

// Per-dimension values in ONNX order → blob dims order.
std::vector<uint64_t> xnn_order(const std::vector<int64_t>& v, bool nhwc) {
  std::vector<uint64_t> out(v.size());
  const std::vector<uint32_t> at = stored_axes(static_cast<int>(v.size()), nhwc);
  for (size_t i = 0; i < v.size(); ++i) out[at[i]] = static_cast<uint64_t>(v[i]);
  return out;
}

void emit_slice_window(Lowering& l, const ir::Node& n, ir::ValueId out, const std::vector<int64_t>& starts) {
  const bool nhwc = l.nhwc(n.inputs[0]);
  const uint32_t x = l.value(n.inputs[0]);
  const uint32_t y = l.output_as(out, nhwc);
  NodeRecord& r = l.add_node(fb::NodeType::Slice, n);
  r.inputs = {x};
  r.outputs = {y};
  r.offsets = xnn_order(starts, nhwc);
  // Dims whose window runs to the input's end wherever its size is
  // (bounded dynamic shapes), in blob order.
  const std::vector<uint32_t> at = stored_axes(static_cast<int>(starts.size()), nhwc);
  if (n.op == EdgeOp::Slice)
    for (int64_t d : attr_ints(n, "ends_to_end")) r.to_end.push_back(at[static_cast<size_t>(d)]);
  std::sort(r.to_end.begin(), r.to_end.end());
}

// Output blob dim j reads input blob dim perm[j]: ONNX's perm composed with
// the two tensors' layouts.
void emit_transpose(Lowering& l, const ir::Node& n) {
  const ir::ValueId x = n.inputs[0], y = n.outputs[0];
  const int rank = shape_of(l.graph(), x).rank();
  const std::vector<int64_t> perm = attr_ints(n, "perm");
  const std::vector<uint32_t> in_at = stored_axes(rank, l.nhwc(x)), out_at = stored_axes(rank, l.nhwc(y));
  std::vector<uint32_t> stored(static_cast<size_t>(rank));
  for (int j = 0; j < rank; ++j) stored[out_at[j]] = in_at[static_cast<size_t>(perm[j])];
  const uint32_t in = l.value(x);
  const uint32_t out = l.value(y);
  NodeRecord& r = l.add_node(fb::NodeType::Transpose, n);
  r.inputs = {in};
  r.outputs = {out};
  r.perm = stored;
}

}  // namespace

void emit_movement(Lowering& l, const ir::Node& n) {
  const ir::Graph& g = l.graph();
  switch (n.op) {
    case EdgeOp::Concat: {
      const int rank = shape_of(g, n.outputs[0]).rank();
      const bool nhwc = l.nhwc(n.outputs[0]);
      std::vector<uint32_t> inputs;
      for (ir::ValueId v : n.inputs) inputs.push_back(l.value_as(v, nhwc));
      const uint32_t y = l.value(n.outputs[0]);
      NodeRecord& r = l.add_node(fb::NodeType::Concatenate, n);
      r.inputs = std::move(inputs);
      r.outputs = {y};
      r.axis = stored_axes(rank, nhwc)[static_cast<size_t>(attr_int(n, "axis", 0))];
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
      if (!shuffle && n.op == EdgeOp::Transpose) return emit_transpose(l, n);
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
