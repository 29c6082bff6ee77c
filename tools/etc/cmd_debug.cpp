// etc debug MODEL.onnx --backend B... [--input NAME=FILE]... [--tolerance T] [--json]
//   Compiles the model twice — with the backends and on portable kernels
//   only — runs both on the same inputs with every intermediate output
//   logged, and prints, per ONNX node, how far the delegated result is from
//   the portable one. Exit 3 when a node is over the tolerance.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "compiler/backend/to_backend.h"
#include "compiler/common/compile_error.h"
#include "compiler/devtools/numeric_debug.h"
#include "compiler/driver.h"
#include "compiler/emit/program_writer.h"
#include "runtime/executor/program_validation.h"
#include "tools/etc/backend_flags.h"
#include "tools/etc/commands.h"
#include "tools/etc/input_flags.h"
#include "tools/etc/shape_flag.h"

namespace etc::cli {
namespace {

Program load_bytes(const std::vector<uint8_t>& bytes, const std::string& name) {
  Result<Program> program = Program::load_from_data(FileData::borrow(bytes.data(), bytes.size()), name);
  if (!program.ok()) throw CompileError(program.message());
  return std::move(program).get();
}

std::string number(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3g", v);
  return buf;
}

nlohmann::json json_number(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(number(v));
}

void print_table(const devtools::GapReport& report) {
  std::printf("%-36s %-18s %-10s %-12s %-12s %-10s %s\n", "onnx node", "op_type", "placement", "max_abs",
              "relative", "snr_db", "note");
  for (size_t i = 0; i < report.nodes.size(); ++i) {
    const devtools::NodeGap& g = report.nodes[i];
    const std::string mark = static_cast<int>(i) == report.first_over ? "  <-- first over tolerance" : "";
    std::string label;
    for (const std::string& n : g.covers) label += (label.empty() ? "" : "+") + n;
    if (label.empty()) label = g.onnx_name;
    std::printf("%-36s %-18s %-10s %-12s %-12s %-10s %s%s\n", label.c_str(), g.onnx_op_type.c_str(),
                g.placement.c_str(), g.compared ? number(g.max_abs_error).c_str() : "-",
                g.compared ? number(g.relative_error).c_str() : "-",
                g.compared ? number(g.snr_db).c_str() : "-", g.note.c_str(), mark.c_str());
  }
  for (const std::string& d : report.silent_delegates)
    std::printf("warning: %s logged no intermediate outputs; its nodes are not compared\n", d.c_str());
  std::printf("compared %zu of %zu nodes; tolerance %s (relative)\n", report.num_compared(),
              report.nodes.size(), number(report.tolerance).c_str());
  if (report.first_over >= 0) {
    const devtools::NodeGap& g = report.nodes[static_cast<size_t>(report.first_over)];
    std::printf("first node over the tolerance: '%s' (%s) on %s, relative error %s\n", g.onnx_name.c_str(),
                g.onnx_op_type.c_str(), g.placement.c_str(), number(g.relative_error).c_str());
  } else {
    std::printf("every compared node is within the tolerance\n");
  }
}

void print_json(const devtools::GapReport& report, const std::string& model) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const devtools::NodeGap& g : report.nodes) {
    nlohmann::json n = {{"onnx_node", g.onnx_name}, {"op_type", g.onnx_op_type}, {"covers", g.covers},
                        {"placement", g.placement}, {"shape", g.shape},          {"compared", g.compared}};
    if (g.compared) {
      n["max_abs_error"] = json_number(g.max_abs_error);
      n["relative_error"] = json_number(g.relative_error);
      n["snr_db"] = json_number(g.snr_db);
    } else {
      n["note"] = g.note;
    }
    nodes.push_back(n);
  }
  nlohmann::json j = {{"model", model},
                      {"tolerance", report.tolerance},
                      {"compared", report.num_compared()},
                      {"nodes", nodes},
                      {"silent_delegates", report.silent_delegates},
                      {"first_over_tolerance", nullptr}};
  if (report.first_over >= 0)
    j["first_over_tolerance"] = report.nodes[static_cast<size_t>(report.first_over)].onnx_name;
  std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

}  // namespace

