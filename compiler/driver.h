#pragma once
// The ahead-of-time pipeline up to the edge program: ONNX import, then the
// pass pipeline. Every front end (CLI, tests, benchmarks) compiles through here.

#include <string>

#include "compiler/import/onnx/importer.h"
#include "compiler/passes/pipeline.h"

namespace etc {

// Throws CompileError naming the file, node and reason. With
// options.input_min_shapes (bounded dynamic shapes), the model is compiled
// for the largest shapes, and also at the smallest and middle ones, which
// must give the same program up to shapes (the error names the first node
// whose attributes or constants follow the input's size); the program then
// records each input's smallest shape.
ir::ExportedProgram compile_onnx(const std::string& path, const onnx_import::ImportOptions& options = {},
                                 passes::PipelineStats* stats = nullptr);

}  // namespace etc
