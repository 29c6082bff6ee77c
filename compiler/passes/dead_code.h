#pragma once
// Removes nodes none of whose outputs reach a graph output, then compacts.

#include "compiler/ir/graph.h"

namespace etc::passes {

// Returns the number of nodes removed.
size_t eliminate_dead_code(ir::Graph& graph);

}  // namespace etc::passes