Action add_debug(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "debug", "Compare every ONNX node's output on the backends against the portable kernels");
  struct Options {
    std::string model;
    std::vector<std::string> input_shapes, inputs;
    BackendFlags backend;
    double tolerance = 1e-5;
    int threads = 0;
    bool json = false;
  };
  auto opt = std::make_shared<Options>();
  cmd->add_option("model", opt->model, "ONNX model")->required();
  cmd->add_option("--backend", opt->backend.backends, "Backend to check (repeatable; earlier ones first)")
      ->required();
  cmd->add_option("--compile-spec", opt->backend.compile_specs, "BACKEND:KEY=VALUE passed to that backend");
  cmd->add_option("--input-shape", opt->input_shapes, "Fix an input's shape: NAME=1x3x224x224 (repeatable)");
  cmd->add_option("--input", opt->inputs,
                  "NAME=FILE (.npy or ONNX TensorProto .pb); inputs not given get seeded random data");
  cmd->add_option("--tolerance", opt->tolerance, "Largest relative error (max |diff| / max |ref|) allowed")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option(
         "--threads", opt->threads,
         "Threads of the pool delegates and threaded kernels share (0: one per CPU this process may run on)")
      ->check(CLI::Range(0, 1024));
  cmd->add_flag("--json", opt->json, "Print the comparison as JSON");
  return [opt]() {
    onnx_import::ImportOptions import;
    import.input_shapes = parse_shape_flags(opt->input_shapes);
    const std::unique_ptr<Partitioner> partitioner = make_requested_partitioner(opt->backend);
    const ir::ExportedProgram program = compile_onnx(opt->model, import);
    const std::vector<uint8_t> reference_bytes = emit::serialize_program(program);
    const std::vector<uint8_t> test_bytes = emit::serialize_program(to_backend(program, *partitioner));
    const Program reference = load_bytes(reference_bytes, opt->model + " (portable)");
    const Program test = load_bytes(test_bytes, opt->model + " (delegated)");

    std::vector<ProgramInput> specs;
    const fb::ExecutionPlan& plan = reference.plan();
    for (int32_t v : *plan.inputs()) {
      const fb::Value& value = *plan.values()->Get(static_cast<uint32_t>(v));
      specs.push_back({value.name() ? value.name()->str() : std::string(), value_spec(value)});
    }
    std::vector<devtools::InputTensor> inputs;
    for (LoadedInput& in : load_inputs(opt->inputs, specs, /*random_fill=*/true, opt->model)) {
      if (!(in.tensor.spec == specs[inputs.size()].spec))
        throw CompileError(in.source + ": input '" + specs[inputs.size()].name + "' expects " +
                           dtype_name(specs[inputs.size()].spec.dtype) +
                           specs[inputs.size()].spec.shape.str() + ", got " +
                           dtype_name(in.tensor.spec.dtype) + in.tensor.spec.shape.str());
      inputs.push_back({in.tensor.spec, std::move(in.tensor.bytes)});
    }

    RuntimeOptions options;
    options.num_threads = usable_threads(opt->threads);
    const devtools::Etdump ref_dump = devtools::record_intermediate_outputs(reference, inputs, options);
    options.delegate_detail = DelegateDetail::kNodeOutputs;
    const devtools::Etdump test_dump = devtools::record_intermediate_outputs(test, inputs, options);
    const devtools::GapReport report =
        devtools::compare_intermediate_outputs(reference, ref_dump, test, test_dump, opt->tolerance);
    if (opt->json)
      print_json(report, opt->model);
    else
      print_table(report);
    if (report.num_compared() == 0)
      throw CompileError(opt->model + ": no node's output could be compared (the backends logged none)");
    return report.first_over >= 0 ? kExitGateFailed : kExitOk;
  };
}

}  // namespace etc::cli
