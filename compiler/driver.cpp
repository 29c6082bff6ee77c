#include "compiler/driver.h"

#include "compiler/backend/to_backend.h"
#include "compiler/common/compile_error.h"
#include "compiler/ir/shape_polymorphism.h"

namespace etc {
namespace {

ir::ExportedProgram import_and_optimize(const std::string& path, const onnx_import::ImportOptions& options,
                                        const passes::PipelineOptions& pipeline,
                                        passes::PipelineStats* stats) {
  ir::ExportedProgram program = onnx_import::import_onnx(path, options);
  const passes::PipelineStats s = passes::run_pipeline(program, pipeline);
  if (stats) *stats = s;
  return program;
}

// Compiles at another size of the ranges and checks it is the same program
// up to shapes, making the differences that can follow the input do so
// (compiler/ir/shape_polymorphism.h).
ShapeProbe check_same_program(const std::string& path, ir::ExportedProgram& program,
                              const onnx_import::ImportOptions& options,
                              const passes::PipelineOptions& pipeline,
                              const std::map<std::string, Shape>& probe, const char* which) {
  onnx_import::ImportOptions at = options;
  at.input_min_shapes.clear();
  for (const auto& [name, shape] : probe) at.input_shapes[name] = shape;
  std::string sizes;
  for (const auto& [name, shape] : probe) sizes += (sizes.empty() ? "" : ", ") + name + "=" + shape.str();
  ir::ExportedProgram other;
  try {
    other = import_and_optimize(path, at, pipeline, nullptr);
  } catch (const CompileError& e) {
    throw CompileError(std::string("at the ") + which + " shapes of the ranges (" + sizes + "): " + e.what());
  }
  const std::string difference = ir::make_shape_polymorphic(program.graph, other.graph);
  if (!difference.empty())
    throw CompileError(path + ": one program cannot serve the whole range of input sizes: " + difference +
                       " (compared with the " + which + " shapes, " + sizes +
                       "); fix those dimensions, or narrow their range");
  return ShapeProbe{which, sizes, std::move(other)};
}

}  // namespace

ir::ExportedProgram compile_onnx(const std::string& path, const onnx_import::ImportOptions& options,
                                 passes::PipelineStats* stats, std::vector<ShapeProbe>* probes,
                                 const passes::PipelineOptions& requested) {
  passes::PipelineOptions pipeline = requested;
  if (!options.input_min_shapes.empty()) pipeline.trim_conv_taps = false;
  ir::ExportedProgram program = import_and_optimize(path, options, pipeline, stats);
  if (options.input_min_shapes.empty()) return program;
  // The program is compiled for the largest shapes; the smallest and the
  // middle of each range must give the same program.
  std::map<std::string, Shape> smallest, middle;
  for (const auto& [name, min] : options.input_min_shapes) {
    const auto max = options.input_shapes.find(name);
    if (max == options.input_shapes.end() || max->second.rank() != min.rank())
      throw CompileError(path + ": input '" + name + "' has a smallest shape but no matching largest one");
    Shape mid;
    for (int d = 0; d < min.rank(); ++d) mid.push_back(min[d] + (max->second[d] - min[d]) / 2);
    smallest[name] = min;
    middle[name] = mid;
  }
  ShapeProbe low = check_same_program(path, program, options, pipeline, smallest, "smallest");
  if (probes) probes->push_back(std::move(low));
  if (middle != smallest) {
    ShapeProbe mid = check_same_program(path, program, options, pipeline, middle, "middle");
    if (probes) probes->push_back(std::move(mid));
  }
  const ir::Graph& g = program.graph;
  for (size_t k = 0; k < g.inputs().size(); ++k) {
    const auto it = options.input_min_shapes.find(g.value(g.inputs()[k]).name);
    if (it != options.input_min_shapes.end()) program.input_min_shapes[k] = it->second;
  }
  return program;
}

ir::ExportedProgram lower_to_backends(const ir::ExportedProgram& program,
                                      const std::vector<ShapeProbe>& probes, const Partitioner& partitioner) {
  ir::ExportedProgram lowered = to_backend(program, partitioner);
  for (const ShapeProbe& probe : probes) {
    const ir::ExportedProgram other = to_backend(probe.program, partitioner);
    const auto refuse = [&](const std::string& why) {
      throw CompileError(program.source_path + ": one program cannot serve the whole range of input sizes: " +
                         why + " (compared with the " + probe.which + " shapes, " + probe.sizes +
                         "); compile without --backend (portable kernels resize), fix those dimensions, or "
                         "narrow their range");
    };
    if (other.delegates.size() != lowered.delegates.size())
      refuse("the partitioner makes " + std::to_string(lowered.delegates.size()) +
             " delegates at the largest sizes and " + std::to_string(other.delegates.size()) + " at these");
    for (size_t d = 0; d < lowered.delegates.size(); ++d) {
      const ir::LoweredBackendModule &a = lowered.delegates[d], &b = other.delegates[d];
      const std::string name =
          "delegate " + std::to_string(d) + " ('" + a.tag + "', backend '" + a.backend_id + "')";
      if (a.backend_id != b.backend_id || a.tag != b.tag)
        refuse(name + " is '" + b.tag + "' on backend '" + b.backend_id + "' at these sizes");
      const BackendDetails* details = find_backend_details(a.backend_id);
      if (details == nullptr) refuse(name + ": no backend details are registered");
      const std::string difference = details->check_resize(a.processed_bytes, b.processed_bytes);
      if (!difference.empty()) refuse(name + " does not resize: " + difference);
    }
  }
  return lowered;
}

}  // namespace etc
