#include "compiler/passes/pipeline.h"

#include "compiler/common/compile_error.h"
#include "compiler/ir/verifier.h"
#include "compiler/passes/dead_code.h"
#include "compiler/passes/fold_into_conv.h"
#include "compiler/passes/fuse_activation.h"
#include "compiler/passes/fuse_patterns.h"

namespace etc::passes {

PipelineStats run_pipeline(ir::ExportedProgram& program) {
  PipelineStats stats;
  ir::Graph& g = program.graph;
  stats.batch_norms_folded = fold_batch_norm(g);
  stats.conv_affines_folded = fold_conv_affine(g);
  stats.patterns_fused = fuse_patterns(g);
  // After batch_norm folding, so a conv -> batch_norm -> relu chain becomes one conv.
  fuse_activation(g);
  stats.dead_nodes_removed = eliminate_dead_code(g);
  Status s = ir::verify(g);
  if (!s.ok()) throw CompileError(program.source_path + ": internal error after passes: " + s.message());
  return stats;
}

}  // namespace etc::passes
