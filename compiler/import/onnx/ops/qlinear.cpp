// Lowering of ONNX's quantized operators (QOperator models and dynamically
// quantized ones): QLinearConv, QLinearMatMul, ConvInteger, MatMulInteger.
// Each becomes its float32 computation on the integers' values, as the QDQ
// ops do (ops/quantize.cpp):
//
//   QLinearConv   = quantize(conv(dq(x), dq(w), float(B) * x_scale * w_scale), y_scale, y_zp)
//   QLinearMatMul = quantize(matmul(dq(a), dq(b)), y_scale, y_zp)
//   ConvInteger   = int32(conv(float(x) - x_zp, float(w) - w_zp))
//   MatMulInteger = int32(matmul(float(A) - a_zp, float(B) - b_zp))
//
// so a constant weight folds to a float one and the convolution or matrix
// product runs on a backend at float speed. Sums of integer products are
// then float32 sums: exact while they stay within 2^24 (every 8-bit
// product sum of up to 258 terms), else rounded as float32 rounds
// (relative 6e-8), where an integer kernel would wrap nothing either.
// Per-channel scales and zero points: w's along its output channels, b's
// along its columns, a's and y's along rows (QLinearMatMul).
#include <string>
#include <vector>

#include "compiler/import/onnx/lower_context.h"
#include "compiler/import/onnx/ops/conv_pads.h"
#include "compiler/import/onnx/ops/quantize_common.h"
#include "compiler/import/onnx/ops/register_all.h"
#include "compiler/import/onnx/ops/shape_lowerings.h"

