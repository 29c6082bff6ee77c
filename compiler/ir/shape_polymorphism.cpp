#include "compiler/ir/shape_polymorphism.h"

#include <algorithm>

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

std::vector<int64_t> ints_of(const Node& n, const char* name) {
  const AttrValue* v = n.attrs.find(name);
  return v && std::holds_alternative<std::vector<int64_t>>(*v) ? std::get<std::vector<int64_t>>(*v)
                                                               : std::vector<int64_t>{};
}

// Makes the attribute `name` of node x (in a) follow the input where it
// differs from y's (in b); false when that is not a difference it can make so.
bool follow_input(Graph& a, const Graph& b, Node& x, const Node& y, const std::string& name) {
  const std::vector<int64_t> u = ints_of(x, name.c_str()), v = ints_of(y, name.c_str());
  if (u.empty() || u.size() != v.size()) return false;
  if (x.op == EdgeOp::Reshape && name == "shape" && x.inputs.size() == 1) {
    int64_t dim = -1;
    for (size_t d = 0; d < u.size(); ++d)
      if (u[d] != v[d]) {
        if (dim >= 0) return false;
        dim = static_cast<int64_t>(d);
      }
    const AttrValue* had = x.attrs.find("infer_dim");
    if (had && std::get<int64_t>(*had) != dim) return false;
    x.attrs.set("infer_dim", dim);
    return true;
  }
  if (x.op == EdgeOp::Slice && name == "ends" && x.inputs.size() == 1) {
    const Shape& in_a = a.value(x.inputs[0]).spec.shape;
    const Shape& in_b = b.value(y.inputs[0]).spec.shape;
    std::vector<int64_t> to_end = ints_of(x, "ends_to_end");
    const std::vector<int64_t> steps = ints_of(x, "steps");
    for (size_t d = 0; d < u.size(); ++d) {
      if (u[d] == v[d]) continue;
      if (u[d] != in_a[static_cast<int>(d)] || v[d] != in_b[static_cast<int>(d)] ||
          steps.size() != u.size() || steps[d] <= 0)
        return false;
      if (std::find(to_end.begin(), to_end.end(), static_cast<int64_t>(d)) == to_end.end())
        to_end.push_back(static_cast<int64_t>(d));
    }
    x.attrs.set("ends_to_end", to_end);
    return true;
  }
  return false;
}

// Whether x's attribute `name` already follows the input where it differs
// from y's (an earlier comparison made it so).
bool already_follows(const Graph& b, const Node& x, const Node& y, const std::string& name) {
  const std::vector<int64_t> u = ints_of(x, name.c_str()), v = ints_of(y, name.c_str());
  if (x.op == EdgeOp::Reshape && name == "shape" && x.attrs.find("infer_dim")) {
    const int64_t dim = std::get<int64_t>(*x.attrs.find("infer_dim"));
    for (size_t d = 0; d < u.size() && d < v.size(); ++d)
      if (u[d] != v[d] && static_cast<int64_t>(d) != dim) return false;
    return u.size() == v.size();
  }
  if (x.op == EdgeOp::Slice && name == "ends" && x.attrs.find("ends_to_end")) {
    const std::vector<int64_t> to_end = ints_of(x, "ends_to_end");
    const Shape& in_b = b.value(y.inputs[0]).spec.shape;
    for (size_t d = 0; d < u.size() && d < v.size(); ++d) {
      if (u[d] == v[d]) continue;
      const bool listed = std::find(to_end.begin(), to_end.end(), static_cast<int64_t>(d)) != to_end.end();
      if (!listed || v[d] != in_b[static_cast<int>(d)]) return false;
    }
    return u.size() == v.size();
  }
  return false;
}

std::string make_shape_polymorphic(Graph& a, const Graph& b) {
  if (a.nodes().size() != b.nodes().size() || a.values().size() != b.values().size() ||
      a.inputs() != b.inputs() || a.outputs() != b.outputs())
    return "the graph has " + std::to_string(a.nodes().size()) + " nodes at one size and " +
           std::to_string(b.nodes().size()) +
           " at the other (a size-dependent choice, such as an If on the input's size, was folded)";
  for (size_t i = 0; i < a.nodes().size(); ++i) {
    Node& x = a.nodes()[i];
    const Node& y = b.nodes()[i];
    if (x.op != y.op || x.delegate != y.delegate || x.inputs != y.inputs || x.outputs != y.outputs ||
        x.subgraphs.size() != y.subgraphs.size())
      return where(x) + ": the graph differs here between the two sizes (" + describe(x) + " vs " +
             describe(y) + ")";
    for (ValueId v : x.inputs)
      if (v != kNoValue)
        if (std::string d = compare_value(a, b, v, &x); !d.empty()) return d;
    // The rewrites below add attributes to x; y's own are what the import gave.
    for (const auto& [name, other_value] : y.attrs.items()) {
      const AttrValue* value = x.attrs.find(name);
      if (!value) return where(x) + ": its attributes differ between the two sizes";
      if (follows_input(x, name) || *value == other_value) continue;
      if (already_follows(b, x, y, name)) continue;
      const std::string shown = attr_str(*value);
      if (follow_input(a, b, x, y, name)) continue;
      return where(x) + ": attribute " + name + " is " + shown + " at one size and " + attr_str(other_value) +
             " at the other (computed from the input's size)";
    }
    for (size_t k = 0; k < x.subgraphs.size(); ++k) {
      auto body = std::make_shared<Graph>(*x.subgraphs[k]);
      if (std::string d = make_shape_polymorphic(*body, *y.subgraphs[k]); !d.empty())
        return where(x) + ": in its body: " + d;
      x.subgraphs[k] = std::move(body);
    }
  }
  return {};
}

}  // namespace etc::ir
