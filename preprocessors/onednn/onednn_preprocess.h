#pragma once
// The oneDNN backend's ahead-of-time half: lowers a partition tagged by
// partitioners/onednn into the blob runtime/backends/onednn reads
// (onednn_blob.fbs), one node per oneDNN primitive. What follows a
// convolution, inner product or binary node and only it reads — an
// activation, a residual add (as oneDNN's sum post-op) — is folded into that
// node's post-ops; the folded node then runs where its last follower stood,
// so an add's other operand is ready. The debug handle map's key of each
// blob node covers every edge node it computes.
//
// Errors: CompileError naming the file, the node and the reason.

#include "compiler/backend/backend_details.h"

namespace etc::onednn {

class OnednnBackendDetails : public BackendDetails {
 public:
  PreprocessResult preprocess(const ir::ExportedProgram& partition,
                              std::span<const CompileSpec> compile_specs) const override;
};

}  // namespace etc::onednn
