#pragma once
// Internal to the ONNX 'shape' lowering family (ops/shape*.cpp): helpers
// shared by its files and the registration of the ops in shape_slice.cpp.

#include <cstdint>
#include <vector>

#include "compiler/import/onnx/lower_context.h"

namespace etc::onnx_import {

inline std::vector<int64_t> dims_of(const Shape& s) { return {s.begin(), s.end()}; }

// x reshaped to `dims`: x itself when the shape does not change (no copy),
// otherwise a reshape node (folded when x is constant). Fails naming `dims`
// when the element counts differ or the rank is above 8.
ir::ValueId reshape_to(LowerContext& c, ir::ValueId x, const std::vector<int64_t>& dims);

// Run-time shape arguments. True when ONNX input i is given but is not a
// compile-time constant.
bool is_runtime_arg(LowerContext& c, int i);

// The static dims the model declares for output `output`, used as the output
// shape of an op whose argument `what` (ONNX input `input`) is only known at
// run time; the kernel checks the argument against them. Fails naming the
// argument when the output type is undeclared or not static.
std::vector<int64_t> declared_dims(LowerContext& c, int output, const char* what, int input);

// Slice, Gather and Pad (shape_slice.cpp).
void register_shape_slice_lowerings();

}  // namespace etc::onnx_import
