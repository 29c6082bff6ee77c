#include "compiler/backend/to_backend.h"

#include <algorithm>
#include <exception>
#include <utility>

#include "compiler/backend/partition_extraction.h"
#include "compiler/backend/partition_validation.h"
#include "compiler/common/compile_error.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/verifier.h"

namespace etc {
namespace {

using lowering::error_prefix;
using lowering::ExtractedPartition;

constexpr char kCallDelegate[] = "call_delegate";

void require_valid(const ir::ExportedProgram& p, const std::string& what) {
  const Status s = ir::verify(p);
  if (!s.ok()) throw CompileError(error_prefix(p) + what + ": " + s.message());
}

// Step 2 (validate), for the program as tagged: everything that does not
// depend on the order in which partitions are lowered.
void validate(const ir::ExportedProgram& original, const PartitionResult& result) {
  require_valid(original, "cannot lower an invalid program");
  lowering::validate_unchanged(original, result.tagged_exported_program);
  lowering::validate_tags(result);
  for (const std::string& tag : lowering::tags_in_order(result.tagged_exported_program.graph))
    lowering::validate_convex(result.tagged_exported_program, tag);
}

// Partitions lowered earlier are single nodes now: a tag convex on its own
// may still reach itself through one of them.
void validate_convex_after_earlier(const ir::ExportedProgram& p, const std::string& tag,
                                   const std::vector<std::string>& lowered) {
  const std::vector<ir::NodeId> path =
      lowering::find_reentry_path(p.graph, lowering::nodes_with_tag(p.graph, tag));
  if (path.empty()) return;
  std::string others;
  for (ir::NodeId id : path) {
    const ir::Node& n = p.graph.node(id);
    if (n.is_delegate_call() &&
        std::find(lowered.begin(), lowered.end(), p.delegates[n.delegate].tag) != lowered.end())
      others += (others.empty() ? "'" : ", '") + p.delegates[n.delegate].tag + "'";
  }
  throw CompileError(
      error_prefix(p) + "tag '" + tag + "' is not convex once " +
      (others.empty() ? std::string("earlier partitions are") : "partition " + others + " is") +
      " lowered: path " + lowering::describe_path(p, path, tag) +
      " leaves and re-enters it, so the partitions together would form a cycle" +
      " (each is convex on its own)");
}

// Step 3.
ExtractedPartition extract(const ir::ExportedProgram& p, const std::string& tag) {
  ExtractedPartition x = lowering::extract_partition(p, tag);
  require_valid(x.program, "internal: partition '" + tag + "' extracted as an invalid program");
  return x;
}

// Step 4.
PreprocessResult preprocess(const ir::ExportedProgram& outer, const ExtractedPartition& x,
                            const std::string& tag, const DelegationSpec& spec) {
  const BackendDetails* details = find_backend_details(spec.backend_id);
  if (!details)
    throw CompileError(error_prefix(outer) + "backend '" + spec.backend_id + "' is not registered");
  try {
    return details->preprocess(x.program, spec.compile_specs);
  } catch (const std::exception& e) {
    const std::string first = ir::node_ref(outer.graph.node(x.nodes.front()));
    const std::string count =
        x.nodes.size() == 1 ? "node " + first : std::to_string(x.nodes.size()) + " nodes from " + first;
    throw CompileError(error_prefix(outer) + "backend '" + spec.backend_id +
                       "' failed to preprocess partition '" + tag + "' (" + count + "): " + e.what());
  }
}

int32_t next_debug_handle(const ir::ExportedProgram& p) {
  int32_t max_handle = 0;
  if (!p.debug_handles.empty()) max_handle = std::max(max_handle, p.debug_handles.rbegin()->first);
  for (const ir::Node& n : p.graph.nodes())
    for (int32_t h : n.meta.debug_handles) max_handle = std::max(max_handle, h);
  return max_handle + 1;
}

// Step 5: one call_delegate node in place of the partition's nodes, in the
// slot of its last node; nodes in between that depend on it move after it.
void replace(ir::ExportedProgram& p, ExtractedPartition x, const std::string& tag, const DelegationSpec& spec,
             PreprocessResult processed) {
  ir::Graph& g = p.graph;
  const int32_t handle = next_debug_handle(p);
  p.debug_handles[handle] = ir::DebugHandleInfo{std::string(kCallDelegate) + " " + tag, kCallDelegate};
  ir::NodeMeta meta;
  meta.debug_handles = {handle};
  meta.onnx_name = tag;
  meta.onnx_op_type = kCallDelegate;
  for (ir::NodeId id : x.nodes) g.node(id).dead = true;
  const ir::NodeId call = g.add_node(EdgeOp{}, x.outer_inputs, x.outer_outputs, {}, std::move(meta));
  g.node(call).delegate = static_cast<int32_t>(p.delegates.size());
  p.delegates.push_back(ir::LoweredBackendModule{
      spec.backend_id, tag, std::move(processed.processed_bytes), spec.compile_specs,
      std::move(processed.debug_handle_map),
      std::make_shared<const ir::ExportedProgram>(std::move(x.program)), std::move(processed.weights)});
  // Constants still read outside keep their data there, untagged.
  for (ir::Value& v : g.values())
    if (v.delegation_tag == tag) v.delegation_tag.clear();
  std::vector<int64_t> key(g.nodes().size());
  for (size_t i = 0; i < key.size(); ++i) key[i] = static_cast<int64_t>(i);
  key[call] = x.nodes.back();
  lowering::sort_topologically(g, key);
  g.compact();
}

}  // namespace

ir::ExportedProgram to_backend(const ir::ExportedProgram& original, const PartitionResult& result) {
  validate(original, result);
  ir::ExportedProgram p = result.tagged_exported_program;
  std::vector<std::string> lowered;
  for (const std::string& tag : lowering::tags_in_order(p.graph)) {
    validate_convex_after_earlier(p, tag, lowered);
    const DelegationSpec& spec = result.partition_tags.at(tag);
    ExtractedPartition x = extract(p, tag);
    PreprocessResult processed = preprocess(p, x, tag, spec);
    replace(p, std::move(x), tag, spec, std::move(processed));
    lowered.push_back(tag);
  }
  // Value tags meant "moves into that partition": they mean nothing once it is lowered.
  for (ir::Value& v : p.graph.values()) v.delegation_tag.clear();
  require_valid(p, "internal: to_backend produced an invalid program");
  return p;
}

ir::ExportedProgram to_backend(const ir::ExportedProgram& program, const Partitioner& partitioner) {
  ir::ExportedProgram lowered = to_backend(program, partitioner.partition(program));
  lower_bodies(lowered, partitioner);
  return lowered;
}

namespace {

void offset_delegates(ir::Graph& g, int32_t base) {
  for (ir::Node& n : g.nodes()) {
    if (n.is_delegate_call()) n.delegate += base;
    for (auto& body : n.subgraphs) {
      auto copy = std::make_shared<ir::Graph>(*body);
      offset_delegates(*copy, base);
      body = std::move(copy);
    }
  }
}

}  // namespace

void lower_bodies(ir::ExportedProgram& program, const Partitioner& partitioner) {
  for (ir::Node& n : program.graph.nodes()) {
    for (size_t b = 0; b < n.subgraphs.size(); ++b) {
      ir::ExportedProgram sub = to_backend(ir::body_program(program, n, b), partitioner);  // and its bodies
      const std::string prefix = ir::body_scope(n, b) + "/";
      for (ir::Node& call : sub.graph.nodes())
        if (call.is_delegate_call()) {
          call.meta.onnx_name = prefix + call.meta.onnx_name;
          for (int32_t h : call.meta.debug_handles)
            sub.debug_handles[h].onnx_name = std::string(kCallDelegate) + " " + call.meta.onnx_name;
        }
      for (ir::LoweredBackendModule& m : sub.delegates)
        if (m.tag.find('/') == std::string::npos) m.tag = prefix + m.tag;
      offset_delegates(sub.graph, static_cast<int32_t>(program.delegates.size()));
      for (ir::LoweredBackendModule& m : sub.delegates) program.delegates.push_back(std::move(m));
      program.debug_handles = std::move(sub.debug_handles);
      n.subgraphs[b] = std::make_shared<ir::Graph>(std::move(sub.graph));
    }
  }
  require_valid(program, "internal: lowering control-flow bodies produced an invalid program");
}

ir::ExportedProgram to_backend(const std::string& backend_id, const ir::ExportedProgram& program,
                               std::span<const CompileSpec> compile_specs) {
  if (!find_backend_details(backend_id))
    throw CompileError(error_prefix(program) + "backend '" + backend_id +
                       "' has no registered BackendDetails, cannot lower the program to it");
  const std::string tag = backend_id + "_whole";
  PartitionResult result;
  result.tagged_exported_program = program;
  ir::Graph& g = result.tagged_exported_program.graph;
  for (ir::Value& v : g.values()) v.delegation_tag.clear();
  std::vector<bool> is_output(g.values().size(), false);
  for (ir::ValueId v : g.outputs()) is_output[v] = true;
  for (ir::Node& n : g.nodes()) {
    if (n.dead || n.is_delegate_call()) continue;
    n.meta.delegation_tag = tag;
    for (ir::ValueId v : n.inputs)
      if (v != ir::kNoValue && g.value(v).is_constant() && !is_output[v]) g.value(v).delegation_tag = tag;
  }
  result.partition_tags[tag] = DelegationSpec{backend_id, {compile_specs.begin(), compile_specs.end()}};
  return to_backend(program, result);
}

namespace {

void attach_fallbacks(ir::Graph& g, const std::vector<ir::LoweredBackendModule>& delegates) {
  for (ir::Node& n : g.nodes()) {
    if (n.dead) continue;
    if (n.is_delegate_call()) {
      const ir::LoweredBackendModule& m = delegates[static_cast<size_t>(n.delegate)];
      if (n.subgraphs.empty() && m.original_program)
        n.subgraphs.push_back(std::make_shared<ir::Graph>(m.original_program->graph));
      continue;
    }
    for (auto& body : n.subgraphs) {
      auto copy = std::make_shared<ir::Graph>(*body);
      attach_fallbacks(*copy, delegates);
      body = std::move(copy);
    }
  }
}

}  // namespace

void attach_fallbacks(ir::ExportedProgram& program) { attach_fallbacks(program.graph, program.delegates); }

}  // namespace etc
