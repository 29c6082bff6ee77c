#pragma once
// The --backend, --compile-spec and CI-gate flags shared by `etc partition`
// and `etc preprocess`.

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "compiler/backend/partition_report.h"
#include "compiler/backend/partitioner.h"

namespace etc::cli {

struct BackendFlags {
  std::vector<std::string> backends;       // in priority order
  std::string assign = "cost";             // several backends: cost | priority
  std::vector<std::string> compile_specs;  // BACKEND:KEY=VALUE
  double require_coverage = -1;            // percent of nodes; < 0: no gate
  double require_flops_coverage = -1;      // percent of FLOPs; < 0: no gate
  int max_partitions = -1;                 // < 0: no gate
};

void add_backend_flags(CLI::App& cmd, BackendFlags& flags);

// One partitioner for all requested backends (a composite when there are
// several). Throws CompileError for an unknown backend or a bad spec.
std::unique_ptr<Partitioner> make_requested_partitioner(const BackendFlags& flags);

// Why the gates are not met ("" when they are, or when none is set).
std::string check_gates(const BackendFlags& flags, const PartitionReport& report);

}  // namespace etc::cli
