// ONNX control flow.
//   If    a compile-time constant condition (a flag an exporter traced in, or
//         one constant folding computed) lowers to the nodes of its taken
//         branch; the other is dropped. A condition known only at run time
//         lowers to an edge `if` node owning both branches as subgraphs.
//   Loop  an edge `loop` node owning its body. Carried values keep one type
//         across iterations; scan outputs need a trip count fixed at compile
//         time and a condition that stays true, so their length is known.
//   Scan  (opset 9+) a `loop` over its scan inputs' length.
// Bodies read enclosing values by name; the importer turns each such read
// into an explicit input of the body (edge_ops.def has the conventions).

#include <algorithm>

#include "compiler/common/compile_error.h"
#include "compiler/import/onnx/importer.h"
#include "compiler/import/onnx/lower_context.h"
#include "compiler/import/onnx/ops/register_all.h"

namespace etc::onnx_import {
namespace {

bool is_one_value(const TensorSpec& s, DType dtype) { return s.dtype == dtype && s.shape.numel() == 1; }

const onnx::GraphProto& required_graph(LowerContext& ctx, const char* name) {
  const onnx::GraphProto* g = ctx.attr_graph(name);
  if (g == nullptr) ctx.fail(std::string("attribute ") + name + " is missing");
  return *g;
}

// Makes every body take the union of the names the bodies capture, in one
// order, after their first `bound` inputs; returns the outer values for them.
std::vector<ir::ValueId> unify_captures(LowerContext& ctx, std::vector<LoweredBody*> bodies, size_t bound) {
  std::vector<std::string> names;
  for (const LoweredBody* b : bodies)
    for (const std::string& n : b->captured)
      if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  std::vector<ir::ValueId> outer;
  for (const std::string& n : names) outer.push_back(ctx.lookup(n));
  for (LoweredBody* b : bodies) {
    std::vector<ir::ValueId>& inputs = b->graph->inputs();
    inputs.resize(bound);
    for (size_t k = 0; k < names.size(); ++k) {
      auto it = std::find(b->captured.begin(), b->captured.end(), names[k]);
      if (it != b->captured.end()) {
        inputs.push_back(b->capture_inputs[static_cast<size_t>(it - b->captured.begin())]);
      } else {
        const ir::Value& v = ctx.graph().value(outer[k]);
        inputs.push_back(b->graph->add_value(v.name, v.spec));
      }
    }
  }
  return outer;
}

void check_outputs_produced(LowerContext& ctx, const LoweredBody& body, const char* what) {
  for (ir::ValueId v : body.outputs)
    if (v == ir::kNoValue) ctx.fail(std::string(what) + " has an output that is never produced");
}

// Makes the body's outputs its graph's outputs. One that is an input, a
// constant or an earlier output gets a copy of its own, as the main graph's
// outputs do, so every body output is a value the body writes.
void set_body_outputs(LowerContext& ctx, LoweredBody& body) {
  ir::Graph& g = *body.graph;
  std::vector<ir::ValueId> outs;
  for (ir::ValueId v : body.outputs) {
    const bool is_input = std::find(g.inputs().begin(), g.inputs().end(), v) != g.inputs().end();
    if (is_input || g.value(v).is_constant() || std::find(outs.begin(), outs.end(), v) != outs.end()) {
      const TensorSpec spec = g.value(v).spec;
      const ir::ValueId copy = g.add_value(g.value(v).name + ":copy", spec);
      g.add_node(EdgeOp::Reshape, {v}, {copy},
                 ir::Attrs{{"shape", std::vector<int64_t>(spec.shape.begin(), spec.shape.end())}},
                 ctx.node_meta());
      v = copy;
    }
    outs.push_back(v);
  }
  g.outputs() = outs;
}

LoweredBody lower_branch(LowerContext& ctx, const onnx::GraphProto& proto, std::string& error) {
  try {
    return ctx.lower_body(proto, {});
  } catch (const CompileError& e) {
    error = e.what();
    return LoweredBody{std::make_shared<ir::Graph>(), {}, {}, {}};
  }
}

// The outputs of a branch that fails at run time: a zero expanded to the
// other branch's types (never run: the If stops first).
void stub_outputs(LowerContext& ctx, LoweredBody& failed, const LoweredBody& other) {
  ir::Graph& g = *failed.graph;
  for (ir::ValueId v : other.outputs) {
    const TensorSpec spec = other.graph->value(v).spec;
    const std::string name = other.graph->value(v).name + ":unreachable";
    auto zero = std::make_shared<const std::vector<uint8_t>>(dtype_size(spec.dtype), 0);
    const ir::ValueId scalar = g.add_constant(name + ":zero", TensorSpec{spec.dtype, Shape{}}, zero);
    const ir::ValueId out = g.add_value(name, spec);
    g.add_node(EdgeOp::Expand, {scalar}, {out},
               ir::Attrs{{"shape", std::vector<int64_t>(spec.shape.begin(), spec.shape.end())}},
               ctx.node_meta());
    failed.outputs.push_back(out);
  }
}

void lower_runtime_if(LowerContext& ctx) {
  const TensorSpec cond = ctx.input_spec(0);
  if (!is_one_value(cond, DType::Bool)) ctx.fail("the condition must be one bool, it is " + cond.str());
  const onnx::GraphProto& then_proto = required_graph(ctx, "then_branch");
  const onnx::GraphProto& else_proto = required_graph(ctx, "else_branch");
  for (auto [name, proto] : {std::pair{"then_branch", &then_proto}, std::pair{"else_branch", &else_proto}})
    if (proto->output_size() != ctx.num_outputs())
      ctx.fail(std::string(name) + " has " + std::to_string(proto->output_size()) + " output(s), the If " +
               std::to_string(ctx.num_outputs()));
  // A branch that cannot compile at these shapes (one written for another
  // input size, say) compiles to a run-time error, as it would fail in any
  // runtime; the other branch runs.
  std::string then_error, else_error;
  LoweredBody then_body = lower_branch(ctx, then_proto, then_error);
  LoweredBody else_body = lower_branch(ctx, else_proto, else_error);
  if (!then_error.empty() && !else_error.empty())
    ctx.fail("neither branch compiles: then_branch: " + then_error + "; else_branch: " + else_error);
  if (!then_error.empty()) stub_outputs(ctx, then_body, else_body);
  if (!else_error.empty()) stub_outputs(ctx, else_body, then_body);
  check_outputs_produced(ctx, then_body, "then_branch");
  check_outputs_produced(ctx, else_body, "else_branch");
  std::vector<ir::ValueId> inputs{ctx.input(0)};
  const std::vector<ir::ValueId> captured = unify_captures(ctx, {&then_body, &else_body}, 0);
  inputs.insert(inputs.end(), captured.begin(), captured.end());
  std::vector<TensorSpec> specs;
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    const TensorSpec a = then_body.graph->value(then_body.outputs[static_cast<size_t>(i)]).spec;
    const TensorSpec b = else_body.graph->value(else_body.outputs[static_cast<size_t>(i)]).spec;
    if (!(a == b))
      ctx.fail("output " + std::to_string(i) + " is " + a.str() + " in then_branch but " + b.str() +
               " in else_branch; branches whose outputs differ in type or shape are not supported");
    specs.push_back(a);
  }
  set_body_outputs(ctx, then_body);
  set_body_outputs(ctx, else_body);
  ir::Attrs attrs;
  if (!then_error.empty()) attrs.set("then_error", then_error);
  if (!else_error.empty()) attrs.set("else_error", else_error);
  const std::vector<ir::ValueId> outs = ctx.emit_control(
      EdgeOp::If, std::move(inputs), specs, std::move(attrs), {then_body.graph, else_body.graph});
  for (int i = 0; i < ctx.num_outputs(); ++i) ctx.set_output(i, outs[static_cast<size_t>(i)]);
}

void lower_if(LowerContext& ctx) {
  if (!ctx.is_constant(ctx.input(0))) return lower_runtime_if(ctx);
  const bool taken = ctx.constant_int(0, "condition") != 0;
  const char* name = taken ? "then_branch" : "else_branch";
  const onnx::GraphProto& branch = required_graph(ctx, name);
  if (branch.output_size() != ctx.num_outputs())
    ctx.fail(std::string(name) + " has " + std::to_string(branch.output_size()) + " output(s), the If " +
             std::to_string(ctx.num_outputs()));
  const std::vector<ir::ValueId> outputs = ctx.lower_subgraph(branch);
  for (int i = 0; i < ctx.num_outputs(); ++i) ctx.set_output(i, outputs[static_cast<size_t>(i)]);
}

// Whether the body's condition output is always true: the condition input
// passed through (with a true or absent initial condition), or a constant true.
bool condition_stays_true(LowerContext& ctx, const LoweredBody& body) {
  const ir::Graph& g = *body.graph;
  const ir::ValueId out = body.outputs[0];
  const bool initial_true =
      !ctx.has_input(1) || (ctx.is_constant(ctx.input(1)) && ctx.constant_int(1, "cond") != 0);
  if (out == g.inputs()[1]) return initial_true;
  const ir::Value& v = g.value(out);
  return v.is_constant() && v.spec.dtype == DType::Bool && v.constant->size() == 1 && (*v.constant)[0] != 0;
}

// The loop node's output types: the carried values' (which must leave the
// body as they entered it: `entering`), then each scan output stacked
// `trips` times on a new first axis.
std::vector<TensorSpec> loop_output_specs(LowerContext& ctx, const LoweredBody& body,
                                          const std::vector<TensorSpec>& entering, int scans, int64_t trips,
                                          const char* carried_word) {
  const ir::Graph& g = *body.graph;
  std::vector<TensorSpec> specs;
  for (size_t i = 0; i < entering.size(); ++i) {
    const TensorSpec out = g.value(body.outputs[1 + i]).spec;
    if (!(out == entering[i]))
      ctx.fail(std::string(carried_word) + " " + std::to_string(i) + " enters the body as " +
               entering[i].str() + " and leaves it as " + out.str() + "; a " + carried_word +
               " that changes type or shape across iterations is not supported");
    specs.push_back(out);
  }
  for (int i = 0; i < scans; ++i) {
    const TensorSpec s = g.value(body.outputs[1 + entering.size() + static_cast<size_t>(i)]).spec;
    if (s.shape.rank() >= kMaxRank)
      ctx.fail("scan output " + std::to_string(i) + " would have rank above " + std::to_string(kMaxRank));
    TensorSpec stacked{s.dtype, Shape{trips}};
    for (int64_t d : s.shape) stacked.shape.push_back(d);
    specs.push_back(stacked);
  }
  return specs;
}

void lower_loop(LowerContext& ctx) {
  const onnx::GraphProto& proto = required_graph(ctx, "body");
  const int carried = ctx.num_inputs() - 2;
  if (carried < 0) ctx.fail("needs the trip count and condition inputs (either may be empty)");
  const int scans = ctx.num_outputs() - carried;
  if (scans < 0)
    ctx.fail("has " + std::to_string(carried) + " carried value(s) but only " +
             std::to_string(ctx.num_outputs()) + " output(s)");
  if (proto.output_size() != 1 + carried + scans)
    ctx.fail("its body has " + std::to_string(proto.output_size()) + " output(s); a Loop with " +
             std::to_string(carried) + " carried value(s) and " + std::to_string(ctx.num_outputs()) +
             " output(s) needs " + std::to_string(1 + ctx.num_outputs()));
  if (ctx.has_input(0) && !is_one_value(ctx.input_spec(0), DType::Int64))
    ctx.fail("the trip count must be one int64, it is " + ctx.input_spec(0).str());
  if (ctx.has_input(1) && !is_one_value(ctx.input_spec(1), DType::Bool))
    ctx.fail("the condition must be one bool, it is " + ctx.input_spec(1).str());
  std::vector<TensorSpec> bound{TensorSpec{DType::Int64, Shape{}}, TensorSpec{DType::Bool, Shape{}}};
  std::vector<ir::ValueId> inputs{ctx.has_input(0) ? ctx.input(0) : ir::kNoValue,
                                  ctx.has_input(1) ? ctx.input(1) : ir::kNoValue};
  for (int i = 0; i < carried; ++i) {
    if (!ctx.has_input(2 + i)) ctx.fail("carried value " + std::to_string(i) + " has no initial value");
    inputs.push_back(ctx.input(2 + i));
    bound.push_back(ctx.input_spec(2 + i));
  }
  LoweredBody body = ctx.lower_body(proto, bound);
  check_outputs_produced(ctx, body, "the body");
  const ir::Graph& g = *body.graph;
  if (!is_one_value(g.value(body.outputs[0]).spec, DType::Bool))
    ctx.fail("the body's condition output must be one bool, it is " + g.value(body.outputs[0]).spec.str());
  int64_t trips = 0;
  if (scans > 0) {
    if (!ctx.has_input(0) || !ctx.is_constant(ctx.input(0)) || !condition_stays_true(ctx, body))
      ctx.fail(
          "a Loop with scan outputs needs a compile-time constant trip count and a condition that stays "
          "true: otherwise their length is known only at run time, which is not supported");
    trips = ctx.constant_int(0, "trip count");
    if (trips < 0) ctx.fail("the trip count is negative (" + std::to_string(trips) + ")");
  }
  const std::vector<TensorSpec> specs = loop_output_specs(
      ctx, body, std::vector<TensorSpec>(bound.begin() + 2, bound.end()), scans, trips, "carried value");
  const std::vector<ir::ValueId> captured = unify_captures(ctx, {&body}, bound.size());
  inputs.insert(inputs.end(), captured.begin(), captured.end());
  set_body_outputs(ctx, body);
  const std::vector<ir::ValueId> outs = ctx.emit_control(
      EdgeOp::Loop, std::move(inputs), specs, ir::Attrs{{"carried", int64_t{carried}}}, {body.graph});
  for (int i = 0; i < ctx.num_outputs(); ++i) ctx.set_output(i, outs[static_cast<size_t>(i)]);
}

// Scan (opset 9+) as a loop over the scan inputs' length: the body takes
// slice i of each scan input (Gather at i, or at length-1-i in reverse),
// carries the state, and its scan outputs are stacked, then reversed or
// moved to their axis after the loop.
void lower_scan(LowerContext& ctx) {
  const onnx::GraphProto& proto = required_graph(ctx, "body");
  const int64_t m = ctx.attr_int("num_scan_inputs");
  const int n = ctx.num_inputs() - static_cast<int>(m);
  const int k = ctx.num_outputs() - n;
  if (m < 1 || n < 0)
    ctx.fail("num_scan_inputs " + std::to_string(m) + " does not fit its " +
             std::to_string(ctx.num_inputs()) + " inputs");
  if (k < 0)
    ctx.fail("has " + std::to_string(n) + " state value(s) but " + std::to_string(ctx.num_outputs()) +
             " output(s)");
  if (proto.input_size() != n + m || proto.output_size() != n + k)
    ctx.fail("its body takes " + std::to_string(proto.input_size()) + " input(s) and gives " +
             std::to_string(proto.output_size()) + "; the Scan needs " + std::to_string(n + m) + " and " +
             std::to_string(n + k));
  const std::vector<int64_t> in_axes = ctx.attr_ints("scan_input_axes", std::vector<int64_t>(m, 0));
  const std::vector<int64_t> in_dirs = ctx.attr_ints("scan_input_directions", std::vector<int64_t>(m, 0));
  const std::vector<int64_t> out_axes = ctx.attr_ints("scan_output_axes", std::vector<int64_t>(k, 0));
  const std::vector<int64_t> out_dirs = ctx.attr_ints("scan_output_directions", std::vector<int64_t>(k, 0));
  if (in_axes.size() != static_cast<size_t>(m) || in_dirs.size() != static_cast<size_t>(m) ||
      out_axes.size() != static_cast<size_t>(k) || out_dirs.size() != static_cast<size_t>(k))
    ctx.fail(
        "scan_input_axes/directions need one value per scan input, scan_output_axes/directions one per scan "
        "output");
  int64_t trips = -1;
  std::vector<int64_t> axes;
  for (int j = 0; j < m; ++j) {
    const TensorSpec spec = ctx.input_spec(n + j);
    const int64_t axis =
        ctx.normalize_axis(in_axes[static_cast<size_t>(j)], spec.shape.rank(), "scan_input_axes");
    if (trips >= 0 && spec.shape[static_cast<int>(axis)] != trips)
      ctx.fail("scan input " + std::to_string(j) + " has " +
               std::to_string(spec.shape[static_cast<int>(axis)]) +
               " steps along its axis, scan input 0 has " + std::to_string(trips));
    trips = spec.shape[static_cast<int>(axis)];
    axes.push_back(axis);
  }
  std::vector<TensorSpec> own{TensorSpec{DType::Int64, Shape{}}, TensorSpec{DType::Bool, Shape{}}};
  for (int i = 0; i < n; ++i) own.push_back(ctx.input_spec(i));
  LoweredBody body = ctx.lower_body(proto, own, [&](const std::vector<ir::ValueId>& values) {
    for (int i = 0; i < n; ++i) ctx.bind(proto.input(i).name(), values[static_cast<size_t>(2 + i)]);
    for (int j = 0; j < m; ++j) {
      ir::ValueId index = values[0];
      if (in_dirs[static_cast<size_t>(j)] != 0)
        index = ctx.emit1(EdgeOp::Sub, {ctx.scalar(DType::Int64, trips - 1), index});
      const ir::ValueId full = ctx.lookup(ctx.node().input(n + j));
      ctx.bind(proto.input(n + j).name(),
               ctx.emit1(EdgeOp::Gather, {full, index}, ir::Attrs{{"axis", axes[static_cast<size_t>(j)]}}));
    }
  });
  check_outputs_produced(ctx, body, "the body");
  body.outputs.insert(body.outputs.begin(),
                      body.graph->add_constant("scan:continue", TensorSpec{DType::Bool, Shape{}},
                                               std::make_shared<const std::vector<uint8_t>>(1, 1)));
  const std::vector<TensorSpec> specs =
      loop_output_specs(ctx, body, std::vector<TensorSpec>(own.begin() + 2, own.end()), k, trips, "state");
  std::vector<ir::ValueId> inputs{ctx.scalar(DType::Int64, static_cast<double>(trips)), ir::kNoValue};
  for (int i = 0; i < n; ++i) inputs.push_back(ctx.input(i));
  const std::vector<ir::ValueId> captured = unify_captures(ctx, {&body}, own.size());
  inputs.insert(inputs.end(), captured.begin(), captured.end());
  set_body_outputs(ctx, body);
  std::vector<ir::ValueId> outs = ctx.emit_control(EdgeOp::Loop, std::move(inputs), specs,
                                                   ir::Attrs{{"carried", int64_t{n}}}, {body.graph});
  for (int i = 0; i < k; ++i) {
    ir::ValueId& v = outs[static_cast<size_t>(n + i)];
    const int rank = ctx.spec(v).shape.rank();
    if (out_dirs[static_cast<size_t>(i)] != 0) {
      std::vector<int64_t> reversed;
      for (int64_t t = trips - 1; t >= 0; --t) reversed.push_back(t);
      v = ctx.emit1(EdgeOp::Gather, {v, ctx.constant_ints(reversed, Shape{trips})},
                    ir::Attrs{{"axis", int64_t{0}}});
    }
    const int64_t axis = ctx.normalize_axis(out_axes[static_cast<size_t>(i)], rank, "scan_output_axes");
    if (axis != 0) {
      std::vector<int64_t> perm;
      for (int d = 0; d < rank; ++d) perm.push_back(d < axis ? d + 1 : d == axis ? 0 : d);
      v = ctx.emit1(EdgeOp::Transpose, {v}, ir::Attrs{{"perm", perm}});
    }
  }
  for (int i = 0; i < ctx.num_outputs(); ++i) ctx.set_output(i, outs[static_cast<size_t>(i)]);
}

}  // namespace

void register_control_lowerings() {
  register_lowering("If", {lower_if});
  register_lowering("Loop", {lower_loop});
  register_lowering("Scan", {lower_scan, 9});
}

}  // namespace etc::onnx_import
