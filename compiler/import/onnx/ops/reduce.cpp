// Lowering of ONNX reductions (ReduceMean, ReduceSum, ..., ReduceL1 and the log
// reductions as compositions) and ArgMax / ArgMin.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "compiler/import/onnx/lower_context.h"
#include "compiler/import/onnx/ops/register_all.h"

namespace etc::onnx_import {
namespace {

// The axes to reduce, normalized and sorted, or all axes. Before opset 13 (18
// for all but ReduceSum) they are an attribute; after, an optional input. An
// empty axes list with noop_with_empty_axes=1 reduces nothing.
std::vector<int64_t> reduce_axes(LowerContext& c, bool axes_input) {
  const int64_t rank = c.input_spec(0).shape.rank();
  std::vector<int64_t> raw;
  if (axes_input) {
    if (c.has_input(1)) {
      // A run-time axes tensor whose static shape says it is empty is "no axes".
      if (c.is_constant(c.input(1))) raw = c.constant_ints(1, "axes");
    }
  } else {
    raw = c.attr_ints("axes");
  }
  if (raw.empty()) {
    if (axes_input && c.attr_int("noop_with_empty_axes", 0) != 0) return {};
    std::vector<int64_t> all(static_cast<size_t>(rank));
    for (int64_t i = 0; i < rank; ++i) all[static_cast<size_t>(i)] = i;
    return all;
  }
  for (int64_t& a : raw) a = c.normalize_axis(a, rank, "axes entry");
  std::sort(raw.begin(), raw.end());
  if (std::adjacent_find(raw.begin(), raw.end()) != raw.end()) c.fail("axes has a repeated axis");
  return raw;
}

// Axes computed by the model: the output shape is the declared one, and the
// kernel checks at run time that the axes give it.
void lower_runtime_axes(LowerContext& c, EdgeOp op, int64_t keepdims) {
  const std::optional<TensorSpec> declared = c.declared_output_spec(0);
  if (!declared) c.fail("axes (input 1) is not a compile-time constant and the output type is undeclared");
  if (declared->dtype != c.input_spec(0).dtype)
    c.fail("declared output type " + std::string(dtype_name(declared->dtype)) +
           " differs from the input type " + dtype_name(c.input_spec(0).dtype));
  const std::vector<int64_t> shape(declared->shape.begin(), declared->shape.end());
  c.set_output(0, c.emit1(op, {c.input(0), c.input(1)},
                          {{"shape", shape},
                           {"keepdims", keepdims},
                           {"noop_with_empty_axes", c.attr_int("noop_with_empty_axes", 0)}}));
}

bool has_runtime_axes(const LowerContext& c) {
  return c.has_input(1) && !c.is_constant(c.input(1)) && c.input_spec(1).shape.numel() != 0;
}

// axes_input_from: the first opset where axes is an input.
Lowering reduce(EdgeOp op, int64_t axes_input_from) {
  return {[op, axes_input_from](LowerContext& c) {
            const bool axes_input = c.opset() >= axes_input_from;
            const int64_t keepdims = c.attr_int("keepdims", 1);
            if (axes_input && has_runtime_axes(c)) {
              lower_runtime_axes(c, op, keepdims);
              return;
            }
            const std::vector<int64_t> axes = reduce_axes(c, axes_input);
            c.set_output(0, c.emit1(op, {c.input(0)}, {{"axes", axes}, {"keepdims", keepdims}}));
          },
          1, 17};
}

// ReduceL1, ReduceLogSum and ReduceLogSumExp as their spec functions:
// ReduceSum of |x|, Log of ReduceSum, and max + Log(ReduceSum(Exp(x - max)))
// (the max taken out so Exp cannot overflow). Constant axes only.
enum class Composite { kL1, kLogSum, kLogSumExp };

Lowering reduce_composite(Composite kind) {
  return {
      [kind](LowerContext& c) {
        const bool axes_input = c.opset() >= 18;
        if (axes_input && has_runtime_axes(c)) c.fail("axes (input 1) must be a compile-time constant");
        const int64_t keepdims = c.attr_int("keepdims", 1);
        const std::vector<int64_t> axes = reduce_axes(c, axes_input);
        const ir::Attrs attrs{{"axes", axes}, {"keepdims", keepdims}};
        const ir::ValueId x = c.input(0);
        if (kind == Composite::kL1) {
          c.set_output(0, c.emit1(EdgeOp::ReduceSum, {c.emit1(EdgeOp::Abs, {x})}, attrs));
          return;
        }
        const DType t = c.input_spec(0).dtype;
        if (t != DType::Float32 && t != DType::Float64)
          c.fail(std::string("input must be float32 or float64, got ") + dtype_name(t));
        if (kind == Composite::kLogSum) {
          c.set_output(0, c.emit1(EdgeOp::Log, {c.emit1(EdgeOp::ReduceSum, {x}, attrs)}));
          return;
        }
        const ir::ValueId peak = c.emit1(EdgeOp::ReduceMax, {x}, {{"axes", axes}, {"keepdims", int64_t{1}}});
        const ir::ValueId shifted = c.emit1(EdgeOp::Exp, {c.emit1(EdgeOp::Sub, {x, peak})});
        const ir::ValueId log_sum = c.emit1(EdgeOp::Log, {c.emit1(EdgeOp::ReduceSum, {shifted}, attrs)});
        const ir::ValueId top = keepdims ? peak : c.emit1(EdgeOp::ReduceMax, {x}, attrs);
        c.set_output(0, c.emit1(EdgeOp::Add, {log_sum, top}));
      },
      1, 17};
}

Lowering arg(EdgeOp op) {
  return {[op](LowerContext& c) {
            const int64_t rank = c.input_spec(0).shape.rank();
            const int64_t axis = c.normalize_axis(c.attr_int("axis", 0), rank);
            if (c.input_spec(0).shape[static_cast<int>(axis)] == 0)
              c.fail("the reduced axis " + std::to_string(axis) + " is empty");
            c.set_output(0, c.emit1(op, {c.input(0)},
                                    {{"axis", axis},
                                     {"keepdims", c.attr_int("keepdims", 1)},
                                     {"select_last_index", c.attr_int("select_last_index", 0)}}));
          },
          1, 17};
}

}  // namespace

void register_reduce_lowerings() {
  register_lowering("ReduceMean", reduce(EdgeOp::ReduceMean, 18));
  register_lowering("ReduceSum", reduce(EdgeOp::ReduceSum, 13));
  register_lowering("ReduceMax", reduce(EdgeOp::ReduceMax, 18));
  register_lowering("ReduceMin", reduce(EdgeOp::ReduceMin, 18));
  register_lowering("ReduceProd", reduce(EdgeOp::ReduceProd, 18));
  register_lowering("ReduceL2", reduce(EdgeOp::ReduceL2, 18));
  register_lowering("ReduceSumSquare", reduce(EdgeOp::ReduceSumSquare, 18));
  register_lowering("ReduceL1", reduce_composite(Composite::kL1));
  register_lowering("ReduceLogSum", reduce_composite(Composite::kLogSum));
  register_lowering("ReduceLogSumExp", reduce_composite(Composite::kLogSumExp));
  register_lowering("ArgMax", arg(EdgeOp::ArgMax));
  register_lowering("ArgMin", arg(EdgeOp::ArgMin));
}

}  // namespace etc::onnx_import