namespace etc::onnx_import {
namespace {

std::string input_name(LowerContext& c, int i) { return c.node().input(i); }

void require_quantized(LowerContext& c, int i) {
  const DType t = c.input_spec(i).dtype;
  if (!quantized_type(t))
    c.fail("input '" + input_name(c, i) + "' is " + dtype_name(t) + "; quantized inputs are uint8 or int8");
}

// A zero point of quantized input `of`: its type, and present or absent.
ir::ValueId zero_point(LowerContext& c, int i, int of) {
  if (!c.has_input(i)) return ir::kNoValue;
  if (c.input_spec(i).dtype != c.input_spec(of).dtype)
    c.fail("zero point '" + input_name(c, i) + "' is " + dtype_name(c.input_spec(i).dtype) + ", its input '" +
           input_name(c, of) + "' " + dtype_name(c.input_spec(of).dtype));
  return c.input(i);
}

// Input `i` (a scale or zero point, or absent) of the tensor of `rank`
// whose `axis` has `extent` values, along that axis.
ir::ValueId along(LowerContext& c, ir::ValueId v, int i, int rank, int64_t axis, int64_t extent) {
  if (v == ir::kNoValue) return v;
  return along_axis(c, v, rank, axis, extent, "'" + input_name(c, i) + "'");
}

// A per-tensor scale or zero point (a scalar or one value).
ir::ValueId per_tensor(LowerContext& c, ir::ValueId v, int i) { return along(c, v, i, 1, 0, 1); }

// The output zero point, input `i`, if given: uint8 or int8.
ir::ValueId output_zero_point(LowerContext& c, int i) {
  if (!c.has_input(i)) return ir::kNoValue;
  require_quantized(c, i);
  return c.input(i);
}

DType output_type(LowerContext& c, int zero_point_input) {
  return c.has_input(zero_point_input) ? c.input_spec(zero_point_input).dtype : DType::UInt8;
}

ir::ValueId to_int32(LowerContext& c, ir::ValueId v) {
  return c.emit1(EdgeOp::Cast, {v}, {{"to", static_cast<int64_t>(DType::Int32)}});
}

// QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B?).
void lower_qlinear_conv(LowerContext& c) {
  for (int i : {0, 3}) require_quantized(c, i);
  for (int i : {1, 4, 6}) require_float_scale(c, i);
  const Shape w = c.input_spec(3).shape;
  if (w.rank() < 3) c.fail("weight shape " + w.str() + " has no spatial dims");
  const int64_t m = w[0];
  const ir::ValueId x_scale = per_tensor(c, c.input(1), 1);
  const ir::ValueId w_scale = along(c, c.input(4), 4, w.rank(), 0, m);
  const ir::ValueId x = dequantize(c, c.input(0), x_scale, per_tensor(c, zero_point(c, 2, 0), 2));
  const ir::ValueId wf = dequantize(c, c.input(3), w_scale, along(c, zero_point(c, 5, 3), 5, w.rank(), 0, m));
  std::vector<ir::ValueId> inputs{x, wf};
  if (c.has_input(8)) {
    const TensorSpec b = c.input_spec(8);
    if (b.dtype != DType::Int32 || b.shape.rank() != 1 || b.shape[0] != m)
      c.fail("bias '" + input_name(c, 8) + "' must be int32 [" + std::to_string(m) + "], got " +
             dtype_name(b.dtype) + " " + b.shape.str());
    // float(B) * x_scale * w_scale, with w_scale as given ([M] or one value).
    const ir::ValueId scales = c.emit1(EdgeOp::Mul, {x_scale, c.input(4)});
    inputs.push_back(c.emit1(EdgeOp::Mul, {to_float(c, c.input(8)), scales}));
  }
  const ir::ValueId y = c.emit1(EdgeOp::Conv, std::move(inputs), conv_attrs(c, 0, 3));
  c.set_output(0, quantize(c, y, per_tensor(c, c.input(6), 6), per_tensor(c, output_zero_point(c, 7), 7),
                           output_type(c, 7)));
}

// The rows (dim -2) of a matrix operand of `rank`, or 1 for a vector.
int64_t rows(const Shape& s) { return s.rank() >= 2 ? s[s.rank() - 2] : 1; }

// QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp): a and y
// per tensor or per row, b per tensor or per column.
void lower_qlinear_matmul(LowerContext& c) {
  for (int i : {0, 3}) require_quantized(c, i);
  for (int i : {1, 4, 6}) require_float_scale(c, i);
  const Shape a = c.input_spec(0).shape, b = c.input_spec(3).shape;
  if (a.rank() < 1 || b.rank() < 1) c.fail("inputs must not be scalars");
  const auto row_wise = [&](ir::ValueId v, int i) {
    return a.rank() >= 2 ? along(c, v, i, 2, 0, rows(a)) : per_tensor(c, v, i);
  };
  const auto column_wise = [&](ir::ValueId v, int i) {
    return along(c, v, i, 1, 0, b.rank() >= 2 ? b[b.rank() - 1] : 1);
  };
  const ir::ValueId af = dequantize(c, c.input(0), row_wise(c.input(1), 1), row_wise(zero_point(c, 2, 0), 2));
  const ir::ValueId bf =
      dequantize(c, c.input(3), column_wise(c.input(4), 4), column_wise(zero_point(c, 5, 3), 5));
  const ir::ValueId y = c.emit1(EdgeOp::MatMul, {af, bf});
  c.set_output(
      0, quantize(c, y, row_wise(c.input(6), 6), row_wise(output_zero_point(c, 7), 7), output_type(c, 7)));
}

// ConvInteger(x, w, x_zp?, w_zp?): x_zp per tensor, w_zp per tensor or per
// output channel.
void lower_conv_integer(LowerContext& c) {
  for (int i : {0, 1}) require_quantized(c, i);
  const Shape w = c.input_spec(1).shape;
  if (w.rank() < 3) c.fail("weight shape " + w.str() + " has no spatial dims");
  const ir::ValueId x = centred(c, c.input(0), per_tensor(c, zero_point(c, 2, 0), 2));
  const ir::ValueId wf = centred(c, c.input(1), along(c, zero_point(c, 3, 1), 3, w.rank(), 0, w[0]));
  c.set_output(0, to_int32(c, c.emit1(EdgeOp::Conv, {x, wf}, conv_attrs(c, 0, 1))));
}

// MatMulInteger(A, B, a_zp?, b_zp?): a_zp per tensor, per row (M values)
// or shaped to broadcast ([..., M, 1]); b_zp per tensor, per column (N
// values) or shaped to broadcast ([..., 1, N]).
void lower_matmul_integer(LowerContext& c) {
  for (int i : {0, 1}) require_quantized(c, i);
  const Shape a = c.input_spec(0).shape;
  ir::ValueId a_zp = zero_point(c, 2, 0);
  if (a_zp != ir::kNoValue && c.spec(a_zp).shape.rank() == 1 && a.rank() >= 2)
    a_zp = along(c, a_zp, 2, 2, 0, rows(a));
  const ir::ValueId af = centred(c, c.input(0), a_zp);
  const ir::ValueId bf = centred(c, c.input(1), zero_point(c, 3, 1));
  c.set_output(0, to_int32(c, c.emit1(EdgeOp::MatMul, {af, bf})));
}

}  // namespace

void register_qlinear_lowerings() {
  register_lowering("QLinearConv", {lower_qlinear_conv, 10});
  register_lowering("QLinearMatMul", {lower_qlinear_matmul, 10});
  register_lowering("ConvInteger", {lower_conv_integer, 10});
  register_lowering("MatMulInteger", {lower_matmul_integer, 10});
}

}  // namespace etc::onnx_import
