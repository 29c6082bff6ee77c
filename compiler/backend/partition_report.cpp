#include "compiler/backend/partition_report.h"

#include <algorithm>
#include <map>

#include "compiler/ir/flops.h"

namespace etc {
namespace {

// Boundary tensors of one tag: read inside but defined outside, and defined
// inside but read outside (or a graph output).
void fill_boundary(const ir::Graph& g, const std::vector<std::vector<ir::NodeId>>& users,
                   PartitionSummary& part) {
  auto inside = [&](ir::NodeId n) { return g.node(n).meta.delegation_tag == part.tag; };
  std::vector<bool> seen(g.values().size(), false);
  for (ir::NodeId id : part.nodes) {
    for (ir::ValueId v : g.node(id).inputs) {
      if (v == ir::kNoValue || seen[v]) continue;
      seen[v] = true;
      const ir::Value& value = g.value(v);
      if (value.is_constant() && value.delegation_tag == part.tag) {
        ++part.constants_moved_in;
        part.constant_bytes_moved_in += value.spec.nbytes();
      } else if (value.producer < 0 || !inside(value.producer)) {
        part.inputs.push_back(value.name);
      }
    }
    for (ir::ValueId v : g.node(id).outputs) {
      const bool graph_output = std::count(g.outputs().begin(), g.outputs().end(), v) > 0;
      const bool read_outside =
          std::any_of(users[v].begin(), users[v].end(), [&](ir::NodeId u) { return !inside(u); });
      if (graph_output || read_outside) part.outputs.push_back(g.value(v).name);
    }
  }
}

void append_bodies(PartitionReport& report, const ir::ExportedProgram& program,
                   const Partitioner& partitioner, const std::vector<std::string>& backends,
                   const std::string& prefix) {
  for (const ir::Node& n : program.graph.nodes()) {
    if (n.dead) continue;
    for (size_t b = 0; b < n.subgraphs.size(); ++b) {
      const ir::ExportedProgram sub = ir::body_program(program, n, b);
      const std::string scope = prefix + ir::body_scope(n, b);
      PartitionReport body = make_partition_report(partitioner.partition(sub), backends);
      const ir::AttrValue* error = n.attrs.find(b == 0 ? "then_error" : "else_error");
      for (NodeAssignment& a : body.nodes) {
        a.scope = scope;
        if (error)
          a.reason = "this branch does not compile at these shapes, and fails the run if taken: " +
                     std::get<std::string>(*error);
        if (!a.tag.empty()) a.tag = scope + "/" + a.tag;
        report.nodes.push_back(std::move(a));
      }
      for (PartitionSummary& p : body.partitions) {
        p.scope = scope;
        p.tag = scope + "/" + p.tag;
        report.partitions.push_back(std::move(p));
      }
      report.delegated_nodes += body.delegated_nodes;
      report.delegated_flops += body.delegated_flops;
      report.total_flops += body.total_flops;
      append_bodies(report, sub, partitioner, backends, scope + "/");
    }
  }
}

}  // namespace

PartitionReport make_partition_report(const ir::ExportedProgram& program, const Partitioner& partitioner,
                                      const std::vector<std::string>& backends) {
  PartitionReport report = make_partition_report(partitioner.partition(program), backends);
  append_bodies(report, program, partitioner, backends, "");
  return report;
}

double PartitionReport::node_coverage() const {
  return nodes.empty() ? 0.0 : static_cast<double>(delegated_nodes) / static_cast<double>(nodes.size());
}

double PartitionReport::flops_coverage() const {
  return total_flops == 0 ? 0.0 : static_cast<double>(delegated_flops) / static_cast<double>(total_flops);
}

PartitionReport make_partition_report(const PartitionResult& result,
                                      const std::vector<std::string>& backends) {
  const ir::ExportedProgram& program = result.tagged_exported_program;
  const ir::Graph& g = program.graph;
  PartitionReport report;
  report.model = program.source_path;
  report.backends = backends;
  std::map<std::string, size_t> part_index;
  for (const ir::Node& n : g.nodes()) {
    if (n.dead) continue;
    NodeAssignment a;
    a.node = n.id;
    a.onnx_name = n.meta.onnx_name;
    a.onnx_op_type = n.meta.onnx_op_type;
    a.edge_op = n.is_delegate_call() ? "call_delegate" : edge_op_name(n.op);
    a.flops = ir::estimate_flops(program, n);
    report.total_flops += a.flops;
    if (n.is_delegate_call()) {
      a.backend = program.delegates[n.delegate].backend_id;
      a.tag = program.delegates[n.delegate].tag;
    } else if (!n.meta.delegation_tag.empty()) {
      a.tag = n.meta.delegation_tag;
      const auto spec = result.partition_tags.find(a.tag);
      a.backend = spec == result.partition_tags.end() ? "?" : spec->second.backend_id;
    } else if (n.is_control()) {
      a.reason = "control flow: the executor runs it; its bodies are partitioned on their own";
    } else {
      const auto why = result.rejection_reasons.find(n.id);
      a.reason = why == result.rejection_reasons.end() ? "no backend claimed it" : why->second;
    }
    if (!a.tag.empty()) {
      ++report.delegated_nodes;
      report.delegated_flops += a.flops;
      auto [it, added] = part_index.emplace(a.tag, report.partitions.size());
      if (added) report.partitions.push_back(PartitionSummary{"", a.tag, a.backend, {}, {}, {}, 0, 0, 0});
      report.partitions[it->second].nodes.push_back(n.id);
      report.partitions[it->second].flops += a.flops;
    }
    report.nodes.push_back(std::move(a));
  }
  const auto users = g.users();
  for (PartitionSummary& part : report.partitions) {
    const ir::Node& first = g.node(part.nodes.front());
    if (!first.is_delegate_call()) {
      fill_boundary(g, users, part);
      continue;
    }
    for (ir::ValueId v : first.inputs) part.inputs.push_back(g.value(v).name);
    for (ir::ValueId v : first.outputs) part.outputs.push_back(g.value(v).name);
  }
  return report;
}

}  // namespace etc
