#pragma once
// Runs 1-D convolutions as 2-D ones of height 1, so every 2-D path (the
// XNNPACK backend's convolution nodes and native kernels, the portable 2-D
// kernel) takes audio and sequence models' Conv1d too:
//   conv(x [N,C,L], w [M,C/g,K])  ->  reshape(x) [N,C,1,L]
//                                     conv(.., w [M,C/g,1,K]) [N,M,1,L']
//                                     reshape -> [N,M,L']
// with strides, pads and dilations of height 1 and no padding on it (a
// constant weight shares its bytes; any other is reshaped too). The fused
// clamp and every other attribute carry over. Then chains of reshapes
// collapse: reshape(reshape(x)) with nothing else reading the middle becomes
// one reshape, and a reshape to its input's own shape (or to the shape of
// the value a reshape before it reshaped) disappears, so
// back-to-back 1-D convolutions meet as 2-D ones with nothing between.
//
// Numerics: identical (the same sums in the same order).

#include "compiler/ir/graph.h"

namespace etc::passes {

// Returns the number of 1-D convolutions rewritten. Compacts the graph.
size_t conv1d_as_2d(ir::Graph& graph);

// Returns the number of reshapes removed. Leaves dead nodes for compact().
size_t collapse_reshapes(ir::Graph& graph);

}  // namespace etc::passes
