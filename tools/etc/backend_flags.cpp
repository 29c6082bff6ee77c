#include "tools/etc/backend_flags.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "compiler/common/compile_error.h"
#include "partitioners/composite/composite_partitioner.h"

namespace etc::cli {
namespace {

std::string percent(double value) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%.1f%%", value);
  return buf;
}

// "demo:max_input_elements=64" → {"demo", CompileSpec{"max_input_elements", "64"}}
std::pair<std::string, CompileSpec> parse_compile_spec(const std::string& flag) {
  const size_t colon = flag.find(':');
  const size_t eq = flag.find('=', colon == std::string::npos ? 0 : colon);
  if (colon == std::string::npos || colon == 0 || eq == std::string::npos || eq == colon + 1)
    throw CompileError("--compile-spec '" + flag +
                       "': expected BACKEND:KEY=VALUE, e.g. demo:max_input_elements=64");
  return {flag.substr(0, colon),
          CompileSpec::from_string(flag.substr(colon + 1, eq - colon - 1), flag.substr(eq + 1))};
}

}  // namespace

void add_backend_flags(CLI::App& cmd, BackendFlags& flags) {
  cmd.add_option("--backend", flags.backends,
                 "Delegate to this backend (repeatable; earlier ones take precedence)");
  cmd.add_option("--assign", flags.assign,
                 "With several backends: 'cost' (default) weighs each backend's cost and the boundaries "
                 "between them; 'priority' gives a node to the first backend that takes it")
      ->check(CLI::IsMember({"cost", "priority"}));
  cmd.add_option("--compile-spec", flags.compile_specs,
                 "Pass a backend option: BACKEND:KEY=VALUE (repeatable)");
  cmd.add_option("--require-coverage", flags.require_coverage,
                 "CI gate: fail unless at least PCT percent of nodes are delegated")
      ->check(CLI::Range(0.0, 100.0));
  cmd.add_option("--require-flops-coverage", flags.require_flops_coverage,
                 "CI gate: fail unless at least PCT percent of the FLOPs are delegated")
      ->check(CLI::Range(0.0, 100.0));
  cmd.add_option("--max-partitions", flags.max_partitions, "CI gate: fail when there are more partitions")
      ->check(CLI::NonNegativeNumber);
}

std::unique_ptr<Partitioner> make_requested_partitioner(const BackendFlags& flags) {
  std::map<std::string, std::vector<CompileSpec>> specs;
  for (const std::string& flag : flags.compile_specs) {
    auto [backend, spec] = parse_compile_spec(flag);
    if (std::find(flags.backends.begin(), flags.backends.end(), backend) == flags.backends.end())
      throw CompileError("--compile-spec '" + flag + "': backend '" + backend +
                         "' is not requested with --backend");
    specs[backend].push_back(std::move(spec));
  }
  std::vector<std::unique_ptr<Partitioner>> children;
  for (const std::string& backend : flags.backends) {
    for (const auto& child : children)
      if (child->name() == backend) throw CompileError("--backend " + backend + " is given twice");
    children.push_back(make_partitioner(backend, specs[backend]));
  }
  if (children.size() == 1) return std::move(children.front());
  return std::make_unique<CompositePartitioner>(
      std::move(children), flags.assign == "priority" ? CompositePartitioner::Planning::kPriority
                                                      : CompositePartitioner::Planning::kCost);
}

std::string check_gates(const BackendFlags& flags, const PartitionReport& report) {
  std::string why;
  auto add = [&](const std::string& s) { why += (why.empty() ? "" : "; ") + s; };
  if (flags.require_coverage >= 0 && report.node_coverage() * 100.0 < flags.require_coverage)
    add(percent(report.node_coverage() * 100.0) + " of nodes delegated (" +
        std::to_string(report.delegated_nodes) + " of " + std::to_string(report.nodes.size()) +
        "), --require-coverage needs " + percent(flags.require_coverage));
  if (flags.require_flops_coverage >= 0 && report.flops_coverage() * 100.0 < flags.require_flops_coverage)
    add(percent(report.flops_coverage() * 100.0) + " of FLOPs delegated, --require-flops-coverage needs " +
        percent(flags.require_flops_coverage));
  if (flags.max_partitions >= 0 && report.partitions.size() > static_cast<size_t>(flags.max_partitions))
    add(std::to_string(report.partitions.size()) + " partitions, --max-partitions allows " +
        std::to_string(flags.max_partitions));
  return why;
}

}  // namespace etc::cli
