#pragma once
// Capability-based partitioning: from a per-node predicate ("supported, or why
// not") form maximal partitions that a backend can own.
//
// Guarantees of propose_partitions:
//   - every partition is convex: no path leaves it and re-enters it, so
//     replacing it by one call_delegate node never creates a cycle;
//   - partitions are maximal under that rule (greedy merge along edges, in
//     topological order);
//   - call_delegate nodes and unsupported nodes are never included;
//   - partitions smaller than min_partition_size, or single-node partitions
//     when allow_single_node_partitions is false, are dropped, and their
//     nodes get a reason saying so.
// Every node not in a returned partition gets a reason.

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "compiler/backend/partitioner.h"
#include "compiler/ir/graph.h"

namespace etc {

struct Support {
  bool supported = false;
  std::string reason;  // why not, when !supported

  static Support yes() { return {true, {}}; }
  static Support no(std::string why) { return {false, std::move(why)}; }
};

using NodeSupport = std::function<Support(const ir::Graph&, const ir::Node&)>;

struct CapabilityOptions {
  size_t min_partition_size = 1;
  bool allow_single_node_partitions = true;
};

struct ProposedPartitions {
  std::vector<std::vector<ir::NodeId>> partitions;  // each in topological order
  std::map<ir::NodeId, std::string> rejection_reasons;
};

ProposedPartitions propose_partitions(const ir::Graph& graph, const NodeSupport& is_supported,
                                      const CapabilityOptions& options = {});

// The usual partitioner body: propose partitions, tag partition i's nodes
// "<tag_prefix>_<i>" in a copy of `program`, tag constants with their users'
// tag (tag_constant_data), and give every tag `spec`.
PartitionResult partition_by_capability(const ir::ExportedProgram& program, const NodeSupport& is_supported,
                                        const std::string& tag_prefix, const DelegationSpec& spec,
                                        const CapabilityOptions& options = {});

}  // namespace etc
