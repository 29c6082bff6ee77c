#include "tools/etc/runtime_delegate_flag.h"

#include "delegates/xnnpack/xnnpack_delegate.h"
#include "tools/etc/tool_error.h"

namespace etc::cli {

std::unique_ptr<Delegate> make_runtime_delegate(const std::string& name) {
  if (name.empty() || name == "none") return nullptr;
  if (name == "xnnpack") return std::make_unique<xnnpack::XnnpackDelegate>();
  throw ToolError("--runtime-delegate '" + name + "': no such load-time delegate (known: xnnpack, none)");
}

nlohmann::json describe_runtime_delegate(const Method& method, const Delegate& delegate) {
  nlohmann::json j = {{"name", std::string(delegate.name())},
                      {"used", method.delegate_not_used().empty()},
                      {"ranges", nlohmann::json::array()},
                      {"left", nlohmann::json::array()}};
  if (!method.delegate_not_used().empty()) j["not_used_because"] = method.delegate_not_used();
  for (const ReplacedRange& r : method.delegated_ranges())
    j["ranges"].push_back(
        {{"kernels", {r.from, r.end}}, {"instructions", {r.first_instruction, r.last_instruction}}});
  if (const auto* x = dynamic_cast<const xnnpack::XnnpackDelegate*>(&delegate))
    for (const auto& run : x->runs())
      if (!run.taken) j["left"].push_back({{"kernels", {run.from, run.end}}, {"reason", run.reason}});
  return j;
}

std::string runtime_delegate_line(const nlohmann::json& report) {
  std::string line = "load-time delegate " + report["name"].get<std::string>() + ": ";
  if (!report["used"].get<bool>())
    return line + "not used (" + report["not_used_because"].get<std::string>() + ")";
  line += std::to_string(report["ranges"].size()) + " kernel range(s)";
  std::string sep = " (instructions ";
  for (const auto& r : report["ranges"]) {
    line += sep + std::to_string(r["instructions"][0].get<uint32_t>()) + ".." +
            std::to_string(r["instructions"][1].get<uint32_t>());
    sep = ", ";
  }
  if (!report["ranges"].empty()) line += ")";
  for (const auto& l : report["left"])
    line += "; kernels " + std::to_string(l["kernels"][0].get<size_t>()) + ".." +
            std::to_string(l["kernels"][1].get<size_t>() - 1) +
            " stay portable: " + l["reason"].get<std::string>();
  return line;
}

}  // namespace etc::cli
