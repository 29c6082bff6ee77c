#pragma once
// Checks the structural invariants of a graph: ids in range, single producer
// per value, topological order, every node's types match its op's shape
// function. Returns a message naming the first offending node.
//
// A call_delegate node (Node::delegate >= 0) has no shape function: the graph
// overload checks only its ids and order. The program overload also checks
// that its delegate index names one of ExportedProgram::delegates and, when
// the lowered module keeps its original program, that the node's inputs and
// outputs match that program's graph inputs and outputs in number and type
// (and that the original program verifies).

#include "compiler/ir/graph.h"
#include "runtime/core/result.h"

namespace etc::ir {

Status verify(const Graph& graph);
Status verify(const ExportedProgram& program);

}  // namespace etc::ir
