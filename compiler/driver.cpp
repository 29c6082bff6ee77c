#include "compiler/driver.h"

namespace etc {

ir::ExportedProgram compile_onnx(const std::string& path, const onnx_import::ImportOptions& options,
                                 passes::PipelineStats* stats) {
  ir::ExportedProgram program = onnx_import::import_onnx(path, options);
  const passes::PipelineStats s = passes::run_pipeline(program);
  if (stats) *stats = s;
  return program;
}

}  // namespace etc
