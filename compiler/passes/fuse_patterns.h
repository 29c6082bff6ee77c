#pragma once
// Rewrites op patterns that exporters write out into the one edge op that
// computes them, so every backend sees the fused op (ONNX Runtime's graph
// optimizer does the same):
//   x * hard_sigmoid(x) with alpha 1/6, beta 1/2  ->  hard_swish(x)
//     (torch's Hardswish before opset 14)
//   x * (1 + erf(x / sqrt 2)) * 0.5, in any grouping  ->  gelu(x)
//     (torch's GELU before opset 20)
//   (x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps) [* gamma] [+ beta],
//     means over trailing axes  ->  layer_norm(x, gamma, beta)
//     (LayerNorm from exporters without LayerNormalization: PaddlePaddle,
//     torch before opset 17, TensorFlow)
//   x + x * g, g broadcast over x (a gate added back: PaddleOCR's residual
//     squeeze-and-excitation)  ->  x * (g + 1): the Mul's node computes the
//     small g + 1 and keeps its debug handles, the Add's node the product
// Intermediates read elsewhere, or graph outputs, keep a pattern unfused.
// Otherwise the fused node takes every matched node's debug handles.

#include <cstddef>

#include "compiler/ir/graph.h"

namespace etc::passes {

// Returns the number of patterns fused.
size_t fuse_patterns(ir::Graph& g);

}  // namespace etc::passes
