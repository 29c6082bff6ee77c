#pragma once
// The demo backend's partitioner: tags float32 add, sub, mul, sin, cos and
// relu nodes whose operands all have the output's shape (the demo backend
// does not broadcast). Partitions are tagged "demo_<i>"; constants read only
// inside a partition move into it. Compile specs are passed through to the
// backend (e.g. max_input_elements, see runtime/backends/demo/demo_format.h).

#include <vector>

#include "compiler/backend/capability_partitioner.h"
#include "compiler/backend/partitioner.h"

namespace etc::demo {

class DemoPartitioner : public Partitioner {
 public:
  explicit DemoPartitioner(std::vector<CompileSpec> compile_specs = {}, CapabilityOptions options = {})
      : compile_specs_(std::move(compile_specs)), options_(options) {}

  std::string name() const override { return "demo"; }
  PartitionResult partition(const ir::ExportedProgram& program) const override;

  // The per-node rule, public for reports and tests.
  static Support is_supported(const ir::Graph& graph, const ir::Node& node);

 private:
  std::vector<CompileSpec> compile_specs_;
  CapabilityOptions options_;
};

}  // namespace etc::demo
