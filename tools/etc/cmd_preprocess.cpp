// etc preprocess MODEL.onnx -o MODEL.etp [--backend B]... [--input-shape NAME=1x3x224x224]...
//   Without --backend every node runs on the portable kernels. With backends,
//   the model is partitioned, each partition lowered through its backend's
//   preprocess, and the CI gates checked before anything is written.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "compiler/backend/partition_report.h"
#include "compiler/backend/to_backend.h"
#include "compiler/common/compile_error.h"
#include "compiler/driver.h"
#include "compiler/emit/program_writer.h"
#include "compiler/ir/printer.h"
#include "tools/etc/atomic_file.h"
#include "tools/etc/backend_flags.h"
#include "tools/etc/commands.h"
#include "tools/etc/shape_flag.h"
#include "tools/etc/tool_error.h"

namespace etc::cli {

namespace {

std::string size_text(double bytes) {
  char size[32];
  std::snprintf(size, sizeof size, bytes < 1e6 ? "%.1f kB" : "%.1f MB",
                bytes < 1e6 ? bytes / 1e3 : bytes / 1e6);
  return size;
}

// "delegate 0 (xnnpack) weights: 9.5 MB plain (31), 37.3 MB packed for
// the native kernel (11), 38.0 MB transformed for Winograd (10)": what
// each delegate's share of the program is made of (constants per layout).
void print_delegate_weights(const ir::ExportedProgram& program) {
  for (size_t d = 0; d < program.delegates.size(); ++d) {
    const ir::LoweredBackendModule& m = program.delegates[d];
    if (m.weights.empty()) continue;
    std::cout << "delegate " << d << " (" << m.backend_id << ") weights:";
    for (size_t i = 0; i < m.weights.size(); ++i) {
      std::cout << (i ? ", " : " ") << size_text(static_cast<double>(m.weights[i].bytes)) << " "
                << m.weights[i].layout << " (" << m.weights[i].tensors << ")";
    }
    std::cout << "\n";
  }
}

}  // namespace

Action add_preprocess(CLI::App& app) {
  auto* cmd = app.add_subcommand("preprocess", "Compile an ONNX model into a program file (.etp)");
  struct Options {
    std::string model, output, fallback = "none", prepack = "rnn";
    std::vector<std::string> input_shapes;
    bool json = false;
    bool print_ir = false;
    BackendFlags backend;
  };
  auto opt = std::make_shared<Options>();
  cmd->add_option("model", opt->model, "ONNX model")->required();
  cmd->add_option("-o,--output", opt->output, "Program file to write")->required();
  cmd->add_option(
      "--input-shape", opt->input_shapes,
      "Fix an input's shape: NAME=1x3x224x224, or give a range per dim, NAME=1x3x320..960x320..960, "
      "to run any size within it (repeatable)");
  add_backend_flags(*cmd, opt->backend);
  cmd->add_option("--fallback", opt->fallback,
                  "portable: keep each delegate's portable instructions beside it, run where its backend "
                  "cannot (more slowly, with a warning)")
      ->check(CLI::IsMember({"portable", "none"}));
  cmd->add_option("--prepack", opt->prepack,
                  "rnn (default): store LSTM and GRU weights also packed for the portable kernels' AVX-512 "
                  "products, read in place where those run (a larger program, no packing at init); none: "
                  "leave them out (the smaller program, for CPUs without AVX-512)")
      ->check(CLI::IsMember({"rnn", "none"}));
  cmd->add_flag("--json", opt->json, "Print a JSON summary");
  cmd->add_flag("--print-ir", opt->print_ir, "Print the edge IR after the passes");
  return [opt]() {
    const auto start = std::chrono::steady_clock::now();
    onnx_import::ImportOptions options;
    options.input_shapes = parse_shape_flags(opt->input_shapes);
    options.input_min_shapes = parse_shape_ranges(opt->input_shapes);
    std::unique_ptr<Partitioner> partitioner;
    if (!opt->backend.backends.empty()) partitioner = make_requested_partitioner(opt->backend);
    std::vector<ShapeProbe> probes;
    passes::PipelineOptions pipeline;
    pipeline.prepack_rnn = opt->prepack == "rnn";
    passes::PipelineStats pipeline_stats;
    ir::ExportedProgram program = compile_onnx(opt->model, options, &pipeline_stats, &probes, pipeline);
    std::optional<PartitionReport> report;
    if (partitioner) {
      report = make_partition_report(program, *partitioner, opt->backend.backends);
      const std::string gate = check_gates(opt->backend, *report);
      if (!gate.empty()) {
        std::cerr << "error: " << opt->model << ": gate failed: " << gate << "; " << opt->output
                  << " not written\n";
        return kExitGateFailed;
      }
      program = lower_to_backends(program, probes, *partitioner);
      if (opt->fallback == "portable") attach_fallbacks(program);
    } else if (opt->fallback == "portable") {
      throw ToolError("--fallback portable keeps the portable instructions of delegates: it needs --backend");
    }
    if (opt->print_ir) std::cout << ir::print(program);
    emit::EmitStats stats;
    const emit::ProgramImage image = emit::serialize_program_image(program, &stats);
    write_file_atomically(opt->output, image.pieces);
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
                          {"compile_ms", ms},
                          {"delegates", stats.num_delegates},
                          {"delegate_bytes", stats.delegate_bytes}};
      nlohmann::json weights = nlohmann::json::array();
      for (size_t d = 0; d < program.delegates.size(); ++d)
        for (const ir::WeightLayoutSummary& l : program.delegates[d].weights)
          weights.push_back({{"delegate", d},
                             {"backend", program.delegates[d].backend_id},
                             {"layout", l.layout},
                             {"tensors", l.tensors},
                             {"bytes", l.bytes}});
      j["delegate_weights"] = weights;
      j["prepacked_rnn_weights"] = {{"tensors", pipeline_stats.rnn_weights_prepacked},
                                    {"bytes", pipeline_stats.rnn_prepacked_bytes}};
      if (report)
        j["partitioning"] = {{"backends", report->backends},
                             {"nodes", report->nodes.size()},
                             {"delegated_nodes", report->delegated_nodes},
                             {"node_coverage", report->node_coverage()},
                             {"flops_coverage", report->flops_coverage()},
                             {"partitions", report->partitions.size()}};
      std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    } else {
      std::cout << "wrote " << opt->output << ": " << stats.num_instructions << " instructions ("
                << stats.num_delegates << " delegate calls), " << stats.file_size << " bytes, arena "
                << stats.arena_size << " bytes (lower bound " << stats.arena_lower_bound << "), compiled in "
                << static_cast<int>(ms) << " ms\n";
      print_delegate_weights(program);
      if (pipeline_stats.rnn_weights_prepacked > 0)
        std::cout << "LSTM/GRU weights packed ahead of time: "
                  << size_text(static_cast<double>(pipeline_stats.rnn_prepacked_bytes)) << " ("
                  << pipeline_stats.rnn_weights_prepacked << "; --prepack none leaves them out)\n";
      if (report)
        std::cout << "delegated " << report->delegated_nodes << " of " << report->nodes.size() << " nodes ("
                  << static_cast<int>(report->node_coverage() * 1000 + 0.5) / 10.0 << "%) in "
                  << report->partitions.size() << " partition" << (report->partitions.size() == 1 ? "" : "s")
                  << "; `etc partition` shows why the rest stays on portable kernels\n";
    }
    return kExitOk;
  };
}

}  // namespace etc::cli
