#include "compiler/backend/partition_extraction.h"

#include <queue>
#include <utility>

#include "compiler/common/compile_error.h"

namespace etc::lowering {
namespace {

// Whether each value is read by a live node outside `inside` or is a graph output.
std::vector<bool> read_outside(const ir::Graph& g, const std::vector<bool>& inside) {
  std::vector<bool> read(g.values().size(), false);
  for (const ir::Node& n : g.nodes()) {
    if (n.dead || inside[n.id]) continue;
    for (ir::ValueId v : n.inputs)
      if (v != ir::kNoValue) read[v] = true;
  }
  for (ir::ValueId v : g.outputs()) read[v] = true;
  return read;
}

}  // namespace

ExtractedPartition extract_partition(const ir::ExportedProgram& program, const std::string& tag) {
  const ir::Graph& g = program.graph;
  ExtractedPartition x;
  x.program.source_path = program.source_path;
  x.program.opset = program.opset;
  ir::Graph& sub = x.program.graph;
  std::vector<bool> inside(g.nodes().size(), false);
  for (const ir::Node& n : g.nodes())
    if (!n.dead && n.meta.delegation_tag == tag) {
      inside[n.id] = true;
      x.nodes.push_back(n.id);
    }
  std::vector<ir::ValueId> inner(g.values().size(), ir::kNoValue);
  for (ir::NodeId id : x.nodes) {
    const ir::Node& n = g.node(id);
    std::vector<ir::ValueId> ins, outs;
    for (ir::ValueId v : n.inputs) {
      if (v != ir::kNoValue && inner[v] == ir::kNoValue) {
        // Not yet seen: nodes come in topological order, so it comes from outside.
        const ir::Value& val = g.value(v);
        if (val.is_constant() && val.delegation_tag == tag) {
          inner[v] = sub.add_constant(val.name, val.spec, val.constant);
        } else {
          inner[v] = sub.add_value(val.name, val.spec);
          sub.inputs().push_back(inner[v]);
          x.outer_inputs.push_back(v);
        }
      }
      ins.push_back(v == ir::kNoValue ? ir::kNoValue : inner[v]);
    }
    for (ir::ValueId v : n.outputs) {
      inner[v] = sub.add_value(g.value(v).name, g.value(v).spec);
      outs.push_back(inner[v]);
    }
    ir::NodeMeta meta = n.meta;
    meta.delegation_tag.clear();
    for (int32_t h : meta.debug_handles) {
      const auto info = program.debug_handles.find(h);
      if (info != program.debug_handles.end()) x.program.debug_handles[h] = info->second;
    }
    sub.add_node(n.op, std::move(ins), std::move(outs), n.attrs, std::move(meta));
  }
  const std::vector<bool> read = read_outside(g, inside);
  for (ir::NodeId id : x.nodes)
    for (ir::ValueId v : g.node(id).outputs)
      if (read[v]) {
        sub.outputs().push_back(inner[v]);
        x.outer_outputs.push_back(v);
      }
  return x;
}

void sort_topologically(ir::Graph& g, const std::vector<int64_t>& key) {
  const size_t num_nodes = g.nodes().size();
  std::vector<ir::NodeId> producer(g.values().size(), -1);
  for (const ir::Node& n : g.nodes())
    if (!n.dead)
      for (ir::ValueId v : n.outputs) producer[v] = n.id;
  std::vector<std::vector<ir::NodeId>> successors(num_nodes);
  std::vector<int> pending(num_nodes, 0);
  size_t live = 0;
  for (const ir::Node& n : g.nodes()) {
    if (n.dead) continue;
    ++live;
    for (ir::ValueId v : n.inputs) {
      if (v == ir::kNoValue || producer[v] < 0) continue;
      successors[producer[v]].push_back(n.id);
      ++pending[n.id];
    }
  }
  using Entry = std::pair<int64_t, ir::NodeId>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> ready;
  for (const ir::Node& n : g.nodes())
    if (!n.dead && pending[n.id] == 0) ready.emplace(key[n.id], n.id);
  std::vector<ir::Node> sorted;
  sorted.reserve(live);
  while (!ready.empty()) {
    const ir::NodeId id = ready.top().second;
    ready.pop();
    for (ir::NodeId s : successors[id])
      if (--pending[s] == 0) ready.emplace(key[s], s);
    sorted.push_back(std::move(g.node(id)));
  }
  if (sorted.size() != live)
    throw CompileError("internal: the graph has a cycle after replacing a partition");
  for (ir::Value& v : g.values()) v.producer = -1;
  for (size_t i = 0; i < sorted.size(); ++i) {
    sorted[i].id = static_cast<ir::NodeId>(i);
    for (ir::ValueId v : sorted[i].outputs) g.value(v).producer = sorted[i].id;
  }
  g.nodes() = std::move(sorted);
}

}  // namespace etc::lowering
