// etc info MODEL.etp [--json]: what a program holds.
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "compiler/common/compile_error.h"
#include "runtime/executor/program.h"
#include "runtime/executor/program_validation.h"
#include "tools/etc/commands.h"

namespace etc::cli {
namespace {

nlohmann::json value_json(const fb::Value& v) {
  const TensorSpec spec = value_spec(v);
  return {{"name", v.name() ? v.name()->str() : ""},
          {"dtype", dtype_name(spec.dtype)},
          {"shape", std::vector<int64_t>(spec.shape.begin(), spec.shape.end())}};
}

nlohmann::json program_json(const Program& p) {
  const fb::Program& fbp = p.fb();
  nlohmann::json j;
  j["file"] = p.name();
  j["file_bytes"] = p.file_size();
  j["version"] = fbp.version();
  j["producer"] = fbp.producer() ? fbp.producer()->str() : "";
  j["source_model"] = fbp.source_model() ? fbp.source_model()->str() : "";
  size_t constant_bytes = 0;
  if (fbp.segments())
    for (const fb::Segment* s : *fbp.segments()) constant_bytes += s->size();
  j["constant_bytes"] = constant_bytes;
  const fb::ExecutionPlan& plan = p.plan(0);
  j["arena_bytes"] = plan.arena_size();
  j["arena_lower_bound_bytes"] = plan.arena_lower_bound();
  j["inputs"] = nlohmann::json::array();
  if (plan.inputs())
    for (int32_t id : *plan.inputs()) j["inputs"].push_back(value_json(*plan.values()->Get(id)));
  j["outputs"] = nlohmann::json::array();
  if (plan.outputs())
    for (int32_t id : *plan.outputs()) j["outputs"].push_back(value_json(*plan.values()->Get(id)));
  std::map<std::string, int> ops;
  size_t kernel_calls = 0, delegate_calls = 0;
  if (plan.instructions())
    for (const fb::Instruction* ins : *plan.instructions()) {
      if (const auto* k = ins->args_as_KernelCall()) {
        ++kernel_calls;
        ++ops[fbp.operators()->Get(k->op())->str()];
      } else {
        ++delegate_calls;
      }
    }
  j["instructions"] = {{"kernel_calls", kernel_calls}, {"delegate_calls", delegate_calls}};
  j["operators"] = ops;
  j["delegates"] = nlohmann::json::array();
  if (fbp.delegates())
    for (const fb::Delegate* d : *fbp.delegates())
      j["delegates"].push_back(
          {{"backend", d->backend_id()->str()},
           {"inline_bytes", d->inline_data() ? d->inline_data()->size() : 0},
           {"debug_map_entries", d->debug_handle_map() ? d->debug_handle_map()->size() : 0}});
  return j;
}

}  // namespace

Action add_info(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("info", "Describe a program file: inputs, outputs, memory, operators, delegates");
  auto path = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("program", *path, "Program file (.etp)")->required();
  cmd->add_flag("--json", *json, "Print JSON");
  return [path, json]() {
    auto program = Program::load(*path);
    if (!program.ok()) throw CompileError(program.message());
    const nlohmann::json j = program_json(program.get());
    if (*json) {
      std::cout << j.dump(2) << "\n";
      return kExitOk;
    }
    std::cout << j["file"].get<std::string>() << " (" << j["file_bytes"] << " bytes, program version "
              << j["version"] << ", from " << j["source_model"].get<std::string>() << ")\n";
    for (const auto& in : j["inputs"])
      std::cout << "  input  " << in["name"].get<std::string>() << ": " << in["dtype"].get<std::string>()
                << in["shape"].dump() << "\n";
    for (const auto& out : j["outputs"])
      std::cout << "  output " << out["name"].get<std::string>() << ": " << out["dtype"].get<std::string>()
                << out["shape"].dump() << "\n";
    const double arena = j["arena_bytes"].get<double>(), bound = j["arena_lower_bound_bytes"].get<double>();
    std::cout << "  arena: " << j["arena_bytes"] << " bytes (lower bound " << j["arena_lower_bound_bytes"]
              << " bytes, " << (bound > 0 ? arena / bound : 1.0) << "x)\n";
    std::cout << "  constants: " << j["constant_bytes"] << " bytes\n";
    std::cout << "  instructions: " << j["instructions"]["kernel_calls"] << " kernel calls, "
              << j["instructions"]["delegate_calls"] << " delegate calls\n";
    std::cout << "  operators:";
    const char* sep = " ";
    for (const auto& [op, n] : j["operators"].items()) {
      std::cout << sep << op << " " << n;
      sep = ", ";
    }
    std::cout << "\n  delegates: " << j["delegates"].size() << "\n";
    for (const auto& d : j["delegates"])
      std::cout << "    " << d["backend"].get<std::string>() << ": " << d["inline_bytes"] << " bytes, "
                << d["debug_map_entries"] << " debug map entries\n";
    return kExitOk;
  };
}

}  // namespace etc::cli
