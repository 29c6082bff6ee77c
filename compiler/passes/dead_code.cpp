#include "compiler/passes/dead_code.h"

namespace etc::passes {

size_t eliminate_dead_code(ir::Graph& graph) {
  std::vector<bool> live(graph.values().size(), false);
  for (ir::ValueId v : graph.outputs()) live[v] = true;
  size_t removed = 0;
  // Nodes are topologically ordered, so one backward sweep finds all live ones.
  for (auto it = graph.nodes().rbegin(); it != graph.nodes().rend(); ++it) {
    ir::Node& n = *it;
    if (n.dead) continue;
    bool needed = false;
    for (ir::ValueId out : n.outputs) needed = needed || live[out];
    if (!needed) {
      n.dead = true;
      ++removed;
      continue;
    }
    for (ir::ValueId in : n.inputs)
      if (in != ir::kNoValue) live[in] = true;
  }
  graph.compact();
  return removed;
}

}  // namespace etc::passes
