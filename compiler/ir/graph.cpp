#include "compiler/ir/graph.h"

namespace etc::ir {

ValueId Graph::add_value(std::string name, TensorSpec spec) {
  Value v;
  v.id = static_cast<ValueId>(values_.size());
  v.name = std::move(name);
  v.spec = spec;
  values_.push_back(std::move(v));
  return values_.back().id;
}

ValueId Graph::add_constant(std::string name, TensorSpec spec, ConstantData data) {
  const ValueId id = add_value(std::move(name), spec);
  values_[id].constant = std::move(data);
  return id;
}

NodeId Graph::add_node(EdgeOp op, std::vector<ValueId> inputs, std::vector<ValueId> outputs, Attrs attrs,
                       NodeMeta meta) {
  Node n;
  n.id = static_cast<NodeId>(nodes_.size());
  n.op = op;
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  n.attrs = std::move(attrs);
  n.meta = std::move(meta);
  for (ValueId out : n.outputs) values_[out].producer = n.id;
  nodes_.push_back(std::move(n));
  return nodes_.back().id;
}

void Graph::replace_uses(ValueId from, ValueId to) {
  for (Node& n : nodes_) {
    if (n.dead) continue;
    for (ValueId& in : n.inputs)
      if (in == from) in = to;
  }
  for (ValueId& out : outputs_)
    if (out == from) out = to;
}

std::vector<std::vector<NodeId>> Graph::users() const {
  std::vector<std::vector<NodeId>> users(values_.size());
  for (const Node& n : nodes_) {
    if (n.dead) continue;
    for (ValueId in : n.inputs)
      if (in != kNoValue && (users[in].empty() || users[in].back() != n.id)) users[in].push_back(n.id);
  }
  return users;
}

size_t Graph::num_live_nodes() const {
  size_t n = 0;
  for (const Node& node : nodes_) n += node.dead ? 0 : 1;
  return n;
}

void Graph::compact() {
  std::vector<bool> used(values_.size(), false);
  for (ValueId v : inputs_) used[v] = true;
  for (ValueId v : outputs_) used[v] = true;
  for (const Node& n : nodes_) {
    if (n.dead) continue;
    for (ValueId v : n.inputs)
      if (v != kNoValue) used[v] = true;
    for (ValueId v : n.outputs) used[v] = true;
  }
  std::vector<ValueId> remap(values_.size(), kNoValue);
  std::vector<Value> values;
  for (Value& v : values_) {
    if (!used[v.id]) continue;
    remap[v.id] = static_cast<ValueId>(values.size());
    v.id = remap[v.id];
    values.push_back(std::move(v));
  }
  std::vector<Node> nodes;
  for (Node& n : nodes_) {
    if (n.dead) continue;
    n.id = static_cast<NodeId>(nodes.size());
    for (ValueId& v : n.inputs)
      if (v != kNoValue) v = remap[v];
    for (ValueId& v : n.outputs) v = remap[v];
    nodes.push_back(std::move(n));
  }
  for (ValueId& v : inputs_) v = remap[v];
  for (ValueId& v : outputs_) v = remap[v];
  for (Value& v : values) v.producer = -1;
  for (const Node& n : nodes)
    for (ValueId out : n.outputs) values[out].producer = n.id;
  values_ = std::move(values);
  nodes_ = std::move(nodes);
}

ExportedProgram body_program(const ExportedProgram& outer, const Node& node, size_t body) {
  ExportedProgram sub;
  sub.graph = *node.subgraphs[body];
  sub.source_path = outer.source_path;
  sub.opset = outer.opset;
  sub.debug_handles = outer.debug_handles;
  return sub;
}

std::string body_scope(const Node& node, size_t body) {
  const std::string name =
      node.meta.onnx_name.empty() ? std::string(edge_op_name(node.op)) : node.meta.onnx_name;
  if (node.op == EdgeOp::If) return name + (body == 0 ? "/then" : "/else");
  return name + "/body";
}

}  // namespace etc::ir
