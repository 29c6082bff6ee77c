#pragma once
// to_backend's validate step: checks a partitioner's result before anything
// is lowered. Every check throws CompileError prefixed with the model file
// and naming the nodes, values and tags involved.

#include <string>
#include <vector>

#include "compiler/backend/partitioner.h"
#include "compiler/ir/graph.h"

namespace etc::lowering {

// "model.onnx: " (empty when the program has no source path).
std::string error_prefix(const ir::ExportedProgram& program);

// The partitioner changed nothing but delegation tags: same nodes (op,
// delegate, inputs, outputs, attrs), same values (type, constant data), same
// graph inputs and outputs, same lowered delegates.
void validate_unchanged(const ir::ExportedProgram& original, const ir::ExportedProgram& tagged);

// Tags are well formed: only constants carry a value tag, and never one that
// is a graph input or output; no call_delegate node is tagged; every tag in
// use has a DelegationSpec whose backend has registered BackendDetails.
void validate_tags(const PartitionResult& result);

// Tags of live nodes, in the order of each tag's first node.
std::vector<std::string> tags_in_order(const ir::Graph& graph);
// Live nodes carrying `tag`, in graph order.
std::vector<ir::NodeId> nodes_with_tag(const ir::Graph& graph, const std::string& tag);

// A path that leaves the node set `members` and re-enters it: the member it
// leaves from, the outside nodes, the member it re-enters at. Empty when the
// set is convex. The graph must be topologically ordered.
std::vector<ir::NodeId> find_reentry_path(const ir::Graph& graph, const std::vector<ir::NodeId>& members);

// "'Mul_1' (Mul) → 'Neg_2' (Neg) [untagged] → 'Add_3' (Add)": outside nodes
// say which partition (or delegate) they belong to.
std::string describe_path(const ir::ExportedProgram& program, const std::vector<ir::NodeId>& path,
                          const std::string& tag);

// Throws when the tag's nodes are not convex in `program`.
void validate_convex(const ir::ExportedProgram& program, const std::string& tag);

}  // namespace etc::lowering
