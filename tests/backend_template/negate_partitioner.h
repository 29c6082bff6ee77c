#pragma once
// The partitioner: tags float32 Neg nodes (partitions "negate_<i>").

#include "compiler/backend/capability_partitioner.h"
#include "compiler/backend/partitioner.h"

namespace etc::negate {

class NegatePartitioner : public Partitioner {
 public:
  std::string name() const override { return "negate"; }
  PartitionResult partition(const ir::ExportedProgram& program) const override;
  static Support is_supported(const ir::Graph& graph, const ir::Node& node);
};

}  // namespace etc::negate
