#include "compiler/ir/shape_polymorphism.h"

#include "compiler/ir/attrs.h"
#include "compiler/ir/printer.h"

namespace etc::ir {
namespace {

std::string attr_str(const AttrValue& v) {
  Attrs one;
  one.set("x", v);
  const std::string s = one.str();
  return s.substr(2);  // drop "x="
}

bool int_flag(const Node& n, const char* name) {
  const AttrValue* g = n.attrs.find(name);
  return g && std::holds_alternative<int64_t>(*g) && std::get<int64_t>(*g) != 0;
}

// An attribute that holds the compiled size but that the kernel derives from
// the input instead: a global pool's kernel_shape, a resize's sizes when its
// output follows its scales.
bool follows_input(const Node& n, const std::string& attr) {
  if ((n.op == EdgeOp::AvgPool || n.op == EdgeOp::MaxPool) && attr == "kernel_shape")
    return int_flag(n, "global");
  if (n.op == EdgeOp::Resize && attr == "sizes") return int_flag(n, "sizes_from_scales");
  return false;
}

std::string where(const Node& n) {
  return "node '" + (n.meta.onnx_name.empty() ? std::string(edge_op_name(n.op)) : n.meta.onnx_name) + "' (" +
         (n.meta.onnx_op_type.empty() ? std::string(edge_op_name(n.op)) : n.meta.onnx_op_type) + ")";
}

std::string compare_value(const Graph& a, const Graph& b, ValueId v, const Node* reader) {
  const Value& x = a.value(v);
  const Value& y = b.value(v);
  const std::string at = reader ? where(*reader) + ": " : std::string();
  if (x.spec.dtype != y.spec.dtype || x.spec.shape.rank() != y.spec.shape.rank())
    return at + "value '" + x.name + "' is " + dtype_name(x.spec.dtype) + x.spec.shape.str() +
           " at one size and " + dtype_name(y.spec.dtype) + y.spec.shape.str() + " at the other";
  if (x.is_constant() != y.is_constant() || (x.is_constant() && *x.constant != *y.constant))
    return at + "its input '" + x.name + "' is a constant computed from the input's size (" +
           x.spec.shape.str() + " vs " + y.spec.shape.str() + ")";
  return {};
}

}  // namespace

std::string shape_polymorphism_difference(const Graph& a, const Graph& b) {
  if (a.nodes().size() != b.nodes().size() || a.values().size() != b.values().size() ||
      a.inputs() != b.inputs() || a.outputs() != b.outputs())
    return "the graph has " + std::to_string(a.nodes().size()) + " nodes at one size and " +
           std::to_string(b.nodes().size()) +
           " at the other (a size-dependent choice, such as an If on the input's size, was folded)";
  for (size_t i = 0; i < a.nodes().size(); ++i) {
    const Node& x = a.nodes()[i];
    const Node& y = b.nodes()[i];
    if (x.op != y.op || x.delegate != y.delegate || x.inputs != y.inputs || x.outputs != y.outputs ||
        x.subgraphs.size() != y.subgraphs.size())
      return where(x) + ": the graph differs here between the two sizes (" + describe(x) + " vs " +
             describe(y) + ")";
    for (ValueId v : x.inputs)
      if (v != kNoValue)
        if (std::string d = compare_value(a, b, v, &x); !d.empty()) return d;
    if (x.attrs.items().size() != y.attrs.items().size())
      return where(x) + ": its attributes differ between the two sizes";
    for (size_t k = 0; k < x.attrs.items().size(); ++k) {
      const auto& [name, value] = x.attrs.items()[k];
      const auto& [other_name, other_value] = y.attrs.items()[k];
      if (name != other_name) return where(x) + ": its attributes differ between the two sizes";
      if (follows_input(x, name)) continue;
      if (!(value == other_value))
        return where(x) + ": attribute " + name + " is " + attr_str(value) + " at one size and " +
               attr_str(other_value) + " at the other (computed from the input's size)";
    }
    for (size_t k = 0; k < x.subgraphs.size(); ++k)
      if (std::string d = shape_polymorphism_difference(*x.subgraphs[k], *y.subgraphs[k]); !d.empty())
        return where(x) + ": in its body: " + d;
  }
  return {};
}

}  // namespace etc::ir
