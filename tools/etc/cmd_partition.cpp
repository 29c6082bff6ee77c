// etc partition MODEL.onnx [--backend B]... [--format text|json|dot] [-o FILE]
//   (no --backend: xnnpack)
//   For every node: the backend and partition it goes to, or why it stays on
//   the portable kernels. CI gates exit with kExitGateFailed.
#include <iostream>

#include "compiler/backend/partition_report.h"
#include "compiler/driver.h"
#include "compiler/emit/program_writer.h"
#include "tools/etc/atomic_file.h"
#include "tools/etc/backend_flags.h"
#include "tools/etc/commands.h"
#include "tools/etc/partition_format.h"
#include "tools/etc/shape_flag.h"

namespace etc::cli {

Action add_partition(CLI::App& app) {
  auto* cmd = app.add_subcommand("partition", "Show which backend runs each node of an ONNX model, and why");
  struct Options {
    std::string model, output, format = "text";
    std::vector<std::string> input_shapes;
    BackendFlags backend;
  };
  auto opt = std::make_shared<Options>();
  cmd->add_option("model", opt->model, "ONNX model")->required();
  add_backend_flags(*cmd, opt->backend);
  cmd->add_option("--format", opt->format, "Report format")
      ->check(CLI::IsMember({"text", "json", "dot"}))
      ->capture_default_str();
  cmd->add_option("-o,--output", opt->output, "Write the report to FILE instead of standard output");
  cmd->add_option("--input-shape", opt->input_shapes, "Fix an input's shape: NAME=1x3x224x224 (repeatable)");
  return [opt]() {
    onnx_import::ImportOptions options;
    options.input_shapes = parse_shape_flags(opt->input_shapes);
    // The main backend is the default question: "what would XNNPACK take?"
    if (opt->backend.backends.empty()) opt->backend.backends = {"xnnpack"};
    const auto partitioner = make_requested_partitioner(opt->backend);
    const ir::ExportedProgram program = compile_onnx(opt->model, options);
    const PartitionReport report = make_partition_report(program, *partitioner, opt->backend.backends);
    const std::string text = opt->format == "json"  ? format_partition_json(report)
                             : opt->format == "dot" ? format_partition_dot(report, program.graph)
                                                    : format_partition_text(report);
    if (opt->output.empty()) {
      std::cout << text;
    } else {
      write_file_atomically(opt->output, std::vector<uint8_t>(text.begin(), text.end()));
    }
    const std::string gate = check_gates(opt->backend, report);
    if (!gate.empty()) {
      std::cerr << "error: " << opt->model << ": gate failed: " << gate << "\n";
      return kExitGateFailed;
    }
    return kExitOk;
  };
}

}  // namespace etc::cli
