#pragma once
// The demo backend's ahead-of-time half: writes the text program described in
// runtime/backends/demo/demo_format.h. A mul whose only reader is an add (and
// that is not a partition output) fuses with it into one mul_add instruction,
// whose debug map entry covers both nodes. Identifiers are strings: the ONNX
// node's name, or "mul+add" names joined for a fused pair, made unique.

#include "compiler/backend/backend_details.h"

namespace etc::demo {

class DemoBackendDetails : public BackendDetails {
 public:
  // Throws CompileError naming the node when the partition holds anything the
  // demo backend cannot run.
  PreprocessResult preprocess(const ir::ExportedProgram& partition,
                              std::span<const CompileSpec> compile_specs) const override;
};

}  // namespace etc::demo
