// Lowering of ONNX elementwise math, comparison, logical ops, Where and Cast.
#include <cmath>
#include <limits>

#include "compiler/import/onnx/lower_context.h"
#include "compiler/import/onnx/ops/register_all.h"
#include "compiler/import/onnx/ops/shape_lowerings.h"
#include "compiler/import/onnx/tensor_proto.h"

namespace etc::onnx_import {
namespace {

// Before opset 7, binary ops broadcast only when `broadcast`=1, aligning B
// with A at `axis` (default: trailing). Reshaping B so its dims end where A's
// aligned dims end turns that into numpy broadcasting.
ir::ValueId legacy_broadcast_operand(LowerContext& c, ir::ValueId b) {
  const int64_t rank_a = c.input_spec(0).shape.rank();
  const Shape sb = c.spec(b).shape;
  if (c.attr_int("broadcast", 0) == 0) {
    if (c.input_spec(0).shape != sb)
      c.fail("shapes " + c.input_spec(0).shape.str() + " and " + sb.str() + " differ and broadcast=0");
    return b;
  }
  if (!c.has_attr("axis")) return b;
  const int64_t axis = c.normalize_axis(c.attr_int("axis"), rank_a);
  if (axis + sb.rank() > rank_a) c.fail("broadcast axis " + std::to_string(axis) + " leaves no room for B");
  std::vector<int64_t> shape(sb.begin(), sb.end());
  shape.resize(static_cast<size_t>(rank_a - axis), 1);
  return c.emit1(EdgeOp::Reshape, {b}, {{"shape", shape}});
}

Lowering binary(EdgeOp op) {
  return {[op](LowerContext& c) {
            ir::ValueId b = c.input(1);
            if (c.opset() < 7) b = legacy_broadcast_operand(c, b);
            c.set_output(0, c.emit1(op, {c.input(0), b}));
          },
          1};
}

Lowering unary(EdgeOp op) {
  return {[op](LowerContext& c) { c.set_output(0, c.emit1(op, {c.input(0)})); }, 1};
}

// Min, Max, Sum, Mean: variadic with broadcasting, folded left to right.
Lowering variadic(EdgeOp op, bool mean) {
  return {[op, mean](LowerContext& c) {
            ir::ValueId acc = c.input(0);
            for (int i = 1; i < c.num_inputs(); ++i) acc = c.emit1(op, {acc, c.input(i)});
            if (mean && c.num_inputs() > 1)
              acc = c.emit1(EdgeOp::Div, {acc, c.scalar(c.spec(acc).dtype, c.num_inputs())});
            if (c.num_inputs() == 1)
              acc = c.emit1(EdgeOp::Reshape, {acc}, {{"shape", dims_of(c.spec(acc).shape)}});
            c.set_output(0, acc);
          },
          1};
}

void lower_clip(LowerContext& c) {
  const ir::ValueId x = c.input(0);
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  if (c.opset() < 11) {
    lo = c.attr_float("min", -std::numeric_limits<float>::max());
    hi = c.attr_float("max", std::numeric_limits<float>::max());
    c.set_output(
        0, c.emit1(EdgeOp::Clip, {x}, {{"min", static_cast<float>(lo)}, {"max", static_cast<float>(hi)}}));
    return;
  }
  // Opset 11+: min and max are optional inputs; non-constant bounds lower to max/min.
  ir::ValueId y = x;
  ir::ValueId min_v = c.has_input(1) ? c.input(1) : ir::kNoValue;
  ir::ValueId max_v = c.has_input(2) ? c.input(2) : ir::kNoValue;
  const bool const_bounds =
      (min_v == ir::kNoValue || c.is_constant(min_v)) && (max_v == ir::kNoValue || c.is_constant(max_v));
  if (const_bounds) {
    if (min_v != ir::kNoValue) lo = c.constant_float(1, "min");
    if (max_v != ir::kNoValue) hi = c.constant_float(2, "max");
    c.set_output(
        0, c.emit1(EdgeOp::Clip, {x}, {{"min", static_cast<float>(lo)}, {"max", static_cast<float>(hi)}}));
    return;
  }
  if (min_v != ir::kNoValue) y = c.emit1(EdgeOp::Max, {y, min_v});
  if (max_v != ir::kNoValue) y = c.emit1(EdgeOp::Min, {y, max_v});
  if (y == x) y = c.emit1(EdgeOp::Reshape, {x}, {{"shape", dims_of(c.spec(x).shape)}});
  c.set_output(0, y);
}

void lower_cast(LowerContext& c) {
  const int64_t to = c.attr_int("to");
  const DType dtype = dtype_from_onnx(static_cast<int32_t>(to));
  if (dtype == DType::Invalid)
    c.fail("cast to " + onnx_type_name(static_cast<int32_t>(to)) + " is not supported");
  c.set_output(0, c.emit1(EdgeOp::Cast, {c.input(0)}, {{"to", static_cast<int64_t>(dtype)}}));
}

void lower_mod(LowerContext& c) {
  const int64_t fmod_mode = c.attr_int("fmod", 0);
  const DType t = c.input_spec(0).dtype;
  if (fmod_mode == 0 && (t == DType::Float32 || t == DType::Float64))
    c.fail("Mod with fmod=0 is undefined for floating-point inputs (the spec requires fmod=1)");
  c.set_output(0, c.emit1(EdgeOp::Mod, {c.input(0), c.input(1)}, {{"fmod", fmod_mode}}));
}

}  // namespace

void register_elementwise_lowerings() {
  register_lowering("Add", binary(EdgeOp::Add));
  register_lowering("Sub", binary(EdgeOp::Sub));
  register_lowering("Mul", binary(EdgeOp::Mul));
  register_lowering("Div", binary(EdgeOp::Div));
  register_lowering("Pow", binary(EdgeOp::Pow));
  register_lowering("Equal", binary(EdgeOp::Equal));
  register_lowering("Less", binary(EdgeOp::Less));
  register_lowering("Greater", binary(EdgeOp::Greater));
  register_lowering("LessOrEqual", binary(EdgeOp::LessOrEqual));
  register_lowering("GreaterOrEqual", binary(EdgeOp::GreaterOrEqual));
  register_lowering("And", binary(EdgeOp::And));
  register_lowering("Or", binary(EdgeOp::Or));
  register_lowering("Xor", binary(EdgeOp::Xor));
  register_lowering("Mod", {lower_mod, 10});
  register_lowering("Min", variadic(EdgeOp::Min, false));
  register_lowering("Max", variadic(EdgeOp::Max, false));
  register_lowering("Sum", variadic(EdgeOp::Add, false));
  register_lowering("Mean", variadic(EdgeOp::Add, true));
  register_lowering("Where", {[](LowerContext& c) {
                                c.set_output(0, c.emit1(EdgeOp::Where, {c.input(0), c.input(1), c.input(2)}));
                              },
                              9});
  register_lowering("Not", unary(EdgeOp::Not));
  register_lowering("Neg", unary(EdgeOp::Neg));
  register_lowering("Abs", unary(EdgeOp::Abs));
  register_lowering("Sqrt", unary(EdgeOp::Sqrt));
  register_lowering("Exp", unary(EdgeOp::Exp));
  register_lowering("Log", unary(EdgeOp::Log));
  register_lowering("Reciprocal", unary(EdgeOp::Reciprocal));
  register_lowering("Floor", unary(EdgeOp::Floor));
  register_lowering("Ceil", unary(EdgeOp::Ceil));
  register_lowering("Round", unary(EdgeOp::Round));
  register_lowering("Sign", unary(EdgeOp::Sign));
  register_lowering("Erf", unary(EdgeOp::Erf));
  register_lowering("Sin", unary(EdgeOp::Sin));
  register_lowering("Cos", unary(EdgeOp::Cos));
  register_lowering("Tan", unary(EdgeOp::Tan));
  register_lowering("Asin", unary(EdgeOp::Asin));
  register_lowering("Acos", unary(EdgeOp::Acos));
  register_lowering("Atan", unary(EdgeOp::Atan));
  register_lowering("Sinh", unary(EdgeOp::Sinh));
  register_lowering("Cosh", unary(EdgeOp::Cosh));
  register_lowering("Asinh", unary(EdgeOp::Asinh));
  register_lowering("Acosh", unary(EdgeOp::Acosh));
  register_lowering("Atanh", unary(EdgeOp::Atanh));
  register_lowering("Clip", {lower_clip, 1});
  register_lowering("Cast", {lower_cast, 1});
}

}  // namespace etc::onnx_import
