#pragma once
// Fuses a relu or a clip (constant float bounds) into the conv, gemm or matmul
// that produces its input, when that output has no other reader and is not a
// graph output. The producer gets the float attributes clamp_min / clamp_max
// (relu: clamp_min = 0) which its kernel applies in its output pass, takes
// over the activation's output value, and carries the activation's debug
// handles too. A producer that already has a fused clamp is left alone.
//
// Numerics: identical to running the activation separately, except that a NaN
// fed to a fused relu stays NaN (the relu kernel maps it to 0; the clip kernel
// keeps it).

#include "compiler/ir/graph.h"

namespace etc::passes {

// Returns the number of activations fused. Leaves dead nodes for compact().
size_t fuse_activation(ir::Graph& graph);

}  // namespace etc::passes
