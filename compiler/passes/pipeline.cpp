#include "compiler/passes/pipeline.h"

#include "compiler/common/compile_error.h"
#include "compiler/ir/verifier.h"
#include "compiler/passes/conv1d_as_2d.h"
#include "compiler/passes/dead_code.h"
#include "compiler/passes/fold_into_conv.h"
#include "compiler/passes/fuse_activation.h"
#include "compiler/passes/fuse_patterns.h"
#include "compiler/passes/prepack_rnn.h"
#include "compiler/passes/trim_conv_taps.h"

namespace etc::passes {

namespace {

// The passes over one graph, then over copies of its control-flow bodies
// (bodies are shared and never changed in place).
void run_passes(ir::Graph& g, const PipelineOptions& options, PipelineStats& stats) {
  if (options.trim_conv_taps) stats.conv_taps_trimmed += trim_conv_taps(g);
  stats.batch_norms_folded += fold_batch_norm(g);
  stats.conv_affines_folded += fold_conv_affine(g);
  stats.patterns_fused += fuse_patterns(g);
  // After batch_norm folding, so a conv -> batch_norm -> relu chain becomes one conv.
  fuse_activation(g);
  // Last: the folds and fusions above see the 1-D convolutions as written.
  stats.conv1d_as_2d += conv1d_as_2d(g);
  collapse_reshapes(g);
  stats.dead_nodes_removed += eliminate_dead_code(g);
  for (ir::Node& n : g.nodes())
    for (auto& body : n.subgraphs) {
      auto copy = std::make_shared<ir::Graph>(*body);
      run_passes(*copy, options, stats);
      body = std::move(copy);
    }
}

}  // namespace

PipelineStats run_pipeline(ir::ExportedProgram& program, const PipelineOptions& options) {
  PipelineStats stats;
  ir::Graph& g = program.graph;
  run_passes(g, options, stats);
  // Last: on the weights as every other pass left them.
  if (options.prepack_rnn) {
    const PrepackStats packed = prepack_rnn_weights(g);
    stats.rnn_weights_prepacked = packed.tensors;
    stats.rnn_prepacked_bytes = packed.bytes;
  }
  Status s = ir::verify(g);
  if (!s.ok()) throw CompileError(program.source_path + ": internal error after passes: " + s.message());
  return stats;
}

}  // namespace etc::passes
