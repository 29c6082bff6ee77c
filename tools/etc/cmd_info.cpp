// etc info MODEL.etp [--json] [--verify]: what a program holds, its content
// hash, and (--verify) whether every segment still matches its checksum.
#include <cstdio>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "runtime/executor/program.h"
#include "runtime/executor/program_validation.h"
#include "tools/etc/commands.h"
#include "tools/etc/runtime_delegate_flag.h"
#include "tools/etc/tool_error.h"

namespace etc::cli {
namespace {

nlohmann::json value_json(const fb::Value& v) {
  const TensorSpec spec = value_spec(v);
  nlohmann::json j = {{"name", v.name() ? v.name()->str() : ""},
                      {"dtype", dtype_name(spec.dtype)},
                      {"shape", std::vector<int64_t>(spec.shape.begin(), spec.shape.end())}};
  // An input compiled with a range of sizes: `shape` is the largest.
  if (v.min_shape()) j["min_shape"] = std::vector<int64_t>(v.min_shape()->begin(), v.min_shape()->end());
  return j;
}

// Compile spec values are shown as text when printable, else as hex.
std::string spec_value_text(const flatbuffers::Vector<uint8_t>* value) {
  if (!value) return "";
  std::string text(value->begin(), value->end());
  for (unsigned char c : text)
    if (c < 0x20 || c > 0x7e) {
      std::string hex = "0x";
      static const char* digits = "0123456789abcdef";
      for (unsigned char b : text) hex += std::string{digits[b >> 4], digits[b & 15]};
      return hex;
    }
  return text;
}

nlohmann::json delegate_json(const Program& p, uint32_t index) {
  const fb::Delegate& d = *p.fb().delegates()->Get(index);
  const size_t blob = d.segment() >= 0 ? p.segment(static_cast<uint32_t>(d.segment())).size()
                                       : (d.inline_data() ? d.inline_data()->size() : 0);
  nlohmann::json specs = nlohmann::json::object();
  if (d.compile_specs())
    for (const fb::CompileSpec* s : *d.compile_specs()) specs[s->key()->str()] = spec_value_text(s->value());
  size_t handles = 0;
  if (d.debug_handle_map())
    for (const fb::DelegateMapEntry* e : *d.debug_handle_map())
      handles += e->debug_handles() ? e->debug_handles()->size() : 0;
  return {{"index", index},
          {"backend", d.backend_id()->str()},
          {"blob_bytes", blob},
          {"compile_specs", specs},
          {"debug_map_entries", d.debug_handle_map() ? d.debug_handle_map()->size() : 0},
          {"debug_map_handles", handles}};
}

// What the portable fallbacks kept beside delegates cost (`preprocess
// --fallback portable`): their instructions and the constants only they read.
nlohmann::json fallback_json(const fb::ExecutionPlan& plan) {
  size_t calls = 0, instructions = 0, constant_bytes = 0;
  std::set<int32_t> constants;
  if (plan.instructions() && plan.chains())
    for (const fb::Instruction* ins : *plan.instructions()) {
      const auto* call = ins->args_as_DelegateCall();
      if (!call || call->fallback() < 0 || static_cast<uint32_t>(call->fallback()) >= plan.chains()->size())
        continue;
      ++calls;
      const fb::Chain& chain = *plan.chains()->Get(static_cast<uint32_t>(call->fallback()));
      for (uint32_t i = chain.first(); i < chain.first() + chain.count() && i < plan.instructions()->size();
           ++i) {
        ++instructions;
        const auto* k = plan.instructions()->Get(i)->args_as_KernelCall();
        if (k && k->inputs())
          for (int32_t v : *k->inputs())
            if (v >= 0 && static_cast<uint32_t>(v) < plan.values()->size() &&
                plan.values()->Get(static_cast<uint32_t>(v))->kind() == fb::ValueKind::Constant)
              constants.insert(v);
      }
    }
  for (int32_t v : constants) {
    const fb::Value& value = *plan.values()->Get(static_cast<uint32_t>(v));
    Shape shape;
    if (value.shape())
      for (int64_t d : *value.shape()) shape.push_back(d);
    constant_bytes += TensorSpec{static_cast<DType>(value.dtype()), shape}.nbytes();
  }
  return {{"delegate_calls", calls}, {"instructions", instructions}, {"constant_bytes", constant_bytes}};
}

nlohmann::json program_json(const Program& p) {
  const fb::Program& fbp = p.fb();
  nlohmann::json j;
  j["file"] = p.name();
  j["file_bytes"] = p.file_size();
  j["version"] = fbp.version();
  j["producer"] = fbp.producer() ? fbp.producer()->str() : "";
  j["source_model"] = fbp.source_model() ? fbp.source_model()->str() : "";
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(p.content_hash()));
  j["content_hash"] = hash;
  j["segment_checksums"] = p.has_segment_checksums();
  size_t constant_bytes = 0;
  if (fbp.segments())
    for (const fb::Segment* s : *fbp.segments()) constant_bytes += s->size();
  j["constant_bytes"] = constant_bytes;
  const fb::ExecutionPlan& plan = p.plan(0);
  j["arena_bytes"] = plan.arena_size();
  j["arena_lower_bound_bytes"] = plan.arena_lower_bound();
  // The part of the arena only portable fallbacks use (touched when one runs).
  j["fallback_arena_bytes"] =
      plan.fallback_arena_offset() > 0 ? plan.arena_size() - plan.fallback_arena_offset() : uint64_t{0};
  j["inputs"] = nlohmann::json::array();
  if (plan.inputs())
    for (int32_t id : *plan.inputs()) j["inputs"].push_back(value_json(*plan.values()->Get(id)));
  j["outputs"] = nlohmann::json::array();
  if (plan.outputs())
    for (int32_t id : *plan.outputs()) j["outputs"].push_back(value_json(*plan.values()->Get(id)));
  std::map<std::string, int> ops;
  size_t kernel_calls = 0, delegate_calls = 0, ifs = 0, loops = 0;
  if (plan.instructions())
    for (const fb::Instruction* ins : *plan.instructions()) {
      if (const auto* k = ins->args_as_KernelCall()) {
        ++kernel_calls;
        ++ops[fbp.operators()->Get(k->op())->str()];
      } else if (ins->args_as_IfCall()) {
        ++ifs;
      } else if (ins->args_as_LoopCall()) {
        ++loops;
      } else {
        ++delegate_calls;
      }
    }
  j["instructions"] = {
      {"kernel_calls", kernel_calls}, {"delegate_calls", delegate_calls}, {"ifs", ifs}, {"loops", loops}};
  j["fallbacks"] = fallback_json(plan);
  // Chains: the main one, then one per branch and loop body.
  j["chains"] = plan.chains() ? plan.chains()->size() : 1;
  j["operators"] = ops;
  j["delegates"] = nlohmann::json::array();
  if (fbp.delegates())
    for (uint32_t i = 0; i < fbp.delegates()->size(); ++i) j["delegates"].push_back(delegate_json(p, i));
  return j;
}

}  // namespace

