#pragma once
// The ahead-of-time half: one partition (a chain of Neg nodes) into the blob
// of negate_format.h, with a debug handle map of integer identifiers.

#include "compiler/backend/backend_details.h"

namespace etc::negate {

class NegateBackendDetails : public BackendDetails {
 public:
  // Throws CompileError naming the node when the partition is not a chain.
  PreprocessResult preprocess(const ir::ExportedProgram& partition,
                              std::span<const CompileSpec> compile_specs) const override;
};

}  // namespace etc::negate
