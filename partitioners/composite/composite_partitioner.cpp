#include "partitioners/composite/composite_partitioner.h"

#include "compiler/common/compile_error.h"

namespace etc {

CompositePartitioner::CompositePartitioner(std::vector<std::unique_ptr<Partitioner>> children)
    : children_(std::move(children)) {
  if (children_.empty()) throw CompileError("a composite partitioner needs at least one partitioner");
}

std::string CompositePartitioner::name() const {
  std::string name;
  for (const auto& child : children_) name += (name.empty() ? "" : "+") + child->name();
  return name;
}

PartitionResult CompositePartitioner::partition(const ir::ExportedProgram& program) const {
  PartitionResult result;
  result.tagged_exported_program = program;
  std::map<ir::NodeId, std::string> reasons;
  for (const auto& child : children_) {
    PartitionResult step = child->partition(result.tagged_exported_program);
    for (const auto& [tag, spec] : step.partition_tags) {
      if (result.partition_tags.count(tag))
        throw CompileError("partitioners '" + name() + "' both use the tag '" + tag + "'");
      result.partition_tags[tag] = spec;
    }
    for (const auto& [node, why] : step.rejection_reasons) {
      std::string& all = reasons[node];
      all += (all.empty() ? "" : "; ") + child->name() + ": " + why;
    }
    result.tagged_exported_program = std::move(step.tagged_exported_program);
  }
  // Keep reasons only for nodes that no child took in the end.
  for (const auto& [node, why] : reasons)
    if (result.tagged_exported_program.graph.node(node).meta.delegation_tag.empty())
      result.rejection_reasons[node] = why;
  return result;
}

}  // namespace etc
