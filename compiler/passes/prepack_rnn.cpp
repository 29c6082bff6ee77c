#include "compiler/passes/prepack_rnn.h"

#include <memory>
#include <string>
#include <vector>

#include "runtime/kernels/portable/rnn_common.h"

namespace etc::passes {
namespace {

// The node's packed input `which`, added unless it is there already or its
// weights are not a float32 constant.
void prepack(ir::Graph& g, ir::NodeId id, const RnnConfig& c, RnnPacked which, PrepackStats& stats) {
  const bool lstm = g.node(id).op == EdgeOp::Lstm;
  const size_t slot = static_cast<size_t>(rnn_packed_input(lstm, which));
  const ir::ValueId source = g.node(id).inputs[which == RnnPacked::kW ? 1 : 2];
  if (g.node(id).inputs.size() > slot && g.node(id).inputs[slot] != ir::kNoValue) return;
  const ir::Value& w = g.value(source);
  if (!w.is_constant() || w.spec.dtype != DType::Float32) return;
  const int64_t floats = rnn_prepacked_floats(c, which);
  auto bytes = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(floats) * sizeof(float));
  rnn_prepack(c, which, w.constant_as<float>(), reinterpret_cast<float*>(bytes->data()));
  const std::string name = w.name + (which == RnnPacked::kW ? ":packed_w" : ":packed_r");
  const ir::ValueId packed =
      g.add_constant(name, TensorSpec{DType::Float32, Shape{floats}}, std::move(bytes));
  std::vector<ir::ValueId>& inputs = g.node(id).inputs;
  if (inputs.size() <= slot) inputs.resize(slot + 1, ir::kNoValue);
  inputs[slot] = packed;
  ++stats.tensors;
  stats.bytes += static_cast<size_t>(floats) * sizeof(float);
}

}  // namespace

PrepackStats prepack_rnn_weights(ir::Graph& g) {
  PrepackStats stats;
  for (ir::NodeId id = 0; id < static_cast<ir::NodeId>(g.nodes().size()); ++id) {
    ir::Node& n = g.node(id);
    if (n.dead) continue;
    for (auto& body : n.subgraphs) {
      auto copy = std::make_shared<ir::Graph>(*body);
      if (const PrepackStats in_body = prepack_rnn_weights(*copy); in_body.tensors > 0) {
        stats.tensors += in_body.tensors;
        stats.bytes += in_body.bytes;
        body = std::move(copy);
      }
    }
    if (n.is_delegate_call() || (n.op != EdgeOp::Lstm && n.op != EdgeOp::Gru) || n.inputs.size() < 3)
      continue;
    std::vector<TensorSpec> specs;
    for (ir::ValueId v : n.inputs) specs.push_back(v == ir::kNoValue ? TensorSpec{} : g.value(v).spec);
    const std::vector<AttrView> views = n.attrs.views();
    const Result<RnnConfig> config = parse_rnn_config(AttrList(views), specs, n.op == EdgeOp::Lstm);
    if (!config.ok() || specs[0].dtype != DType::Float32) continue;  // the verifier reports a bad node
    prepack(g, id, config.get(), RnnPacked::kW, stats);
    prepack(g, id, config.get(), RnnPacked::kR, stats);
  }
  return stats;
}

}  // namespace etc::passes
