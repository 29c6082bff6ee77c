#pragma once
// CompositePartitioner: several backends in one partitioning pass. Each child
// partitioner, in priority order, sees the program as tagged by the ones
// before it and tags only nodes still untagged (partition_by_capability keeps
// earlier tags fixed and never forms a cycle with them), so a node goes to
// the first backend that can run it. The result holds every child's tags;
// a node no child took gets every child's reason ("demo: …; xnnpack: …").

#include <memory>
#include <string>
#include <vector>

#include "compiler/backend/partitioner.h"

namespace etc {

class CompositePartitioner : public Partitioner {
 public:
  explicit CompositePartitioner(std::vector<std::unique_ptr<Partitioner>> children);

  std::string name() const override;  // children's names joined by '+'
  PartitionResult partition(const ir::ExportedProgram& program) const override;

 private:
  std::vector<std::unique_ptr<Partitioner>> children_;
};

}  // namespace etc
