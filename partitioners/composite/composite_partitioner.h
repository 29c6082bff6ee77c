#pragma once
// CompositePartitioner: several backends in one partitioning pass. Each child
// partitioner, in order, sees the program as tagged by the ones before it
// and tags only nodes still untagged (partition_by_capability keeps earlier
// tags fixed and never forms a cycle with them). Which child may take which
// node:
//   kPriority  the first child that can run a node takes it;
//   kCost      a plan (backend_assignment.h) weighs each backend's cost for
//              the node and the layout conversions and delegate calls each
//              boundary between backends costs: a fragment one backend would
//              take from the middle of another's region goes to that other
//              backend when the boundaries cost more than the gain. Each
//              child is then shown the nodes planned for later children as
//              already taken (a placeholder tag per node, removed after), so
//              it cannot take them.
// The result holds every child's tags; a node no child took gets every
// child's reason ("demo: …; xnnpack: …").

#include <memory>
#include <string>
#include <vector>

#include "compiler/backend/partitioner.h"

namespace etc {

class CompositePartitioner : public Partitioner {
 public:
  enum class Planning { kPriority, kCost };

  explicit CompositePartitioner(std::vector<std::unique_ptr<Partitioner>> children,
                                Planning planning = Planning::kPriority);

  std::string name() const override;  // children's names joined by '+'
  PartitionResult partition(const ir::ExportedProgram& program) const override;

 private:
  std::vector<std::unique_ptr<Partitioner>> children_;
  Planning planning_;
};

}  // namespace etc
