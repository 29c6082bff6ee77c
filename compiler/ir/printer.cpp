#include "compiler/ir/printer.h"

#include <sstream>

namespace etc::ir {
namespace {

std::string type_str(const Value& v) { return std::string(dtype_name(v.spec.dtype)) + v.spec.shape.str(); }
std::string ref(const Graph& g, ValueId id) { return id == kNoValue ? "_" : "%" + g.value(id).name; }

// "call_delegate[demo_0 → demo]", or "call_delegate[#0]" without the program.
std::string callee(const Node& n, const std::vector<LoweredBackendModule>* delegates) {
  if (!n.is_delegate_call()) return edge_op_name(n.op);
  if (delegates && static_cast<size_t>(n.delegate) < delegates->size()) {
    const LoweredBackendModule& m = (*delegates)[n.delegate];
    return "call_delegate[" + m.tag + " \u2192 " + m.backend_id + "]";
  }
  return "call_delegate[#" + std::to_string(n.delegate) + "]";
}

void print_graph(std::ostringstream& os, const Graph& g, const std::vector<LoweredBackendModule>* delegates) {
  os << "graph(";
  for (size_t i = 0; i < g.inputs().size(); ++i)
    os << (i ? ", " : "") << ref(g, g.inputs()[i]) << ": " << type_str(g.value(g.inputs()[i]));
  os << ") {\n";
  for (const Value& v : g.values())
    if (v.is_constant()) {
      os << "  " << ref(g, v.id) << ": " << type_str(v) << " = constant";
      if (!v.delegation_tag.empty()) os << " [" << v.delegation_tag << "]";
      os << "\n";
    }
  for (const Node& n : g.nodes()) {
    if (n.dead) continue;
    os << "  ";
    for (size_t i = 0; i < n.outputs.size(); ++i)
      os << (i ? ", " : "") << ref(g, n.outputs[i]) << ": " << type_str(g.value(n.outputs[i]));
    os << " = " << callee(n, delegates) << "(";
    for (size_t i = 0; i < n.inputs.size(); ++i) os << (i ? ", " : "") << ref(g, n.inputs[i]);
    os << ")";
    if (!n.attrs.empty()) os << " {" << n.attrs.str() << "}";
    if (!n.meta.onnx_name.empty() || !n.meta.debug_handles.empty()) {
      os << "  # " << n.meta.onnx_name << " (" << n.meta.onnx_op_type << ")";
      for (int32_t h : n.meta.debug_handles) os << " @" << h;
    }
    if (!n.meta.delegation_tag.empty()) os << " [" << n.meta.delegation_tag << "]";
    os << "\n";
  }
  os << "  return ";
  for (size_t i = 0; i < g.outputs().size(); ++i) os << (i ? ", " : "") << ref(g, g.outputs()[i]);
  os << "\n}\n";
}

}  // namespace

std::string describe(const Node& n) {
  std::string s = n.is_delegate_call() ? "call_delegate" : edge_op_name(n.op);
  if (!n.meta.onnx_name.empty() || !n.meta.onnx_op_type.empty())
    s += " " + n.meta.onnx_name + " (" + n.meta.onnx_op_type + ")";
  return s;
}

std::string node_ref(const Node& n) {
  const std::string op = n.is_delegate_call() ? "call_delegate" : edge_op_name(n.op);
  if (n.meta.onnx_name.empty()) return "#" + std::to_string(n.id) + " (" + op + ")";
  return "'" + n.meta.onnx_name + "' (" + (n.meta.onnx_op_type.empty() ? op : n.meta.onnx_op_type) + ")";
}

std::string print(const Graph& g) {
  std::ostringstream os;
  print_graph(os, g, nullptr);
  return os.str();
}

std::string print(const ExportedProgram& p) {
  std::ostringstream os;
  print_graph(os, p.graph, &p.delegates);
  for (size_t i = 0; i < p.delegates.size(); ++i) {
    const LoweredBackendModule& m = p.delegates[i];
    os << "delegate " << i << ": " << m.tag << " \u2192 " << m.backend_id << ", " << m.processed_bytes.size()
       << " bytes";
    for (const CompileSpec& spec : m.compile_specs)
      os << ", " << spec.key << " (" << spec.value.size() << " B)";
    if (m.original_program) os << ", " << m.original_program->graph.num_live_nodes() << " edge nodes";
    os << "\n";
  }
  return os.str();
}

}  // namespace etc::ir
