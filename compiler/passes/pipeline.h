#pragma once
// The compiler's pass pipeline over an imported program.

#include "compiler/ir/graph.h"

namespace etc::passes {

struct PipelineStats {
  size_t batch_norms_folded = 0;
  size_t conv_affines_folded = 0;  // fold_into_conv.h
  size_t patterns_fused = 0;       // fuse_patterns.h
  size_t conv1d_as_2d = 0;         // conv1d_as_2d.h
  size_t dead_nodes_removed = 0;
};

// Runs every pass in order, then compacts and verifies (throws CompileError
// on a verifier failure, which would be a compiler bug).
PipelineStats run_pipeline(ir::ExportedProgram& program);

}  // namespace etc::passes
