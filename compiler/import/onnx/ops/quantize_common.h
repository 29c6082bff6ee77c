#pragma once
// What the lowerings of quantized ONNX ops share (ops/quantize.cpp: the
// QDQ ops; ops/qlinear.cpp: QLinearConv, QLinearMatMul, ConvInteger,
// MatMulInteger): they compute in float32, on the integers' values.

#include <string>

#include "compiler/import/onnx/lower_context.h"

namespace etc::onnx_import {

// uint8 or int8: the integer types quantized tensors may have.
bool quantized_type(DType t);

// v as float32 (a cast unless it is float32 already).
ir::ValueId to_float(LowerContext& c, ir::ValueId v);

// x, a quantized tensor, as float32. When x is what a QuantizeLinear wrote
// (a cast to x's type of a clamp of whole numbers to within its range), the
// clamp's output itself: the same numbers, without the round trip through
// the integer type, so a Quantize-Dequantize pair stays in float32 and in
// one backend's partition.
ir::ValueId dequantized_input(LowerContext& c, ir::ValueId x);

// A scale or zero point `v` shaped to broadcast against a tensor of `rank`
// along `axis`: a scalar or one-element tensor as it is, a 1-D tensor of
// `extent` values as [extent, 1, ...] (rank - axis dims). Fails naming
// `what` for any other shape.
ir::ValueId along_axis(LowerContext& c, ir::ValueId v, int rank, int64_t axis, int64_t extent,
                       const std::string& what);

// Fails unless input `i`, a scale, is float32 (naming it).
void require_float_scale(const LowerContext& c, int i);

// float(x) - float(zero_point), x quantized (read through
// dequantized_input); zero_point may be ir::kNoValue, else broadcasts.
ir::ValueId centred(LowerContext& c, ir::ValueId x, ir::ValueId zero_point);

// centred(x, zero_point) * scale, scale broadcasting against x.
ir::ValueId dequantize(LowerContext& c, ir::ValueId x, ir::ValueId scale, ir::ValueId zero_point);

// cast(clip(round(y / scale) + zero_point, qmin, qmax)) to `type` (uint8
// or int8), y float32; zero_point may be ir::kNoValue.
ir::ValueId quantize(LowerContext& c, ir::ValueId y, ir::ValueId scale, ir::ValueId zero_point, DType type);

}  // namespace etc::onnx_import
