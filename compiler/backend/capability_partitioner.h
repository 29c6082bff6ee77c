#pragma once
// Capability-based partitioning: from a per-node predicate ("supported, or why
// not") form maximal partitions that a backend can own.
//
// Guarantees of propose_partitions:
//   - every partition is convex: no path leaves it and re-enters it, so
//     replacing it by one call_delegate node never creates a cycle;
//   - every partition is weakly connected: nodes join along data edges;
//   - partitions are maximal under those rules (greedy merge along edges, in
//     topological order, repeated until nothing merges): merging any two
//     partitions joined by an edge would break convexity;
//   - call_delegate nodes and unsupported nodes are never included;
//   - nodes already carrying a delegation_tag (from an earlier partitioner)
//     are never included and never asked about; each such tag is a fixed
//     group whose reachability counts, so collapsing the returned partitions
//     and the earlier tags together still leaves an acyclic graph;
//   - partitions smaller than min_partition_size, or single-node partitions
//     when allow_single_node_partitions is false, or partitions without a
//     compute node when is_compute is set, are dropped, and their
//     nodes get a reason saying so.
// Every live node not in a returned partition and not pre-tagged gets a
// reason (call_delegate nodes included). The predicate is asked once about
// each live, untagged node that is not a call_delegate, in topological order.
//
// Errors (CompileError): the graph has a cycle, or the earlier tags already
// form one once each tag is collapsed (the message names the cycle).

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
  // When set, partitions with no node for which it holds (e.g. only
  // concatenations and slices) are dropped.
  std::function<bool(const ir::Node&)> is_compute;
};

struct ProposedPartitions {
  // Each in topological order; partitions ordered by their first node.
  std::vector<std::vector<ir::NodeId>> partitions;
  std::map<ir::NodeId, std::string> rejection_reasons;
};

ProposedPartitions propose_partitions(const ir::Graph& graph, const NodeSupport& is_supported,
                                      const CapabilityOptions& options = {});

// The usual partitioner body: propose partitions, tag partition i's nodes
// "<tag_prefix>_<k>" in a copy of `program`, tag constants with their users'
// tag (tag_constant_data with default options, over the whole graph), and
// give every tag `spec`. k counts from 0 and skips every tag already used in
// the program (by nodes, constants or lowered delegates), so partitioners of
// one backend run in sequence never share a tag. Nodes tagged earlier keep
// their tags and get no reason. Throws CompileError for an empty tag_prefix.
PartitionResult partition_by_capability(const ir::ExportedProgram& program, const NodeSupport& is_supported,
                                        const std::string& tag_prefix, const DelegationSpec& spec,
                                        const CapabilityOptions& options = {});

}  // namespace etc
