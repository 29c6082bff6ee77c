// etc preprocess MODEL.onnx -o MODEL.etp [--input-shape NAME=1x3x224x224]...
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>

#include "compiler/common/compile_error.h"
#include "compiler/driver.h"
#include "compiler/emit/program_writer.h"
#include "compiler/ir/printer.h"
#include "tools/etc/commands.h"
#include "tools/etc/shape_flag.h"

namespace etc::cli {

Action add_preprocess(CLI::App& app) {
  auto* cmd = app.add_subcommand("preprocess", "Compile an ONNX model into a program file (.etp)");
  struct Options {
    std::string model, output;
    std::vector<std::string> input_shapes;
    bool json = false;
    bool print_ir = false;
  };
  auto opt = std::make_shared<Options>();
  cmd->add_option("model", opt->model, "ONNX model")->required();
  cmd->add_option("-o,--output", opt->output, "Program file to write")->required();
  cmd->add_option("--input-shape", opt->input_shapes, "Fix an input's shape: NAME=1x3x224x224 (repeatable)");
  cmd->add_flag("--json", opt->json, "Print a JSON summary");
  cmd->add_flag("--print-ir", opt->print_ir, "Print the edge IR after the passes");
  return [opt]() {
    const auto start = std::chrono::steady_clock::now();
    onnx_import::ImportOptions options;
    for (const std::string& s : opt->input_shapes) {
      auto [name, shape] = parse_shape_flag(s);
      options.input_shapes[name] = shape;
    }
    ir::ExportedProgram program = compile_onnx(opt->model, options);
    if (opt->print_ir) std::cout << ir::print(program.graph);
    emit::EmitStats stats;
    const std::vector<uint8_t> bytes = emit::serialize_program(program, &stats);
    emit::write_file_atomically(opt->output, bytes);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (opt->json) {
      nlohmann::json j = {{"model", opt->model},
                          {"output", opt->output},
                          {"instructions", stats.num_instructions},
                          {"file_bytes", stats.file_size},
                          {"constant_bytes", stats.constant_bytes},
                          {"arena_bytes", stats.arena_size},
                          {"arena_lower_bound_bytes", stats.arena_lower_bound},
                          {"compile_ms", ms}};
      std::cout << j.dump(2) << "\n";
    } else {
      std::cout << "wrote " << opt->output << ": " << stats.num_instructions
                << " instructions (portable kernels), " << stats.file_size << " bytes, arena "
                << stats.arena_size << " bytes (lower bound " << stats.arena_lower_bound << "), compiled in "
                << static_cast<int>(ms) << " ms\n";
    }
    return kExitOk;
  };
}

}  // namespace etc::cli
