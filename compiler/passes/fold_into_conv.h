#pragma once
// Folds what a conv's (or conv_transpose's) output goes through into its
// own constant weights and bias, when the conv's output has no other reader (the conv
// then carries the folded node's debug handles too):
// - an inference batch_norm:
//     W'[m] = W[m] * s[m],  b'[m] = (b[m] - mean[m]) * s[m] + beta[m],
//     s = gamma / sqrt(var + eps);
// - a Mul or Div by a constant, and an Add or Sub of one, that holds one
//   value or one per output channel (shape [M, 1, 1], [1, M, 1, 1], ...):
//     x * s: W'[m] = W[m] * s[m], b'[m] = b[m] * s[m]  (x / s: by 1 / s)
//     x + c: b'[m] = b[m] + c[m]                       (x - c: - c)
//   as ONNX Runtime's ConvMulFusion and ConvAddFusion do. Exporters write
//   these for learnable affine blocks (PaddleOCR's PP-LCNetV3) and for
//   input normalisation layers after a conv. Non-finite factors, and a
//   constant on the left of a Sub or Div, are left alone.

#include "compiler/ir/graph.h"

namespace etc::passes {

// Returns the number of batch_norm nodes folded. Leaves dead nodes for compact().
size_t fold_batch_norm(ir::Graph& graph);

// Returns the number of Mul, Div, Add and Sub nodes folded (chains fold one
// after another). Leaves dead nodes for compact().
size_t fold_conv_affine(ir::Graph& graph);

}  // namespace etc::passes
