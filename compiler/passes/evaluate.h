#pragma once
// Runs one edge op on constant inputs with the portable kernel, at compile
// time. Used by import-time folding and the constant-folding pass, so folded
// values are bit-identical to what the runtime would compute.

#include <vector>

#include "compiler/ir/graph.h"
#include "runtime/core/result.h"

namespace etc::passes {

// Inputs may contain kNoValue (absent optional); all others must be constants.
Result<std::vector<ir::ConstantData>> evaluate(const ir::Graph& graph, EdgeOp op,
                                               const std::vector<ir::ValueId>& inputs, const ir::Attrs& attrs,
                                               const std::vector<TensorSpec>& output_specs);

}  // namespace etc::passes
