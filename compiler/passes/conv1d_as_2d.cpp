#include "compiler/passes/conv1d_as_2d.h"

#include <algorithm>
#include <variant>

namespace etc::passes {
namespace {

std::vector<int64_t> ints_attr(const ir::Node& n, const char* name, std::vector<int64_t> fallback) {
  const ir::AttrValue* v = n.attrs.find(name);
  return v && std::holds_alternative<std::vector<int64_t>>(*v) ? std::get<std::vector<int64_t>>(*v)
                                                               : fallback;
}

bool is_conv1d(const ir::Graph& g, const ir::Node& n) {
  if (n.dead || n.op != EdgeOp::Conv || n.is_delegate_call() || n.inputs.size() < 2) return false;
  return g.value(n.inputs[0]).spec.shape.rank() == 3 && g.value(n.inputs[1]).spec.shape.rank() == 3;
}

// A shape with a 1 inserted before its last dim: [a, b, c] -> [a, b, 1, c].
Shape with_height(const Shape& s) {
  Shape out;
  for (int d = 0; d + 1 < s.rank(); ++d) out.push_back(s[d]);
  out.push_back(1);
  out.push_back(s[s.rank() - 1]);
  return out;
}

ir::Attrs reshape_to(const Shape& s) {
  return ir::Attrs{{"shape", std::vector<int64_t>(s.begin(), s.end())}};
}

ir::Node make_node(EdgeOp op, std::vector<ir::ValueId> inputs, std::vector<ir::ValueId> outputs,
                   ir::Attrs attrs, const ir::NodeMeta& meta) {
  ir::Node n;
  n.op = op;
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  n.attrs = std::move(attrs);
  n.meta = meta;
  return n;
}

}  // namespace

size_t conv1d_as_2d(ir::Graph& g) {
  size_t rewritten = 0;
  std::vector<ir::Node> nodes;
  nodes.reserve(g.nodes().size());
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    if (!is_conv1d(g, g.nodes()[i])) {
      nodes.push_back(std::move(g.nodes()[i]));
      continue;
    }
    ir::Node conv = std::move(g.nodes()[i]);
    const ir::Value x = g.value(conv.inputs[0]);
    const ir::Value w = g.value(conv.inputs[1]);
    const ir::Value y = g.value(conv.outputs[0]);
    const ir::ValueId x4 = g.add_value(x.name + ":2d", TensorSpec{x.spec.dtype, with_height(x.spec.shape)});
    nodes.push_back(
        make_node(EdgeOp::Reshape, {x.id}, {x4}, reshape_to(with_height(x.spec.shape)), conv.meta));
    const TensorSpec w4_spec{w.spec.dtype, with_height(w.spec.shape)};
    ir::ValueId w4;
    if (w.is_constant()) {
      w4 = g.add_constant(w.name + ":2d", w4_spec, w.constant);
    } else {
      w4 = g.add_value(w.name + ":2d", w4_spec);
      nodes.push_back(make_node(EdgeOp::Reshape, {w.id}, {w4}, reshape_to(w4_spec.shape), conv.meta));
    }
    const std::vector<int64_t> pads = ints_attr(conv, "pads", {0, 0});
    conv.attrs.set("strides", std::vector<int64_t>{1, ints_attr(conv, "strides", {1})[0]});
    conv.attrs.set("dilations", std::vector<int64_t>{1, ints_attr(conv, "dilations", {1})[0]});
    conv.attrs.set("pads",
                   std::vector<int64_t>{0, pads.size() > 0 ? pads[0] : 0, 0, pads.size() > 1 ? pads[1] : 0});
    const ir::ValueId y4 = g.add_value(y.name + ":2d", TensorSpec{y.spec.dtype, with_height(y.spec.shape)});
    conv.inputs[0] = x4;
    conv.inputs[1] = w4;
    conv.outputs[0] = y4;
    const ir::NodeMeta meta = conv.meta;
    nodes.push_back(std::move(conv));
    nodes.push_back(make_node(EdgeOp::Reshape, {y4}, {y.id}, reshape_to(y.spec.shape), meta));
    ++rewritten;
  }
  g.nodes() = std::move(nodes);
  g.compact();  // renumbers the nodes and sets every producer
  return rewritten;
}

size_t collapse_reshapes(ir::Graph& g) {
  size_t removed = 0;
  std::vector<std::vector<ir::NodeId>> users = g.users();
  auto is_output = [&](ir::ValueId v) { return std::count(g.outputs().begin(), g.outputs().end(), v) > 0; };
  for (ir::Node& n : g.nodes()) {
    if (n.dead || n.is_delegate_call() || n.op != EdgeOp::Reshape || n.inputs.size() != 1) continue;
    const ir::ValueId in = n.inputs[0];
    const ir::NodeId p = g.value(in).producer;
    if (p >= 0) {
      ir::Node& prev = g.node(p);
      if (!prev.dead && !prev.is_delegate_call() && prev.op == EdgeOp::Reshape && prev.inputs.size() == 1 &&
          users[in].size() == 1 && !is_output(in)) {
        n.inputs[0] = prev.inputs[0];
        n.meta.debug_handles.insert(n.meta.debug_handles.end(), prev.meta.debug_handles.begin(),
                                    prev.meta.debug_handles.end());
        prev.dead = true;
        ++removed;
        users[prev.inputs[0]].push_back(n.id);
      }
    }
    // A reshape back to the shape of its input, or of the input of the
    // reshape before it (read elsewhere too), is that value.
    const ir::ValueId out = n.outputs[0];
    ir::ValueId same = n.inputs[0];
    if (const ir::NodeId q = g.value(same).producer;
        q >= 0 && !g.node(q).dead && !g.node(q).is_delegate_call() && g.node(q).op == EdgeOp::Reshape &&
        g.node(q).inputs.size() == 1 && !(g.value(same).spec == g.value(out).spec))
      same = g.node(q).inputs[0];
    if (g.value(same).spec == g.value(out).spec && !is_output(out)) {
      for (ir::NodeId u : users[out]) users[same].push_back(u);
      g.replace_uses(out, same);
      n.dead = true;
      ++removed;
    }
  }
  return removed;
}

}  // namespace etc::passes
