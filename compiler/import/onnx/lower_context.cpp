#include "compiler/import/onnx/lower_context.h"

#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>
#include <unordered_map>

#include "compiler/common/compile_error.h"
#include "compiler/common/limits.h"
#include "compiler/import/onnx/importer.h"
#include "compiler/import/onnx/tensor_proto.h"
#include "compiler/passes/evaluate.h"
#include "runtime/kernels/kernel.h"

namespace etc::onnx_import {
namespace {

std::unordered_map<std::string, Lowering>& lowerings() {
  static std::unordered_map<std::string, Lowering> table;
  return table;
}

const onnx::AttributeProto* find_attr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

// Folded outputs larger than this (and larger than their inputs) stay as
// nodes, so an Expand or Tile of a constant cannot bloat the program file.
constexpr size_t kMaxFoldGrowthBytes = 1 << 20;

// A float converted to an integer type: NaN, infinities and values out of
// T's range have no value there (the cast would be undefined).
template <typename T, typename F>
std::optional<T> to_integer(F f) {
  if (!(f >= static_cast<F>(std::numeric_limits<T>::min()) &&
        f < -static_cast<F>(std::numeric_limits<T>::min())))
    return std::nullopt;
  return static_cast<T>(f);
}

// A constant's values as T; nullopt when a float has no value in integer T.
template <typename T>
std::optional<std::vector<T>> convert_constant(const ir::Value& v) {
  std::vector<T> out(static_cast<size_t>(v.spec.shape.numel()));
  const uint8_t* p = v.constant->data();
  const auto from_float = [](auto f) -> std::optional<T> {
    if constexpr (std::is_integral_v<T>)
      return to_integer<T>(f);
    else
      return static_cast<T>(f);
  };
  for (size_t i = 0; i < out.size(); ++i) {
    std::optional<T> x;
    switch (v.spec.dtype) {
      case DType::Float32: x = from_float(reinterpret_cast<const float*>(p)[i]); break;
      case DType::Float64: x = from_float(reinterpret_cast<const double*>(p)[i]); break;
      case DType::Int64: x = static_cast<T>(reinterpret_cast<const int64_t*>(p)[i]); break;
      case DType::Int32: x = static_cast<T>(reinterpret_cast<const int32_t*>(p)[i]); break;
      case DType::Int8: x = static_cast<T>(reinterpret_cast<const int8_t*>(p)[i]); break;
      default: x = static_cast<T>(p[i]); break;  // bool, uint8
    }
    if (!x) return std::nullopt;
    out[i] = *x;
  }
  return out;
}

}  // namespace

void register_lowering(const std::string& op_type, Lowering lowering) {
  lowerings()[op_type] = std::move(lowering);
}

const Lowering* find_lowering(const std::string& op_type) {
  auto it = lowerings().find(op_type);
  return it == lowerings().end() ? nullptr : &it->second;
}

LowerContext::LowerContext(Importer& importer, const onnx::NodeProto& node, int32_t debug_handle)
    : importer_(importer), node_(node), debug_handle_(debug_handle) {}

int64_t LowerContext::opset() const { return importer_.opset(); }
ir::Graph& LowerContext::graph() { return importer_.graph(); }

void LowerContext::fail(const std::string& reason) const {
  const std::string& name = importer_.program().debug_handles.at(debug_handle_).onnx_name;
  throw CompileError(importer_.path() + ": node '" + name + "' (" + node_.op_type() + "): " + reason);
}

bool LowerContext::has_input(int i) const { return i < node_.input_size() && !node_.input(i).empty(); }

ir::ValueId LowerContext::input(int i) const {
  if (!has_input(i)) fail("input " + std::to_string(i) + " is required but missing");
  const ir::ValueId v = importer_.lookup(node_.input(i));
  if (v == ir::kNoValue) fail("input '" + node_.input(i) + "' is not defined before this node");
  return v;
}

TensorSpec LowerContext::spec(ir::ValueId v) const { return importer_.graph().value(v).spec; }

bool LowerContext::is_constant(ir::ValueId v) const { return importer_.graph().value(v).is_constant(); }

std::vector<int64_t> LowerContext::constant_ints(int i, const char* what) const {
  const ir::Value& v = importer_.graph().value(input(i));
  if (!v.is_constant())
    fail(std::string(what) + " (input " + std::to_string(i) + ") must be a compile-time constant");
  std::optional<std::vector<int64_t>> values = convert_constant<int64_t>(v);
  if (!values)
    fail(std::string(what) + " (input " + std::to_string(i) +
         ") holds a value that is not an integer in range");
  return std::move(*values);
}

std::vector<float> LowerContext::constant_floats(int i, const char* what) const {
  const ir::Value& v = importer_.graph().value(input(i));
  if (!v.is_constant())
    fail(std::string(what) + " (input " + std::to_string(i) + ") must be a compile-time constant");
  return *convert_constant<float>(v);  // every value has a float
}

void LowerContext::require_one_value(size_t count, int i, const char* what) const {
  if (count != 1)
    fail(std::string(what) + " (input " + std::to_string(i) + ") must hold one value, it holds " +
         std::to_string(count));
}

int64_t LowerContext::constant_int(int i, const char* what) const {
  const std::vector<int64_t> values = constant_ints(i, what);
  require_one_value(values.size(), i, what);
  return values[0];
}

float LowerContext::constant_float(int i, const char* what) const {
  const std::vector<float> values = constant_floats(i, what);
  require_one_value(values.size(), i, what);
  return values[0];
}

std::optional<TensorSpec> LowerContext::declared_output_spec(int i) const {
  if (i >= node_.output_size() || node_.output(i).empty()) return std::nullopt;
  return importer_.declared_spec(node_.output(i));
}

bool LowerContext::has_attr(const std::string& name) const { return find_attr(node_, name) != nullptr; }

int64_t LowerContext::attr_int(const std::string& name, int64_t fallback) const {
  const auto* a = find_attr(node_, name);
  return a ? a->i() : fallback;
}

int64_t LowerContext::attr_int(const std::string& name) const {
  const auto* a = find_attr(node_, name);
  if (!a) fail("attribute '" + name + "' is required");
  return a->i();
}

float LowerContext::attr_float(const std::string& name, float fallback) const {
  const auto* a = find_attr(node_, name);
  return a ? a->f() : fallback;
}

std::string LowerContext::attr_string(const std::string& name, const std::string& fallback) const {
  const auto* a = find_attr(node_, name);
  return a ? a->s() : fallback;
}

std::vector<int64_t> LowerContext::attr_ints(const std::string& name, std::vector<int64_t> fallback) const {
  const auto* a = find_attr(node_, name);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : fallback;
}

std::vector<float> LowerContext::attr_floats(const std::string& name, std::vector<float> fallback) const {
  const auto* a = find_attr(node_, name);
  return a ? std::vector<float>(a->floats().begin(), a->floats().end()) : fallback;
}

const onnx::TensorProto* LowerContext::attr_tensor(const std::string& name) const {
  const auto* a = find_attr(node_, name);
  return a && a->has_t() ? &a->t() : nullptr;
}

const onnx::GraphProto* LowerContext::attr_graph(const std::string& name) const {
  const auto* a = find_attr(node_, name);
  return a && a->has_g() ? &a->g() : nullptr;
}

std::vector<ir::ValueId> LowerContext::lower_subgraph(const onnx::GraphProto& graph) {
  return importer_.lower_subgraph(graph);
}

LoweredBody LowerContext::lower_body(const onnx::GraphProto& body, const std::vector<TensorSpec>& bound) {
  return importer_.lower_body(body, bound);
}

LoweredBody LowerContext::lower_body(const onnx::GraphProto& body, const std::vector<TensorSpec>& own,
                                     const std::function<void(const std::vector<ir::ValueId>& own)>& bind) {
  return importer_.lower_body(body, own, bind);
}

void LowerContext::bind(const std::string& name, ir::ValueId value) { importer_.bind(name, value); }

ir::ValueId LowerContext::lookup(const std::string& name) { return importer_.lookup(name); }

ir::NodeMeta LowerContext::node_meta() const {
  ir::NodeMeta meta;
  meta.debug_handles = {debug_handle_};
  meta.onnx_name = importer_.program().debug_handles.at(debug_handle_).onnx_name;
  meta.onnx_op_type = node_.op_type();
  return meta;
}

std::vector<ir::ValueId> LowerContext::emit_control(EdgeOp op, std::vector<ir::ValueId> inputs,
                                                    const std::vector<TensorSpec>& output_specs,
                                                    ir::Attrs attrs,
                                                    std::vector<std::shared_ptr<ir::Graph>> bodies) {
  ir::Graph& g = graph();
  const std::string base = node_.name().empty() ? node_.op_type() : node_.name();
  std::vector<ir::ValueId> outs;
  for (const TensorSpec& spec : output_specs) {
    if (const std::string error = tensor_size_error(spec); !error.empty())
      fail("output " + std::to_string(outs.size()) + " " + error);
    outs.push_back(g.add_value(importer_.unique_name(base + ":" + std::to_string(emitted_++)), spec));
  }
  const ir::NodeId id = g.add_node(op, std::move(inputs), outs, std::move(attrs), node_meta());
  g.node(id).subgraphs.assign(bodies.begin(), bodies.end());
  emitted_values_.insert(emitted_values_.end(), outs.begin(), outs.end());
  return outs;
}

int64_t LowerContext::normalize_axis(int64_t axis, int64_t rank, const char* what) const {
  if (axis < -rank || axis >= rank)
    fail(std::string(what) + " " + std::to_string(axis) + " is out of range for rank " +
         std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

std::vector<ir::ValueId> LowerContext::emit(EdgeOp op, std::vector<ir::ValueId> inputs, ir::Attrs attrs,
                                            int num_outputs) {
  ir::Graph& g = graph();
  const OpDef* def = find_op_def(op);
  if (!def) fail(std::string("needs edge op '") + edge_op_name(op) + "', which has no portable kernel yet");
  std::vector<TensorSpec> in_specs;
  bool all_constant = true;
  size_t in_bytes = 0;
  for (ir::ValueId v : inputs) {
    if (v == ir::kNoValue) {
      in_specs.emplace_back();
      continue;
    }
    in_specs.push_back(g.value(v).spec);
    all_constant = all_constant && g.value(v).is_constant();
    in_bytes += g.value(v).spec.nbytes();
  }
  std::vector<TensorSpec> out_specs(num_outputs);
  const std::vector<AttrView> views = attrs.views();
  Status s = infer_outputs(*def, AttrList(views), in_specs, out_specs);
  if (!s.ok()) fail(s.message());
  for (size_t i = 0; i < out_specs.size(); ++i)
    if (const std::string error = tensor_size_error(out_specs[i]); !error.empty())
      fail(std::string(edge_op_name(op)) + " output " + std::to_string(i) + " " + error);

  size_t out_bytes = 0;
  for (const TensorSpec& o : out_specs) out_bytes += o.nbytes();
  const std::string base = node_.name().empty() ? node_.op_type() : node_.name();
  std::vector<ir::ValueId> outs;
  if (all_constant && out_bytes <= std::max(kMaxFoldGrowthBytes, in_bytes)) {
    auto folded = passes::evaluate(g, op, inputs, attrs, out_specs);
    if (!folded.ok()) fail(std::string("folding ") + edge_op_name(op) + " failed: " + folded.message());
    for (int i = 0; i < num_outputs; ++i)
      outs.push_back(g.add_constant(importer_.unique_name(base + ":" + std::to_string(emitted_++)),
                                    out_specs[i], folded.get()[i]));
    emitted_values_.insert(emitted_values_.end(), outs.begin(), outs.end());
    return outs;
  }
  for (int i = 0; i < num_outputs; ++i)
    outs.push_back(g.add_value(importer_.unique_name(base + ":" + std::to_string(emitted_++)), out_specs[i]));
  g.add_node(op, std::move(inputs), outs, std::move(attrs), node_meta());
  emitted_values_.insert(emitted_values_.end(), outs.begin(), outs.end());
  return outs;
}

ir::ValueId LowerContext::constant(const TensorSpec& spec, const void* data) {
  const auto* p = static_cast<const uint8_t*>(data);
  auto bytes = std::make_shared<const std::vector<uint8_t>>(p, p + spec.nbytes());
  const std::string base = node_.name().empty() ? node_.op_type() : node_.name();
  return graph().add_constant(importer_.unique_name(base + ":const"), spec, std::move(bytes));
}

ir::ValueId LowerContext::constant_ints(const std::vector<int64_t>& values, Shape shape) {
  return constant(TensorSpec{DType::Int64, shape}, values.data());
}

ir::ValueId LowerContext::constant_floats(const std::vector<float>& values, Shape shape) {
  return constant(TensorSpec{DType::Float32, shape}, values.data());
}

ir::ValueId LowerContext::scalar(DType dtype, double value) {
  uint8_t buf[8] = {};
  switch (dtype) {
    case DType::Float32: {
      float v = static_cast<float>(value);
      std::memcpy(buf, &v, 4);
      break;
    }
    case DType::Float64: std::memcpy(buf, &value, 8); break;
    case DType::Int64: {
      int64_t v = static_cast<int64_t>(value);
      std::memcpy(buf, &v, 8);
      break;
    }
    case DType::Int32: {
      int32_t v = static_cast<int32_t>(value);
      std::memcpy(buf, &v, 4);
      break;
    }
    case DType::Int8: {
      int8_t v = static_cast<int8_t>(value);
      std::memcpy(buf, &v, 1);
      break;
    }
    default: buf[0] = static_cast<uint8_t>(value); break;
  }
  return constant(TensorSpec{dtype, Shape{}}, buf);
}

void LowerContext::set_output(int i, ir::ValueId value) {
  if (i >= node_.output_size() || node_.output(i).empty()) return;
  // Values this node made take the ONNX output's name, so dumps and
  // intermediate-output logs read like the model.
  for (ir::ValueId v : emitted_values_)
    if (v == value) graph().value(v).name = importer_.unique_name(node_.output(i));
  importer_.bind(node_.output(i), value);
}

}  // namespace etc::onnx_import
