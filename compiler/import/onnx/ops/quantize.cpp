// Lowering of ONNX QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear
// into float edge ops, so QDQ models compile: the Dequantize of a constant
// weight folds at import to the float weight the convolution or MatMul after
// it takes (and a backend with it); a Quantize-Dequantize pair on activations
// becomes the rounding and clamping it stands for, computed exactly as the
// ONNX reference does (x / scale rounded half to even, plus the zero point,
// saturated to the integer type).
//
//   QuantizeLinear(x, scale, zp)   = cast(clip(round(x / scale) + zp, qmin, qmax))
//   DequantizeLinear(x, scale, zp) = (float(x) - float(zp)) * scale
//
// Integer types: uint8 and int8 (and int32 input to DequantizeLinear). The
// scale is a scalar (per tensor) or 1-D along `axis` (per axis, opset 13);
// blocked quantisation (block_size) and the float8, int4 and 16-bit types are
// refused by name.
#include <cmath>
#include <string>
#include <vector>

#include "compiler/import/onnx/lower_context.h"
#include "compiler/import/onnx/ops/quantize_common.h"
#include "compiler/import/onnx/ops/register_all.h"
#include "compiler/import/onnx/ops/shape_lowerings.h"
#include "compiler/import/onnx/tensor_proto.h"
#include "compiler/ir/node_attrs.h"

