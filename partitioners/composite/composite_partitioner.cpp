#include "partitioners/composite/composite_partitioner.h"

#include "compiler/common/compile_error.h"
#include "partitioners/composite/backend_assignment.h"

namespace etc {
namespace {

// Marks nodes a child must not take; removed again after it ran.
constexpr char kReservedTag[] = "~planned_for_another_backend_";

bool is_reserved(const std::string& tag) { return tag.rfind(kReservedTag, 0) == 0; }

}  // namespace

CompositePartitioner::CompositePartitioner(std::vector<std::unique_ptr<Partitioner>> children,
                                           Planning planning)
    : children_(std::move(children)), planning_(planning) {
  if (children_.empty()) throw CompileError("a composite partitioner needs at least one partitioner");
}

std::string CompositePartitioner::name() const {
  std::string name;
  for (const auto& child : children_) name += (name.empty() ? "" : "+") + child->name();
  return name;
}

PartitionResult CompositePartitioner::partition(const ir::ExportedProgram& program) const {
  // The plan: which child each node is for (-1: any child that takes it).
  std::vector<int> plan(program.graph.nodes().size(), -1);
  if (planning_ == Planning::kCost && children_.size() > 1) {
    BackendChoices choices;
    for (const auto& child : children_) {
      const PartitionResult alone = child->partition(program);
      std::vector<bool> takes(program.graph.nodes().size(), false);
      std::vector<double> cost(program.graph.nodes().size(), 1.0);
      for (const ir::Node& n : alone.tagged_exported_program.graph.nodes()) {
        const bool newly =
            !n.meta.delegation_tag.empty() && program.graph.node(n.id).meta.delegation_tag.empty();
        takes[static_cast<size_t>(n.id)] = newly;
        if (newly)
          cost[static_cast<size_t>(n.id)] = child->relative_cost(program.graph, program.graph.node(n.id));
      }
      choices.takes.push_back(std::move(takes));
      choices.cost.push_back(std::move(cost));
    }
    plan = assign_backends(program, choices);
  }
  PartitionResult result;
  result.tagged_exported_program = program;
  std::map<ir::NodeId, std::string> reasons;
  for (size_t c = 0; c < children_.size(); ++c) {
    const auto& child = children_[c];
    ir::ExportedProgram shown = result.tagged_exported_program;
    for (ir::Node& n : shown.graph.nodes())
      if (n.meta.delegation_tag.empty() && plan[static_cast<size_t>(n.id)] > static_cast<int>(c))
        n.meta.delegation_tag = kReservedTag + std::to_string(n.id);
    PartitionResult step = child->partition(shown);
    for (ir::Node& n : step.tagged_exported_program.graph.nodes())
      if (is_reserved(n.meta.delegation_tag)) n.meta.delegation_tag.clear();
    for (ir::Value& v : step.tagged_exported_program.graph.values())
      if (is_reserved(v.delegation_tag)) v.delegation_tag.clear();
    for (const auto& [tag, spec] : step.partition_tags) {
      if (is_reserved(tag)) continue;
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
