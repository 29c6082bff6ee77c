#pragma once
// The compiler's pass pipeline over an imported program.

#include "compiler/ir/graph.h"

namespace etc::passes {

struct PipelineStats {
  size_t batch_norms_folded = 0;
  size_t conv_affines_folded = 0;  // fold_into_conv.h
  size_t patterns_fused = 0;       // fuse_patterns.h
  size_t conv1d_as_2d = 0;         // conv1d_as_2d.h
  size_t conv_taps_trimmed = 0;    // trim_conv_taps.h
  size_t dead_nodes_removed = 0;
  size_t rnn_weights_prepacked = 0;  // prepack_rnn.h: packed forms added
  size_t rnn_prepacked_bytes = 0;    // and their size
};

struct PipelineOptions {
  // prepack_rnn.h: LSTM and GRU weights packed ahead of time beside their
  // plain form (a larger program, no packing at init).
  bool prepack_rnn = true;
  // trim_conv_taps.h. Off for a program that serves a range of input sizes,
  // where which taps reach the input depends on the size.
  bool trim_conv_taps = true;
};

// Runs every pass in order, then compacts and verifies (throws CompileError
// on a verifier failure, which would be a compiler bug).
PipelineStats run_pipeline(ir::ExportedProgram& program, const PipelineOptions& options = {});

}  // namespace etc::passes
