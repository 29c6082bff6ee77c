#pragma once
// to_backend's extract and replace helpers: a tag's nodes as a program of
// their own, and a stable topological re-ordering for after the replace.

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/graph.h"

namespace etc::lowering {

struct ExtractedPartition {
  // The tag's nodes as a self-contained program: same source path, opset and
  // value names; the debug handle entries of its nodes; no delegation tags.
  ir::ExportedProgram program;
  // Outer value id of each program input / output, in order.
  std::vector<ir::ValueId> outer_inputs;
  std::vector<ir::ValueId> outer_outputs;
  // The outer nodes it was made from, in graph order.
  std::vector<ir::NodeId> nodes;
};

// Inputs: values the tag's nodes read but that are produced outside (graph
// inputs, other nodes' outputs, constants not tagged `tag`), by first use.
// Constants tagged `tag` become constants of the program. Outputs: values its
// nodes produce that a node outside reads or that are graph outputs.
// The graph must be topologically ordered.
ExtractedPartition extract_partition(const ir::ExportedProgram& program, const std::string& tag);

// Re-orders the live nodes topologically, each as early as its key allows
// (smaller key first among ready nodes), drops dead nodes, renumbers node ids
// and producers. `key` is indexed by node id. Throws CompileError on a cycle.
void sort_topologically(ir::Graph& graph, const std::vector<int64_t>& key);

}  // namespace etc::lowering
