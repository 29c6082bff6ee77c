#include "compiler/ir/printer.h"

#include <sstream>

namespace etc::ir {
namespace {

std::string type_str(const Value& v) { return std::string(dtype_name(v.spec.dtype)) + v.spec.shape.str(); }
std::string ref(const Graph& g, ValueId id) { return id == kNoValue ? "_" : "%" + g.value(id).name; }

}  // namespace

std::string describe(const Node& n) {
  std::string s = edge_op_name(n.op);
  if (!n.meta.onnx_name.empty() || !n.meta.onnx_op_type.empty())
    s += " " + n.meta.onnx_name + " (" + n.meta.onnx_op_type + ")";
  return s;
}

std::string print(const Graph& g) {
  std::ostringstream os;
  os << "graph(";
  for (size_t i = 0; i < g.inputs().size(); ++i)
    os << (i ? ", " : "") << ref(g, g.inputs()[i]) << ": " << type_str(g.value(g.inputs()[i]));
  os << ") {\n";
  for (const Value& v : g.values())
    if (v.is_constant()) os << "  " << ref(g, v.id) << ": " << type_str(v) << " = constant\n";
  for (const Node& n : g.nodes()) {
    if (n.dead) continue;
    os << "  ";
    for (size_t i = 0; i < n.outputs.size(); ++i)
      os << (i ? ", " : "") << ref(g, n.outputs[i]) << ": " << type_str(g.value(n.outputs[i]));
    os << " = " << edge_op_name(n.op) << "(";
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
  return os.str();
}

}  // namespace etc::ir