namespace etc::onnx_import {
namespace {

float qmin(DType t) { return t == DType::UInt8 ? 0.0f : -128.0f; }
float qmax(DType t) { return t == DType::UInt8 ? 255.0f : 127.0f; }

// Whether v, a float32 value, holds whole numbers only (or NaN): a Round's
// output, a cast from an integer type, a constant of whole numbers, or a sum
// of such values.
bool integral(LowerContext& c, ir::ValueId v, int depth = 0) {
  const ir::Value& value = c.graph().value(v);
  if (value.is_constant()) {
    if (value.spec.dtype != DType::Float32) return false;
    const float* f = value.constant_as<float>();
    for (int64_t i = 0; i < value.spec.shape.numel(); ++i)
      if (std::nearbyint(f[i]) != f[i]) return false;
    return true;
  }
  if (value.producer < 0 || depth > 2) return false;
  const ir::Node& n = c.graph().node(value.producer);
  switch (n.op) {
    case EdgeOp::Round: return true;
    case EdgeOp::Cast: {
      const DType from = c.spec(n.inputs[0]).dtype;
      return from == DType::UInt8 || from == DType::Int8 || from == DType::Int32;
    }
    case EdgeOp::Add: return integral(c, n.inputs[0], depth + 1) && integral(c, n.inputs[1], depth + 1);
    default: return false;
  }
}

// Input `i` (a scale or zero point) of a QDQ op on x, along its `axis`.
ir::ValueId per_axis(LowerContext& c, int i, const Shape& x, const char* what) {
  const Shape s = c.input_spec(i).shape;
  if (s.rank() == 0 || (s.rank() == 1 && s[0] == 1)) return c.input(i);
  if (c.attr_int("block_size", 0) != 0) c.fail("blocked quantisation (block_size) is not supported");
  const int64_t axis = c.normalize_axis(c.attr_int("axis", 1), x.rank());
  return along_axis(c, c.input(i), x.rank(), axis, x[static_cast<int>(axis)], what);
}

void lower_quantize_linear(LowerContext& c) {
  const TensorSpec x = c.input_spec(0);
  if (x.dtype != DType::Float32) c.fail("input must be float32, got " + std::string(dtype_name(x.dtype)));
  require_float_scale(c, 1);
  const bool has_zp = c.has_input(2);
  const DType out = has_zp ? c.input_spec(2).dtype : DType::UInt8;
  if (!quantized_type(out))
    c.fail("output type " + std::string(dtype_name(out)) + " is not supported (uint8, int8)");
  if (c.has_attr("output_dtype") && dtype_from_onnx(static_cast<int32_t>(c.attr_int("output_dtype"))) != out)
    c.fail("output_dtype other than the zero point's type is not supported");
  const ir::ValueId zp = has_zp ? per_axis(c, 2, x.shape, "y_zero_point") : ir::kNoValue;
  c.set_output(0, quantize(c, c.input(0), per_axis(c, 1, x.shape, "y_scale"), zp, out));
}

void lower_dequantize_linear(LowerContext& c) {
  const TensorSpec x = c.input_spec(0);
  if (!quantized_type(x.dtype) && x.dtype != DType::Int32)
    c.fail("input type " + std::string(dtype_name(x.dtype)) + " is not supported (uint8, int8, int32)");
  require_float_scale(c, 1);
  ir::ValueId zp = ir::kNoValue;
  if (c.has_input(2)) {
    if (c.input_spec(2).dtype != x.dtype) c.fail("x_zero_point must have the input's type");
    zp = per_axis(c, 2, x.shape, "x_zero_point");
  }
  c.set_output(0, dequantize(c, c.input(0), per_axis(c, 1, x.shape, "x_scale"), zp));
}

// uint8 quantisation with a scale and zero point from the data's range
// (widened to include 0): scale = (max - min) / 255, zp = saturate(round(-min / scale)).
void lower_dynamic_quantize_linear(LowerContext& c) {
  const TensorSpec x = c.input_spec(0);
  if (x.dtype != DType::Float32) c.fail("input must be float32, got " + std::string(dtype_name(x.dtype)));
  const int rank = x.shape.rank();
  std::vector<int64_t> all(static_cast<size_t>(rank));
  for (int d = 0; d < rank; ++d) all[static_cast<size_t>(d)] = d;
  const ir::Attrs reduce{{"axes", all}, {"keepdims", int64_t{0}}};
  const ir::ValueId zero = c.scalar(DType::Float32, 0.0);
  const ir::ValueId hi = c.emit1(EdgeOp::Max, {c.emit1(EdgeOp::ReduceMax, {c.input(0)}, reduce), zero});
  const ir::ValueId lo = c.emit1(EdgeOp::Min, {c.emit1(EdgeOp::ReduceMin, {c.input(0)}, reduce), zero});
  const ir::ValueId scale =
      c.emit1(EdgeOp::Div, {c.emit1(EdgeOp::Sub, {hi, lo}), c.scalar(DType::Float32, 255.0)});
  const ir::ValueId neg_lo = c.emit1(EdgeOp::Sub, {zero, lo});
  const ir::ValueId zp_float =
      c.emit1(EdgeOp::Clip, {c.emit1(EdgeOp::Round, {c.emit1(EdgeOp::Div, {neg_lo, scale})})},
              {{"min", 0.0f}, {"max", 255.0f}});
  const ir::ValueId q = c.emit1(
      EdgeOp::Clip,
      {c.emit1(EdgeOp::Add, {c.emit1(EdgeOp::Round, {c.emit1(EdgeOp::Div, {c.input(0), scale})}), zp_float})},
      {{"min", 0.0f}, {"max", 255.0f}});
  const ir::Attrs to_u8{{"to", static_cast<int64_t>(DType::UInt8)}};
  c.set_output(0, c.emit1(EdgeOp::Cast, {q}, to_u8));
  c.set_output(1, scale);
  c.set_output(2, c.emit1(EdgeOp::Cast, {zp_float}, to_u8));
}

}  // namespace

bool quantized_type(DType t) { return t == DType::UInt8 || t == DType::Int8; }

ir::ValueId to_float(LowerContext& c, ir::ValueId v) {
  if (c.spec(v).dtype == DType::Float32) return v;
  return c.emit1(EdgeOp::Cast, {v}, {{"to", static_cast<int64_t>(DType::Float32)}});
}

ir::ValueId dequantized_input(LowerContext& c, ir::ValueId x) {
  const ir::Value& value = c.graph().value(x);
  const DType t = value.spec.dtype;
  if (quantized_type(t) && value.producer >= 0) {
    const ir::Node& cast = c.graph().node(value.producer);
    if (cast.op == EdgeOp::Cast) {
      const ir::ValueId clamped = cast.inputs[0];
      const ir::Value& cv = c.graph().value(clamped);
      if (cv.spec.dtype == DType::Float32 && cv.producer >= 0) {
        const ir::Node& clip = c.graph().node(cv.producer);
        // (A NaN input stays NaN this way, where the cast would have given
        // an integer.)
        if (clip.op == EdgeOp::Clip && ir::attr_float(clip, "min", -1e30f) >= qmin(t) &&
            ir::attr_float(clip, "max", 1e30f) <= qmax(t) && integral(c, clip.inputs[0]))
          return clamped;
      }
    }
  }
  return to_float(c, x);
}

ir::ValueId along_axis(LowerContext& c, ir::ValueId v, int rank, int64_t axis, int64_t extent,
                       const std::string& what) {
  const Shape s = c.spec(v).shape;
  if (s.rank() == 0 || (s.rank() == 1 && s[0] == 1)) return v;
  if (s.rank() != 1) c.fail(what + " must be a scalar or 1-D, got " + s.str());
  if (s[0] != extent)
    c.fail(what + " has " + std::to_string(s[0]) + " values but the input has " + std::to_string(extent) +
           " along axis " + std::to_string(axis));
  std::vector<int64_t> dims(static_cast<size_t>(rank - axis), 1);
  dims[0] = s[0];
  return reshape_to(c, v, dims);
}

void require_float_scale(const LowerContext& c, int i) {
  const DType t = c.input_spec(i).dtype;
  if (t != DType::Float32)
    c.fail("scale '" + c.node().input(i) + "' must be float32, got " + std::string(dtype_name(t)));
}

ir::ValueId centred(LowerContext& c, ir::ValueId x, ir::ValueId zero_point) {
  const ir::ValueId v = dequantized_input(c, x);
  return zero_point == ir::kNoValue ? v : c.emit1(EdgeOp::Sub, {v, to_float(c, zero_point)});
}

ir::ValueId dequantize(LowerContext& c, ir::ValueId x, ir::ValueId scale, ir::ValueId zero_point) {
  return c.emit1(EdgeOp::Mul, {centred(c, x, zero_point), scale});
}

ir::ValueId quantize(LowerContext& c, ir::ValueId y, ir::ValueId scale, ir::ValueId zero_point, DType type) {
  ir::ValueId q = c.emit1(EdgeOp::Round, {c.emit1(EdgeOp::Div, {y, scale})});
  if (zero_point != ir::kNoValue) q = c.emit1(EdgeOp::Add, {q, to_float(c, zero_point)});
  q = c.emit1(EdgeOp::Clip, {q}, {{"min", qmin(type)}, {"max", qmax(type)}});
  return c.emit1(EdgeOp::Cast, {q}, {{"to", static_cast<int64_t>(type)}});
}

void register_quantize_lowerings() {
  register_lowering("QuantizeLinear", {lower_quantize_linear, 10});
  register_lowering("DequantizeLinear", {lower_dequantize_linear, 10});
  register_lowering("DynamicQuantizeLinear", {lower_dynamic_quantize_linear, 11});
}

}  // namespace etc::onnx_import
