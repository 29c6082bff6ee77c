#include "compiler/backend/partition_validation.h"

#include <map>
#include <set>

#include "compiler/backend/backend_details.h"
#include "compiler/common/compile_error.h"
#include "compiler/ir/printer.h"

namespace etc::lowering {
namespace {

constexpr size_t kMaxListed = 6;

bool contains(const std::vector<ir::ValueId>& ids, ir::ValueId v) {
  for (ir::ValueId id : ids)
    if (id == v) return true;
  return false;
}

std::string list_nodes(const ir::Graph& g, const std::vector<ir::NodeId>& ids) {
  std::string s;
  for (size_t i = 0; i < ids.size() && i < kMaxListed; ++i)
    s += (i ? ", " : "") + ir::node_ref(g.node(ids[i]));
  if (ids.size() > kMaxListed) s += " and " + std::to_string(ids.size() - kMaxListed) + " more";
  return s;
}

std::string list_names(const std::vector<std::string>& names) {
  if (names.empty()) return "none";
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

std::string ids_str(const ir::Graph& g, const std::vector<ir::ValueId>& ids) {
  std::string s = "(";
  for (size_t i = 0; i < ids.size(); ++i)
    s += (i ? ", " : "") + (ids[i] == ir::kNoValue ? std::string("_") : "'" + g.value(ids[i]).name + "'");
  return s + ")";
}

// Producer node of each value, from live nodes only.
std::vector<ir::NodeId> producers(const ir::Graph& g) {
  std::vector<ir::NodeId> producer(g.values().size(), -1);
  for (const ir::Node& n : g.nodes())
    if (!n.dead)
      for (ir::ValueId v : n.outputs) producer[v] = n.id;
  return producer;
}

std::string op_name(const ir::Node& n) {
  return n.is_delegate_call() ? "call_delegate #" + std::to_string(n.delegate) : edge_op_name(n.op);
}

// Whether `after` value `v` is `before` value `original` or a copy of that
// constant added by tag_constant_data (same type, same bytes).
bool same_or_constant_copy(const ir::Graph& a, const ir::Graph& b, ir::ValueId original, ir::ValueId v) {
  if (v == original) return true;
  if (original == ir::kNoValue || v == ir::kNoValue || static_cast<size_t>(v) < a.values().size())
    return false;
  const ir::Value& x = a.value(original);
  const ir::Value& y = b.value(v);
  return x.is_constant() && y.is_constant() && x.spec == y.spec &&
         (x.constant == y.constant || *x.constant == *y.constant);
}

bool same_inputs(const ir::Graph& a, const ir::Graph& b, const std::vector<ir::ValueId>& x,
                 const std::vector<ir::ValueId>& y) {
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i)
    if (!same_or_constant_copy(a, b, x[i], y[i])) return false;
  return true;
}

// The first difference between two nodes at the same index, or "".
std::string node_difference(const ir::Graph& a, const ir::Graph& b, const ir::Node& x, const ir::Node& y) {
  const std::string who = "node " + ir::node_ref(x);
  if (x.dead != y.dead) return who + (x.dead ? " was removed and is back" : " was removed");
  if (x.delegate != y.delegate || (!x.is_delegate_call() && x.op != y.op))
    return who + " changed op from " + op_name(x) + " to " + op_name(y);
  if (!same_inputs(a, b, x.inputs, y.inputs))
    return who + " reads " + ids_str(b, y.inputs) + " instead of " + ids_str(a, x.inputs);
  if (x.outputs != y.outputs)
    return who + " writes " + ids_str(b, y.outputs) + " instead of " + ids_str(a, x.outputs);
  if (x.attrs.items() != y.attrs.items())
    return who + " has attributes {" + y.attrs.str() + "} instead of {" + x.attrs.str() + "}";
  return "";
}

std::string value_difference(const ir::Value& x, const ir::Value& y) {
  const std::string who = "value '" + x.name + "'";
  if (!(x.spec == y.spec)) return who + " changed type";
  if (x.is_constant() != y.is_constant())
    return who + (x.is_constant() ? " is no longer" : " became") + " a constant";
  if (x.is_constant() && x.constant != y.constant && *x.constant != *y.constant)
    return who + " changed its data";
  return "";
}

std::string graph_difference(const ir::ExportedProgram& before, const ir::ExportedProgram& after) {
  const ir::Graph& a = before.graph;
  const ir::Graph& b = after.graph;
  if (a.nodes().size() != b.nodes().size())
    return "it had " + std::to_string(a.nodes().size()) + " nodes, now " + std::to_string(b.nodes().size());
  // Values may only grow by copies of shared constants (tag_constant_data).
  if (a.values().size() > b.values().size())
    return "it had " + std::to_string(a.values().size()) + " values, now " +
           std::to_string(b.values().size());
  for (size_t i = a.values().size(); i < b.values().size(); ++i)
    if (!b.values()[i].is_constant())
      return "it added value '" + b.values()[i].name + "', which is not a copy of a constant";
  for (size_t i = 0; i < a.nodes().size(); ++i) {
    std::string d = node_difference(a, b, a.nodes()[i], b.nodes()[i]);
    if (!d.empty()) return d;
  }
  for (size_t i = 0; i < a.values().size(); ++i) {
    std::string d = value_difference(a.values()[i], b.values()[i]);
    if (!d.empty()) return d;
  }
  if (a.inputs() != b.inputs())
    return "graph inputs " + ids_str(b, b.inputs()) + " instead of " + ids_str(a, a.inputs());
  if (a.outputs() != b.outputs())
    return "graph outputs " + ids_str(b, b.outputs()) + " instead of " + ids_str(a, a.outputs());
  if (before.delegates.size() != after.delegates.size())
    return "it had " + std::to_string(before.delegates.size()) + " lowered delegates, now " +
           std::to_string(after.delegates.size());
  return "";
}

void validate_value_tags(const ir::ExportedProgram& p) {
  const ir::Graph& g = p.graph;
  const std::vector<ir::NodeId> producer = producers(g);
  for (const ir::Value& v : g.values()) {
    if (v.delegation_tag.empty()) continue;
    const std::string tagged = "' carries delegation tag '" + v.delegation_tag + "'";
    if (contains(g.inputs(), v.id))
      throw CompileError(error_prefix(p) + "graph input '" + v.name + tagged +
                         ": an input placeholder cannot move into a delegate (only constants can)");
    if (!v.is_constant()) {
      const std::string from =
          producer[v.id] >= 0 ? " (written by node " + ir::node_ref(g.node(producer[v.id])) + ")" : "";
      throw CompileError(error_prefix(p) + "value '" + v.name + from + tagged +
                         ", but only constants move into a delegate; tag the node instead");
    }
    if (contains(g.outputs(), v.id))
      throw CompileError(error_prefix(p) + "constant '" + v.name + "' is a graph output and" +
                         tagged.substr(1) +
                         ": a graph output cannot move into a delegate (keep an untagged copy outside)");
  }
}

void validate_delegate_calls_untagged(const ir::ExportedProgram& p) {
  for (const ir::Node& n : p.graph.nodes()) {
    if (n.dead || !n.is_delegate_call() || n.meta.delegation_tag.empty()) continue;
    std::string lowered;
    if (static_cast<size_t>(n.delegate) < p.delegates.size())
      lowered = " (already lowered to '" + p.delegates[n.delegate].backend_id + "')";
    throw CompileError(error_prefix(p) + "call_delegate node " + ir::node_ref(n) + lowered +
                       " carries tag '" + n.meta.delegation_tag +
                       "': lowered nodes are opaque and cannot be partitioned again");
  }
}

}  // namespace

std::string error_prefix(const ir::ExportedProgram& program) {
  return program.source_path.empty() ? "" : program.source_path + ": ";
}

void validate_unchanged(const ir::ExportedProgram& original, const ir::ExportedProgram& tagged) {
  const std::string d = graph_difference(original, tagged);
  if (!d.empty())
    throw CompileError(error_prefix(original) + "the partitioner changed the graph: " + d +
                       " (a partitioner may only set delegation tags)");
}

void validate_tags(const PartitionResult& result) {
  const ir::ExportedProgram& p = result.tagged_exported_program;
  const ir::Graph& g = p.graph;
  validate_value_tags(p);
  validate_delegate_calls_untagged(p);
  std::map<std::string, std::vector<ir::NodeId>> tag_nodes;
  std::map<std::string, std::vector<std::string>> tag_constants;
  for (const ir::Node& n : g.nodes())
    if (!n.dead && !n.meta.delegation_tag.empty()) tag_nodes[n.meta.delegation_tag].push_back(n.id);
  for (const ir::Value& v : g.values())
    if (!v.delegation_tag.empty()) tag_constants[v.delegation_tag].push_back("'" + v.name + "'");
  for (const auto& [tag, names] : tag_constants)
    if (!tag_nodes.count(tag) && !result.partition_tags.count(tag))
      throw CompileError(error_prefix(p) + "tag '" + tag + "' on constant " + list_names(names) +
                         " has no DelegationSpec in partition_tags");
  for (const auto& [tag, nodes] : tag_nodes) {
    const auto spec = result.partition_tags.find(tag);
    if (spec == result.partition_tags.end())
      throw CompileError(error_prefix(p) + "tag '" + tag + "' on node " + list_nodes(g, nodes) +
                         " has no DelegationSpec in partition_tags");
    if (!find_backend_details(spec->second.backend_id))
      throw CompileError(error_prefix(p) + "tag '" + tag + "' names backend '" + spec->second.backend_id +
                         "', which has no registered BackendDetails (registered: " +
                         list_names(registered_backend_details()) + ")");
  }
}

std::vector<std::string> tags_in_order(const ir::Graph& graph) {
  std::vector<std::string> tags;
  std::set<std::string> seen;
  for (const ir::Node& n : graph.nodes())
    if (!n.dead && !n.meta.delegation_tag.empty() && seen.insert(n.meta.delegation_tag).second)
      tags.push_back(n.meta.delegation_tag);
  return tags;
}

std::vector<ir::NodeId> nodes_with_tag(const ir::Graph& graph, const std::string& tag) {
  std::vector<ir::NodeId> ids;
  for (const ir::Node& n : graph.nodes())
    if (!n.dead && n.meta.delegation_tag == tag) ids.push_back(n.id);
  return ids;
}

std::vector<ir::NodeId> find_reentry_path(const ir::Graph& g, const std::vector<ir::NodeId>& members) {
  std::vector<bool> inside(g.nodes().size(), false);
  for (ir::NodeId id : members) inside[id] = true;
  const std::vector<ir::NodeId> producer = producers(g);
  // For outside nodes reachable from the set: the predecessor that reaches it.
  constexpr ir::NodeId kUnreached = -1;
  std::vector<ir::NodeId> via(g.nodes().size(), kUnreached);
  for (const ir::Node& n : g.nodes()) {
    if (n.dead) continue;
    for (ir::ValueId v : n.inputs) {
      const ir::NodeId from = v == ir::kNoValue ? -1 : producer[v];
      if (from < 0) continue;
      if (inside[n.id] && !inside[from] && via[from] != kUnreached) {
        std::vector<ir::NodeId> path = {n.id, from};
        while (!inside[path.back()]) path.push_back(via[path.back()]);
        return {path.rbegin(), path.rend()};
      }
      if (!inside[n.id] && (inside[from] || via[from] != kUnreached)) {
        via[n.id] = from;
        break;
      }
    }
  }
  return {};
}

std::string describe_path(const ir::ExportedProgram& p, const std::vector<ir::NodeId>& path,
                          const std::string& tag) {
  std::string s;
  for (ir::NodeId id : path) {
    const ir::Node& n = p.graph.node(id);
    s += (s.empty() ? "" : " \u2192 ") + ir::node_ref(n);
    if (n.meta.delegation_tag == tag) continue;
    if (n.is_delegate_call() && static_cast<size_t>(n.delegate) < p.delegates.size())
      s += " [partition '" + p.delegates[n.delegate].tag + "', lowered to '" +
           p.delegates[n.delegate].backend_id + "']";
    else if (n.meta.delegation_tag.empty())
      s += " [untagged]";
    else
      s += " [tag '" + n.meta.delegation_tag + "']";
  }
  return s;
}

void validate_convex(const ir::ExportedProgram& program, const std::string& tag) {
  const std::vector<ir::NodeId> path = find_reentry_path(program.graph, nodes_with_tag(program.graph, tag));
  if (!path.empty())
    throw CompileError(error_prefix(program) + "tag '" + tag + "' is not convex: path " +
                       describe_path(program, path, tag) + " leaves and re-enters it");
}

}  // namespace etc::lowering
