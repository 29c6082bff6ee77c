#pragma once
// The ahead-of-time pipeline up to the edge program: ONNX import, then the
// pass pipeline. Every front end (CLI, tests, benchmarks) compiles through here.

#include <string>

#include "compiler/import/onnx/importer.h"
#include "compiler/passes/pipeline.h"

namespace etc {

// Throws CompileError naming the file, node and reason.
ir::ExportedProgram compile_onnx(const std::string& path, const onnx_import::ImportOptions& options = {},
                                 passes::PipelineStats* stats = nullptr);

}  // namespace etc
