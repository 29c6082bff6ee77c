#pragma once
// Checks the structural invariants of a graph: ids in range, single producer
// per value, topological order, every node's types match its op's shape
// function. Returns a message naming the first offending node.

#include "compiler/ir/graph.h"
#include "runtime/core/result.h"

namespace etc::ir {

Status verify(const Graph& graph);

}  // namespace etc::ir
