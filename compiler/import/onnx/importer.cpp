#include "compiler/import/onnx/importer.h"

#include <algorithm>
#include <new>
#include <set>

#include "compiler/common/compile_error.h"
#include "compiler/common/limits.h"
#include "compiler/import/onnx/lower_context.h"
#include "compiler/import/onnx/ops/register_all.h"
#include "compiler/import/onnx/tensor_proto.h"
#include "compiler/ir/verifier.h"
#include "compiler/passes/dead_code.h"

namespace etc::onnx_import {
namespace {

std::string node_label(const onnx::NodeProto& n, int index) {
  return n.name().empty() ? n.op_type() + "_" + std::to_string(index) : n.name();
}

int64_t default_opset(const onnx::ModelProto& m) {
  for (const auto& o : m.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") return o.version();
  return 0;
}

// The nodes of `g` whose op type has no lowering at this opset, and those of
// the bodies of its control-flow nodes, as lines of a report.
void collect_unsupported(const onnx::GraphProto& g, int64_t opset, std::vector<std::string>& problems) {
  const auto& nodes = g.node();
  for (int i = 0; i < nodes.size(); ++i) {
    const onnx::NodeProto& n = nodes[i];
    if ((n.op_type() == "If" || n.op_type() == "Loop" || n.op_type() == "Scan") && n.domain().empty())
      for (const auto& a : n.attribute())
        if (a.has_g()) collect_unsupported(a.g(), opset, problems);
    const std::string key = n.domain() + "::" + n.op_type();
    std::string reason;
    if (!n.domain().empty() && n.domain() != "ai.onnx") {
      reason = "domain '" + n.domain() + "' is not supported";
    } else if (const Lowering* l = find_lowering(n.op_type()); !l) {
      reason = "op type " + n.op_type() + " is not supported";
    } else if (opset < l->min_opset || opset > l->max_opset) {
      reason = n.op_type() + " at opset " + std::to_string(opset) +
               " is not supported (supported: " + std::to_string(l->min_opset) + ".." +
               std::to_string(l->max_opset) + ")";
    }
    if (!reason.empty())
      problems.push_back("  node '" + node_label(n, i) + "' (" + n.op_type() + "): " + reason);
  }
}

// Step 3: every unsupported op type, reported together.
void find_unsupported(const onnx::ModelProto& m, const std::string& path, int64_t opset) {
  std::vector<std::string> problems;
  collect_unsupported(m.graph(), opset, problems);
  if (problems.empty()) return;
  std::string msg = path + ": " + std::to_string(problems.size()) + " node(s) cannot be compiled:\n";
  for (const auto& p : problems) msg += p + "\n";
  msg.pop_back();
  throw CompileError(msg);
}

// Step 4: graph inputs (those not backed by an initializer).
void bind_inputs(Importer& imp, const onnx::GraphProto& g, const ImportOptions& options) {
  std::set<std::string> initializers;
  for (const auto& t : g.initializer()) initializers.insert(t.name());
  std::set<std::string> used_overrides;
  for (const auto& in : g.input()) {
    if (initializers.count(in.name())) continue;
    const std::string what = imp.path() + ": input '" + in.name() + "'";
    if (!in.type().has_tensor_type()) throw CompileError(what + ": only tensor inputs are supported");
    const auto& tt = in.type().tensor_type();
    TensorSpec spec;
    spec.dtype = dtype_from_onnx(tt.elem_type());
    if (spec.dtype == DType::Invalid)
      throw CompileError(what + ": element type " + onnx_type_name(tt.elem_type()) + " is not supported");
    auto it = options.input_shapes.find(in.name());
    if (it != options.input_shapes.end()) {
      used_overrides.insert(in.name());
      const Shape& given = it->second;
      if (tt.has_shape() && tt.shape().dim_size() != given.rank())
        throw CompileError(what + ": --input-shape gives rank " + std::to_string(given.rank()) +
                           " but the model declares rank " + std::to_string(tt.shape().dim_size()));
      for (int d = 0; tt.has_shape() && d < tt.shape().dim_size(); ++d) {
        const auto& dim = tt.shape().dim(d);
        if (dim.has_dim_value() && dim.dim_value() != given[d])
          throw CompileError(what + ": --input-shape sets dim " + std::to_string(d) + " to " +
                             std::to_string(given[d]) + " but the model fixes it to " +
                             std::to_string(dim.dim_value()));
      }
      spec.shape = given;
    } else {
      if (!tt.has_shape())
        throw CompileError(what + ": has no shape; pass --input-shape " + in.name() + "=DIMxDIM...");
      if (tt.shape().dim_size() > kMaxRank) throw CompileError(what + ": rank above 8 is not supported");
      for (int d = 0; d < tt.shape().dim_size(); ++d) {
        const auto& dim = tt.shape().dim(d);
        if (!dim.has_dim_value() || dim.dim_value() < 0)
          throw CompileError(what + ": dim " + std::to_string(d) + " is dynamic" +
                             (dim.has_dim_param() ? " ('" + dim.dim_param() + "')" : std::string()) +
                             "; fix it with --input-shape " + in.name() +
                             "=1x3x224x224 (all dims), or give it a range, e.g. " + in.name() +
                             "=1x3x320..960x320..960");
        spec.shape.push_back(dim.dim_value());
      }
    }
    if (const std::string error = tensor_size_error(spec); !error.empty())
      throw CompileError(what + ": " + error);
    const ir::ValueId v = imp.program().graph.add_value(in.name(), spec);
    imp.program().graph.inputs().push_back(v);
    imp.bind(in.name(), v);
  }
  for (const auto& [name, shape] : options.input_shapes)
    if (!used_overrides.count(name))
      throw CompileError(imp.path() + ": --input-shape names '" + name + "', which is not a graph input");
}

void bind_initializer(Importer& imp, const onnx::TensorProto& t) {
  auto decoded = decode_tensor(t);
  if (!decoded.ok()) throw CompileError(imp.path() + ": " + decoded.message());
  auto data = std::make_shared<const std::vector<uint8_t>>(std::move(decoded->bytes));
  imp.bind(t.name(), imp.graph().add_constant(imp.unique_name(t.name()), decoded->spec, data));
}

void bind_initializers(Importer& imp, const onnx::GraphProto& g) {
  for (const auto& t : g.initializer()) bind_initializer(imp, t);
}

// The main graph's initializers, each one's bytes freed from the model once
// copied into the graph: the next copy reuses that memory instead of pages
// the kernel must clear first (with a model's weights twice over, those
// page clears were a third of a large model's compile time).
void bind_and_release_initializers(Importer& imp, onnx::GraphProto& g) {
  for (auto& t : *g.mutable_initializer()) {
    bind_initializer(imp, t);
    if (t.has_raw_data()) std::string().swap(*t.mutable_raw_data());
  }
}

// Step 5.
void lower_node(Importer& imp, const onnx::NodeProto& n, int index, int32_t handle) {
  imp.program().debug_handles[handle] = {node_label(n, index), n.op_type()};
  LowerContext ctx(imp, n, handle);
  try {
    find_lowering(n.op_type())->fn(ctx);
  } catch (const std::bad_alloc&) {
    // A constant the node's attributes or shapes make too large to hold
    // (OneHot with depth 2^40, EyeLike of a huge shape).
    ctx.fail("its outputs or the constants it needs do not fit in memory");
  }
  for (int o = 0; o < n.output_size(); ++o)
    if (!n.output(o).empty() && imp.lookup(n.output(o)) == ir::kNoValue)
      ctx.fail("output " + std::to_string(o) + " ('" + n.output(o) + "') is not supported by this lowering");
}

void lower_nodes(Importer& imp, const onnx::GraphProto& g) {
  imp.set_next_handle(g.node_size() + 1);
  for (int i = 0; i < g.node_size(); ++i) lower_node(imp, g.node(i), i, i + 1);
}

// Step 6: outputs must be values a node writes, each listed once.
void bind_outputs(Importer& imp, const onnx::GraphProto& g) {
  ir::Graph& graph = imp.program().graph;
  std::set<ir::ValueId> seen;
  for (const auto& out : g.output()) {
    ir::ValueId v = imp.lookup(out.name());
    if (v == ir::kNoValue)
      throw CompileError(imp.path() + ": graph output '" + out.name() + "' is never produced");
    const ir::Value& val = graph.value(v);
    const bool is_input = std::find(graph.inputs().begin(), graph.inputs().end(), v) != graph.inputs().end();
    if (val.is_constant() || is_input || seen.count(v)) {
      // Materialize with a copy so the output gets its own planned buffer.
      const TensorSpec spec = val.spec;
      const ir::ValueId copy = graph.add_value(imp.unique_name(out.name()), spec);
      graph.add_node(EdgeOp::Reshape, {v}, {copy},
                     ir::Attrs{{"shape", std::vector<int64_t>(spec.shape.begin(), spec.shape.end())}}, {});
      v = copy;
    }
    graph.value(v).name = out.name();
    seen.insert(v);
    graph.outputs().push_back(v);
  }
}

}  // namespace

ir::ValueId Importer::lookup(const std::string& name) { return lookup_at(scopes_.size() - 1, name); }

ir::ValueId Importer::lookup_at(size_t depth, const std::string& name) {
  {
    const auto& names = scopes_[depth].names;
    auto it = names.find(name);
    if (it != names.end()) return it->second;
  }
  if (depth == 0) return ir::kNoValue;
  const ir::ValueId outer = lookup_at(depth - 1, name);
  if (outer == ir::kNoValue) return ir::kNoValue;
  const ir::Value v = scopes_[depth - 1].graph->value(outer);
  Scope& scope = scopes_[depth];
  ir::ValueId inner;
  if (v.is_constant()) {
    inner = scope.graph->add_constant(v.name, v.spec, v.constant);
  } else {
    inner = scope.graph->add_value(v.name, v.spec);
    scope.graph->inputs().push_back(inner);
    scope.captured.push_back(name);
    scope.capture_inputs.push_back(inner);
  }
  scope.names[name] = inner;
  return inner;
}

void Importer::bind(const std::string& name, ir::ValueId value) { scopes_.back().names[name] = value; }

LoweredBody Importer::lower_body(const onnx::GraphProto& body, const std::vector<TensorSpec>& bound) {
  if (static_cast<size_t>(body.input_size()) != bound.size())
    throw CompileError(path_ + ": subgraph '" + body.name() + "' declares " +
                       std::to_string(body.input_size()) + " input(s), its node gives it " +
                       std::to_string(bound.size()));
  return lower_body(body, bound, [&](const std::vector<ir::ValueId>& own) {
    for (size_t i = 0; i < own.size(); ++i) bind(body.input(static_cast<int>(i)).name(), own[i]);
  });
}

LoweredBody Importer::lower_body(
    const onnx::GraphProto& body, const std::vector<TensorSpec>& own,
    const std::function<void(const std::vector<ir::ValueId>& own)>& bind_inputs) {
  LoweredBody out;
  out.graph = std::make_shared<ir::Graph>();
  scopes_.push_back(Scope{out.graph.get(), {}, {}, {}});
  struct Pop {
    std::vector<Scope>& scopes;
    ~Pop() { scopes.pop_back(); }
  } pop{scopes_};
  std::vector<ir::ValueId> own_values;
  for (size_t i = 0; i < own.size(); ++i) {
    const std::string name =
        i < static_cast<size_t>(body.input_size()) ? body.input(static_cast<int>(i)).name() : "input";
    const ir::ValueId v = out.graph->add_value(unique_name(name), own[i]);
    out.graph->inputs().push_back(v);
    own_values.push_back(v);
  }
  bind_inputs(own_values);
  out.outputs = lower_subgraph(body);
  out.captured = scopes_.back().captured;
  out.capture_inputs = scopes_.back().capture_inputs;
  return out;
}

std::vector<ir::ValueId> Importer::lower_subgraph(const onnx::GraphProto& g) {
  record_declared_types(g);
  bind_initializers(*this, g);
  for (int i = 0; i < g.node_size(); ++i) lower_node(*this, g.node(i), i, next_handle_++);
  std::vector<ir::ValueId> outputs;
  for (const auto& out : g.output()) {
    const ir::ValueId v = lookup(out.name());
    if (v == ir::kNoValue)
      throw CompileError(path_ + ": subgraph '" + g.name() + "': output '" + out.name() +
                         "' is never produced");
    outputs.push_back(v);
  }
  return outputs;
}

std::string Importer::unique_name(const std::string& base) {
  const int n = name_counts_[base]++;
  return n == 0 ? base : base + "_" + std::to_string(n);
}

void Importer::record_declared_types(const onnx::GraphProto& g) {
  auto record = [&](const onnx::ValueInfoProto& info) {
    if (!info.type().has_tensor_type() || !info.type().tensor_type().has_shape()) return;
    const auto& tt = info.type().tensor_type();
    TensorSpec spec;
    spec.dtype = dtype_from_onnx(tt.elem_type());
    if (spec.dtype == DType::Invalid || tt.shape().dim_size() > kMaxRank) return;
    for (const auto& dim : tt.shape().dim()) {
      if (!dim.has_dim_value() || dim.dim_value() < 0) return;
      spec.shape.push_back(dim.dim_value());
    }
    declared_[info.name()] = spec;
  };
  for (const auto& info : g.value_info()) record(info);
  for (const auto& info : g.output()) record(info);
}

std::optional<TensorSpec> Importer::declared_spec(const std::string& name) const {
  auto it = declared_.find(name);
  if (it == declared_.end()) return std::nullopt;
  return it->second;
}

ir::ExportedProgram import_onnx(const std::string& path, const ImportOptions& options) {
  register_all_lowerings();
  onnx::ModelProto model = load_model(path);
  const int64_t opset = default_opset(model);
  // Each lowering states the opsets it handles; before 7 only some do.
  if (opset < 1 || opset > 17)
    throw CompileError(path + ": opset " + std::to_string(opset) + " is not supported (supported: 1..17)");
  find_unsupported(model, path, opset);
  Importer imp(path, opset);
  imp.program().source_path = path;
  imp.program().opset = opset;
  imp.record_declared_types(model.graph());
  bind_and_release_initializers(imp, *model.mutable_graph());
  bind_inputs(imp, model.graph(), options);
  lower_nodes(imp, model.graph());
  bind_outputs(imp, model.graph());
  passes::eliminate_dead_code(imp.program().graph);
  Status s = ir::verify(imp.program().graph);
  if (!s.ok()) throw CompileError(path + ": internal error after import: " + s.message());
  return std::move(imp.program());
}

}  // namespace etc::onnx_import
