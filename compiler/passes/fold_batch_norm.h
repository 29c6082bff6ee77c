#pragma once
// Folds an inference batch_norm into the conv that feeds it, when the conv's
// weight (and bias) and the batch_norm's parameters are constants and the conv
// output has no other reader:
//   W'[m] = W[m] * s[m],  b'[m] = (b[m] - mean[m]) * s[m] + beta[m],
//   s = gamma / sqrt(var + eps).
// The conv node then carries the batch_norm's debug handles too.

#include "compiler/ir/graph.h"

namespace etc::passes {

// Returns the number of batch_norm nodes folded. Leaves dead nodes for compact().
size_t fold_batch_norm(ir::Graph& graph);

}  // namespace etc::passes
