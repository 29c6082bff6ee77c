// Lowering of ONNX Slice, Gather and Pad. Constant index arguments (starts,
// ends, pads, ...) are normalized to the explicit, clamped edge attributes.
// Arguments computed at run time are passed to the edge op as inputs, which
// the kernel applies, with the output shape the model declares.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "compiler/import/onnx/ops/register_all.h"
#include "compiler/import/onnx/ops/shape_lowerings.h"
#include "runtime/kernels/portable/slice_bounds.h"

namespace etc::onnx_import {
namespace {

struct SliceArgs {
  std::vector<int64_t> starts, ends, axes, steps;
};

// Starts/ends/axes are attributes before opset 10, inputs (with steps) from 10.
SliceArgs slice_args(LowerContext& c) {
  SliceArgs a;
  if (c.opset() < 10) {
    a.starts = c.attr_ints("starts");
    a.ends = c.attr_ints("ends");
    a.axes = c.attr_ints("axes");
  } else {
    a.starts = c.constant_ints(1, "starts (the output shape depends on them)");
    a.ends = c.constant_ints(2, "ends (the output shape depends on them)");
    if (c.has_input(3)) a.axes = c.constant_ints(3, "axes (the output shape depends on them)");
    if (c.has_input(4)) a.steps = c.constant_ints(4, "steps (the output shape depends on them)");
  }
  if (a.axes.empty() && !(c.opset() >= 10 && c.has_input(3))) {
    a.axes.resize(a.starts.size());
    std::iota(a.axes.begin(), a.axes.end(), 0);
  }
  if (a.steps.empty() && !(c.opset() >= 10 && c.has_input(4))) a.steps.assign(a.starts.size(), 1);
  const size_t n = a.starts.size();
  if (a.ends.size() != n || a.axes.size() != n || a.steps.size() != n)
    c.fail("starts, ends, axes and steps have different lengths");
  return a;
}

// Slice with run-time starts/ends/axes/steps: the edge slice takes the ONNX
// inputs as they are (absent ones as absent inputs).
void lower_runtime_slice(LowerContext& c) {
  const std::vector<int64_t> dims = declared_dims(c, 0, "starts, ends, axes or steps", 1);
  std::vector<ir::ValueId> inputs = {c.input(0), c.input(1), c.input(2)};
  for (int i = 3; i <= 4; ++i) inputs.push_back(c.has_input(i) ? c.input(i) : ir::kNoValue);
  while (inputs.back() == ir::kNoValue) inputs.pop_back();
  c.set_output(0, c.emit1(EdgeOp::Slice, inputs, {{"shape", dims}}));
}

void lower_slice(LowerContext& c) {
  if (c.opset() >= 10)
    for (int i = 1; i <= 4; ++i)
      if (is_runtime_arg(c, i)) return lower_runtime_slice(c);
  const Shape in = c.input_spec(0).shape;
  const SliceArgs a = slice_args(c);
  std::vector<int64_t> starts(in.rank(), 0), ends = dims_of(in), steps(in.rank(), 1);
  std::vector<bool> seen(in.rank(), false);
  for (size_t k = 0; k < a.starts.size(); ++k) {
    const int64_t d = c.normalize_axis(a.axes[k], in.rank(), "axes entry");
    if (seen[d]) c.fail("axis " + std::to_string(a.axes[k]) + " is sliced twice");
    seen[d] = true;
    const int64_t dim = in[static_cast<int>(d)], step = a.steps[k];
    if (step == 0) c.fail("step of axis " + std::to_string(a.axes[k]) + " is 0");
    const SliceBounds b = resolve_slice_bounds(dim, a.starts[k], a.ends[k], step);
    starts[d] = b.start;
    ends[d] = b.end;
    steps[d] = b.step;
  }
  if (starts == std::vector<int64_t>(in.rank(), 0) && ends == dims_of(in) &&
      steps == std::vector<int64_t>(in.rank(), 1))
    return c.set_output(0, c.input(0));
  c.set_output(0,
               c.emit1(EdgeOp::Slice, {c.input(0)}, {{"starts", starts}, {"ends", ends}, {"steps", steps}}));
}

void lower_gather(LowerContext& c) {
  const Shape data = c.input_spec(0).shape;
  const int64_t axis = c.normalize_axis(c.attr_int("axis", 0), data.rank());
  const ir::ValueId indices = c.input(1);
  if (c.is_constant(indices)) {
    // Known indices are checked here so a bad model fails at compile time.
    const int64_t dim = data[static_cast<int>(axis)];
    for (int64_t i : c.constant_ints(1, "indices"))
      if (i < -dim || i >= dim)
        c.fail("index " + std::to_string(i) + " is out of range for axis " + std::to_string(axis) + " of " +
               data.str());
  }
  c.set_output(0, c.emit1(EdgeOp::Gather, {c.input(0), indices}, {{"axis", axis}}));
}

// Pad's fill value as the edge attribute (float); integer values must be exact.
float pad_value(LowerContext& c) {
  if (c.opset() < 11) return c.attr_float("value", 0.0f);
  if (!c.has_input(2)) return 0.0f;
  const std::vector<float> v = c.constant_floats(2, "constant_value");
  if (v.size() != 1) c.fail("constant_value must hold one element");
  const DType t = c.input_spec(2).dtype;
  if (t != DType::Float32 && t != DType::Float64 && t != DType::Bool) {
    const int64_t exact = c.constant_int(2, "constant_value");
    if (static_cast<double>(v[0]) != static_cast<double>(exact))
      c.fail("constant_value " + std::to_string(exact) +
             " is not exactly representable as a float attribute");
  }
  return v[0];
}

std::string pad_mode(LowerContext& c) {
  const std::string mode = c.attr_string("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge")
    c.fail("mode '" + mode + "' is not supported (supported: constant, reflect, edge)");
  return mode;
}

// Pad whose pads (input 1) or constant_value (input 2) is computed at run
// time: run-time pads take the declared output shape; a run-time value is
// passed as it is (the kernel requires x's dtype).
void lower_runtime_pad(LowerContext& c, bool runtime_pads, bool runtime_value) {
  const std::string mode = pad_mode(c);
  ir::Attrs attrs = {{"mode", mode}, {"value", runtime_value ? 0.0f : pad_value(c)}};
  std::vector<ir::ValueId> inputs = {c.input(0), ir::kNoValue};
  if (runtime_pads) {
    attrs.set("shape", declared_dims(c, 0, "pads", 1));
    inputs[1] = c.input(1);
  } else {
    const std::vector<int64_t> pads = c.constant_ints(1, "pads");
    if (static_cast<int>(pads.size()) != 2 * c.input_spec(0).shape.rank())
      c.fail("pads has " + std::to_string(pads.size()) + " entries for rank " +
             std::to_string(c.input_spec(0).shape.rank()));
    attrs.set("pads", pads);
  }
  if (runtime_value) {
    if (c.input_spec(2).dtype != c.input_spec(0).dtype)
      c.fail("constant_value has a different dtype than the data");
    inputs.push_back(c.input(2));
  }
  c.set_output(0, c.emit1(EdgeOp::Pad, inputs, std::move(attrs)));
}

void lower_pad(LowerContext& c) {
  const bool runtime_pads = c.opset() >= 11 && is_runtime_arg(c, 1);
  const bool runtime_value = c.opset() >= 11 && is_runtime_arg(c, 2);
  if (runtime_pads || runtime_value) return lower_runtime_pad(c, runtime_pads, runtime_value);
  const Shape in = c.input_spec(0).shape;
  const std::vector<int64_t> pads =
      c.opset() < 11 ? c.attr_ints("pads") : c.constant_ints(1, "pads (the output shape depends on them)");
  const std::string mode = pad_mode(c);
  if (static_cast<int>(pads.size()) != 2 * in.rank())
    c.fail("pads has " + std::to_string(pads.size()) + " entries for rank " + std::to_string(in.rank()));
  const float value = pad_value(c);
  if (std::all_of(pads.begin(), pads.end(), [](int64_t p) { return p == 0; }))
    return c.set_output(0, c.input(0));
  for (int d = 0; d < in.rank(); ++d)
    if (mode != "constant" && in[d] == 0 && (pads[d] != 0 || pads[d + in.rank()] != 0))
      c.fail("mode '" + mode + "' cannot pad dim " + std::to_string(d) + " of " + in.str() + ": it is empty");
  c.set_output(0, c.emit1(EdgeOp::Pad, {c.input(0)}, {{"pads", pads}, {"mode", mode}, {"value", value}}));
}

}  // namespace

void register_shape_slice_lowerings() {
  register_lowering("Slice", {lower_slice, 1});
  register_lowering("Gather", {lower_gather, 1});
  register_lowering("Pad", {lower_pad, 2});
}

}  // namespace etc::onnx_import
