#include "compiler/backend/constant_tagging.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "compiler/common/compile_error.h"
#include "compiler/ir/printer.h"

namespace etc {
namespace {

struct Readers {
  std::map<std::string, std::vector<ir::NodeId>> by_tag;  // tagged readers
  bool outside = false;  // read by an untagged node or call_delegate, or a graph output
};

Readers readers_of(const ir::Graph& g, ir::ValueId v, const std::vector<ir::NodeId>& users,
                   bool graph_output) {
  Readers r;
  r.outside = graph_output;
  for (ir::NodeId id : users) {
    const ir::Node& n = g.node(id);
    if (n.meta.delegation_tag.empty() || n.is_delegate_call())
      r.outside = true;
    else
      r.by_tag[n.meta.delegation_tag].push_back(id);
  }
  return r;
}

[[noreturn]] void reject_shared(const ir::ExportedProgram& program, const ir::Value& value,
                                const Readers& readers) {
  std::string tags, nodes;
  for (const auto& [tag, ids] : readers.by_tag) {
    tags += (tags.empty() ? "'" : ", '") + tag + "'";
    for (ir::NodeId id : ids)
      nodes += std::string(nodes.empty() ? "" : ", ") + "node " + ir::node_ref(program.graph.node(id));
  }
  const std::string file = program.source_path.empty() ? "" : program.source_path + ": ";
  throw CompileError(file + "constant '" + value.name + "' is read by partitions " + tags + " (" + nodes +
                     "); each would need its own copy, and copies are not allowed");
}

// Points the readers of `from` in `readers` at `to` instead.
void rewire(ir::Graph& g, const std::vector<ir::NodeId>& readers, ir::ValueId from, ir::ValueId to) {
  for (ir::NodeId id : readers)
    for (ir::ValueId& in : g.node(id).inputs)
      if (in == from) in = to;
}

}  // namespace

// The original value goes to the first tag when nothing outside reads it, so
// the common case (one partition) keeps the constant's name and adds no value.
void tag_constant_data(ir::ExportedProgram& program, const ConstantTaggingOptions& options) {
  ir::Graph& g = program.graph;
  const std::vector<std::vector<ir::NodeId>> users = g.users();
  std::vector<bool> graph_output(g.values().size(), false);
  for (ir::ValueId v : g.outputs()) graph_output[v] = true;
  const auto original_count = static_cast<ir::ValueId>(g.values().size());
  for (ir::ValueId v = 0; v < original_count; ++v) {
    const ir::Value& value = g.value(v);
    if (!value.is_constant() || !value.delegation_tag.empty()) continue;
    if (value.constant->size() < options.min_bytes) continue;
    const Readers readers = readers_of(g, v, users[v], graph_output[v]);
    if (readers.by_tag.empty()) continue;
    if (readers.by_tag.size() == 1 && !readers.outside) {
      g.value(v).delegation_tag = readers.by_tag.begin()->first;
      continue;
    }
    if (!options.allow_copies) {
      // One partition plus outside readers: the constant stays outside and
      // reaches that partition as an input, which needs no copy.
      if (readers.by_tag.size() == 1) continue;
      reject_shared(program, value, readers);
    }
    const std::string name = value.name;
    const TensorSpec spec = value.spec;
    const ir::ConstantData data = value.constant;
    bool original_free = !readers.outside;
    for (const auto& [tag, ids] : readers.by_tag) {
      if (original_free) {
        original_free = false;
        g.value(v).delegation_tag = tag;
        continue;
      }
      const ir::ValueId copy = g.add_constant(name + "#" + tag, spec, data);  // invalidates `value`
      g.value(copy).delegation_tag = tag;
      rewire(g, ids, v, copy);
    }
  }
}

}  // namespace etc
