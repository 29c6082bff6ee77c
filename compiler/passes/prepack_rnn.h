#pragma once
// Packs the constant weights of float32 LSTM and GRU nodes ahead of time:
// each node whose W (input 1) and R (input 2) are constants gets their forms
// in the packed product's layout as its inputs "W packed ahead of time" and
// "R packed ahead of time" (edge_ops.def; runtime/kernels/portable/
// rnn_common.h rnn_prepack). Where the runtime runs the packed products
// (AVX-512) it reads them in place from the mapped program instead of
// packing W and R at init, and never touches W's and R's own pages; on
// other CPUs it multiplies by W and R as they are and the packed forms stay
// unread in the file. The program grows by about the size of W and R.
//
// Numerics: identical (the kernel runs the same products on the same
// layout; it only no longer makes it itself).

#include <cstddef>

#include "compiler/ir/graph.h"

namespace etc::passes {

struct PrepackStats {
  size_t tensors = 0;  // packed forms added
  size_t bytes = 0;    // their size
};

// In control-flow bodies too (as copies: bodies are shared).
PrepackStats prepack_rnn_weights(ir::Graph& graph);

}  // namespace etc::passes