Action add_info(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("info", "Describe a program file: inputs, outputs, memory, operators, delegates");
  auto path = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto verify = std::make_shared<bool>(false);
  auto runtime_delegate = std::make_shared<std::string>();
  cmd->add_option("program", *path, "Program file (.etp)")->required();
  cmd->add_option(
      "--runtime-delegate", *runtime_delegate,
      "Also load the program with this load-time delegate (xnnpack) and say which kernels it takes");
  cmd->add_flag("--json", *json, "Print JSON");
  cmd->add_flag("--verify", *verify,
                "Check every segment (constants, delegate blobs) against its recorded checksum");
  return [path, json, verify, runtime_delegate]() {
    auto program = Program::load(*path);
    if (!program.ok()) throw ToolError(program.message());
    if (*verify)
      if (Status s = program.get().verify_segment_checksums(); !s.ok()) throw ToolError(s.message());
    nlohmann::json j = program_json(program.get());
    if (*verify) j["verified"] = true;
    if (const std::unique_ptr<Delegate> delegate = make_runtime_delegate(*runtime_delegate)) {
      RuntimeOptions options;
      options.num_threads = 1;
      options.delegate = delegate.get();
      auto method = Method::init(program.get(), 0, options);
      if (!method.ok()) throw ToolError(method.message());
      j["runtime_delegate"] = describe_runtime_delegate(*method.get(), *delegate);
    }
    if (*json) {
      std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
      return kExitOk;
    }
    std::cout << j["file"].get<std::string>() << " (" << j["file_bytes"] << " bytes, program version "
              << j["version"] << ", from " << j["source_model"].get<std::string>() << ")\n";
    std::cout << "  content hash: " << j["content_hash"].get<std::string>() << "\n";
    std::cout << "  segment checksums: "
              << (*verify                  ? "verified"
                  : j["segment_checksums"] ? "recorded (--verify checks them)"
                                           : "none recorded")
              << "\n";
    for (const auto& in : j["inputs"]) {
      std::cout << "  input  " << in["name"].get<std::string>() << ": " << in["dtype"].get<std::string>()
                << in["shape"].dump();
      if (in.contains("min_shape"))
        std::cout << " (any shape from " << in["min_shape"].dump() << "; memory planned for the largest)";
      std::cout << "\n";
    }
    for (const auto& out : j["outputs"])
      std::cout << "  output " << out["name"].get<std::string>() << ": " << out["dtype"].get<std::string>()
                << out["shape"].dump() << "\n";
    const double arena = j["arena_bytes"].get<double>(), bound = j["arena_lower_bound_bytes"].get<double>();
    std::cout << "  arena: " << j["arena_bytes"] << " bytes (lower bound " << j["arena_lower_bound_bytes"]
              << " bytes, " << (bound > 0 ? arena / bound : 1.0) << "x)";
    if (j["fallback_arena_bytes"].get<uint64_t>() > 0)
      std::cout << ", of which " << j["fallback_arena_bytes"]
                << " bytes only portable fallbacks use (untouched unless one runs)";
    std::cout << "\n";
    std::cout << "  constants: " << j["constant_bytes"] << " bytes\n";
    std::cout << "  instructions: " << j["instructions"]["kernel_calls"] << " kernel calls, "
              << j["instructions"]["delegate_calls"] << " delegate calls";
    if (j["chains"].get<size_t>() > 1)
      std::cout << ", " << j["instructions"]["ifs"] << " if, " << j["instructions"]["loops"] << " loop ("
                << j["chains"] << " chains: the main one, one per branch and loop body)";
    std::cout << "\n";
    std::cout << "  operators:";
    const char* sep = " ";
    for (const auto& [op, n] : j["operators"].items()) {
      std::cout << sep << op << " " << n;
      sep = ", ";
    }
    std::cout << "\n  delegates: " << j["delegates"].size();
    if (j["fallbacks"]["delegate_calls"].get<size_t>() > 0)
      std::cout << " (" << j["fallbacks"]["delegate_calls"]
                << " with a portable fallback: " << j["fallbacks"]["instructions"] << " instructions, "
                << j["fallbacks"]["constant_bytes"] << " bytes of constants)";
    std::cout << "\n";
    for (const auto& d : j["delegates"]) {
      std::cout << "    #" << d["index"] << " " << d["backend"].get<std::string>() << ": " << d["blob_bytes"]
                << " bytes, debug map " << d["debug_map_entries"] << " entries covering "
                << d["debug_map_handles"] << " handles";
      if (!d["compile_specs"].empty()) {
        std::cout << ", compile specs:";
        for (const auto& [key, value] : d["compile_specs"].items())
          std::cout << " " << key << "=" << value.get<std::string>();
      }
      std::cout << "\n";
    }
    if (j.contains("runtime_delegate"))
      std::cout << "  " << runtime_delegate_line(j["runtime_delegate"]) << "\n";
    return kExitOk;
  };
}

}  // namespace etc::cli
