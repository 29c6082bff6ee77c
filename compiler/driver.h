#pragma once
// The ahead-of-time pipeline up to the edge program: ONNX import, then the
// pass pipeline. Every front end (CLI, tests, benchmarks) compiles through here.

#include <string>
#include <vector>

#include "compiler/backend/partitioner.h"
#include "compiler/import/onnx/importer.h"
#include "compiler/passes/pipeline.h"

namespace etc {

// Throws CompileError naming the file, node and reason. With
// options.input_min_shapes (bounded dynamic shapes), the model is compiled
// for the largest shapes, and also at the smallest and middle ones, which
// must give the same program up to shapes (the error names the first node
// whose attributes or constants follow the input's size); the program then
// records each input's smallest shape.
// The model compiled at other sizes of the ranges, kept for lowering
// (lower_to_backends).
struct ShapeProbe {
  std::string which;  // "smallest", "middle"
  std::string sizes;  // "x=[1, 3, 320, 320]"
  ir::ExportedProgram program;
};

ir::ExportedProgram compile_onnx(const std::string& path, const onnx_import::ImportOptions& options = {},
                                 passes::PipelineStats* stats = nullptr,
                                 std::vector<ShapeProbe>* probes = nullptr,
                                 const passes::PipelineOptions& pipeline = {});

// to_backend(program, partitioner). With probes (a program compiled with
// ranges), each probe is lowered the same way and every delegate must
// resize from the largest sizes to the probe's (BackendDetails::
// check_resize): the same partitions, and each backend's processed bytes
// at the probe's sizes what its runtime half derives. Throws CompileError
// naming the delegate, the sizes and the first difference.
ir::ExportedProgram lower_to_backends(const ir::ExportedProgram& program,
                                      const std::vector<ShapeProbe>& probes, const Partitioner& partitioner);

}  // namespace etc
