// Lowering of the ONNX ops whose result is known at compile time (shapes are
// static): Shape, Size, Constant, ConstantOfShape and Range. Each becomes an
// IR constant, except a ConstantOfShape too large to store, which stays an
// expand node of its one-element value. A ConstantOfShape shape or Range
// bounds computed at run time give an expand or range node typed with the
// declared output shape, which the kernel checks at run time.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "compiler/common/limits.h"
#include "compiler/import/onnx/lower_context.h"
#include "compiler/import/onnx/ops/register_all.h"
#include "compiler/import/onnx/ops/shape_lowerings.h"
#include "compiler/import/onnx/tensor_proto.h"

namespace etc::onnx_import {
namespace {

void lower_shape(LowerContext& c) {
  const Shape s = c.input_spec(0).shape;
  const int64_t rank = s.rank();
  int64_t start = 0, end = rank;
  if (c.opset() >= 15) {
    // Negative bounds count from the back; both clamp to [0, rank].
    start = c.attr_int("start", 0);
    end = c.attr_int("end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::min(std::max<int64_t>(start, 0), rank);
    end = std::min(std::max<int64_t>(end, 0), rank);
  }
  std::vector<int64_t> dims;
  for (int64_t d = start; d < end; ++d) dims.push_back(s[static_cast<int>(d)]);
  c.set_output(0, c.constant_ints(dims, Shape{static_cast<int64_t>(dims.size())}));
}

void lower_size(LowerContext& c) {
  c.set_output(0, c.constant_ints({c.input_spec(0).shape.numel()}, Shape{}));
}

void lower_constant(LowerContext& c) {
  if (const onnx::TensorProto* t = c.attr_tensor("value")) {
    auto decoded = decode_tensor(*t);
    if (!decoded.ok()) c.fail(decoded.message());
    return c.set_output(0, c.constant(decoded->spec, decoded->bytes.data()));
  }
  if (c.has_attr("sparse_value")) c.fail("sparse_value constants are not supported");
  if (c.has_attr("value_string") || c.has_attr("value_strings")) c.fail("string constants are not supported");
  if (c.has_attr("value_float"))
    return c.set_output(0, c.scalar(DType::Float32, c.attr_float("value_float", 0)));
  if (c.has_attr("value_int")) return c.set_output(0, c.constant_ints({c.attr_int("value_int")}, Shape{}));
  if (c.has_attr("value_floats")) {
    const std::vector<float> v = c.attr_floats("value_floats");
    return c.set_output(0, c.constant_floats(v, Shape{static_cast<int64_t>(v.size())}));
  }
  if (c.has_attr("value_ints")) {
    const std::vector<int64_t> v = c.attr_ints("value_ints");
    return c.set_output(0, c.constant_ints(v, Shape{static_cast<int64_t>(v.size())}));
  }
  c.fail("has no value attribute");
}

void lower_constant_of_shape(LowerContext& c) {
  const bool runtime = is_runtime_arg(c, 0);
  const std::vector<int64_t> dims = runtime ? declared_dims(c, 0, "shape", 0)
                                            : c.constant_ints(0, "shape (the output shape depends on it)");
  if (dims.size() > static_cast<size_t>(kMaxRank)) c.fail("output rank is above the maximum of 8");
  for (int64_t d : dims)
    if (d < 0) c.fail("shape has a negative dim " + std::to_string(d));
  TensorSpec spec{DType::Float32, Shape{}};
  uint8_t value[8] = {};
  if (const onnx::TensorProto* t = c.attr_tensor("value")) {
    auto decoded = decode_tensor(*t);
    if (!decoded.ok()) c.fail(decoded.message());
    if (decoded->spec.shape.numel() != 1) c.fail("value must hold exactly one element");
    spec.dtype = decoded->spec.dtype;
    std::memcpy(value, decoded->bytes.data(), decoded->bytes.size());
  }
  // Expand folds to a constant unless the result is too large to store. The
  // expand of a scalar to a run-time shape is that shape, as ConstantOfShape wants.
  std::vector<ir::ValueId> inputs = {c.constant(spec, value)};
  if (runtime) inputs.push_back(c.input(0));
  c.set_output(0, c.emit1(EdgeOp::Expand, inputs, {{"shape", dims}}));
}

// Range fills start + i * delta for i < ceil((limit - start) / delta), in the
// inputs' type (integers with exact integer arithmetic).
// The element count of Range(start, limit, delta), or nullopt when it has
// none an int64 holds (an infinite or NaN bound, or a span that overflows).
template <typename T>
std::optional<int64_t> range_count(T start, T limit, T delta) {
  int64_t n = 0;
  if constexpr (std::is_integral_v<T>) {
    int64_t span = 0;
    if (__builtin_sub_overflow(static_cast<int64_t>(limit), static_cast<int64_t>(start), &span))
      return std::nullopt;
    const int64_t d = delta;
    if (d == -1 && span == std::numeric_limits<int64_t>::min()) return std::nullopt;
    n = span / d + ((span % d != 0 && ((span < 0) == (d < 0))) ? 1 : 0);
  } else {
    const double count = std::ceil((static_cast<double>(limit) - start) / delta);
    if (!(count < 9.0e18)) return count < 0 ? std::optional<int64_t>(0) : std::nullopt;
    n = static_cast<int64_t>(std::max(count, 0.0));
  }
  return std::max<int64_t>(n, 0);
}

// Range's values, computed in the inputs' type (integers with exact integer
// arithmetic).
template <typename T>
std::vector<T> range_values(T start, T delta, int64_t n) {
  std::vector<T> out(static_cast<size_t>(n));
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<T>(start + static_cast<T>(i) * delta);
  return out;
}

template <typename T>
void emit_range(LowerContext& c) {
  T v[3];
  for (int i = 0; i < 3; ++i) {
    const ir::Value& value = c.graph().value(c.input(i));
    if (value.spec.shape.numel() != 1) c.fail("start, limit and delta must be scalars");
    v[i] = value.constant_as<T>()[0];
  }
  if (v[2] == T(0)) c.fail("delta is 0");
  const std::optional<int64_t> n = range_count<T>(v[0], v[1], v[2]);
  if (!n) c.fail("start, limit and delta give no countable number of elements");
  const TensorSpec spec{dtype_of<T>(), Shape{*n}};
  if (const std::string error = tensor_size_error(spec); !error.empty()) c.fail("output " + error);
  const std::vector<T> out = range_values<T>(v[0], v[2], *n);
  c.set_output(0, c.constant(TensorSpec{dtype_of<T>(), Shape{static_cast<int64_t>(out.size())}}, out.data()));
}

void lower_range(LowerContext& c) {
  const DType dtype = c.input_spec(0).dtype;
  for (int i = 1; i < 3; ++i)
    if (c.input_spec(i).dtype != dtype) c.fail("start, limit and delta have different types");
  for (int i = 0; i < 3; ++i) {
    if (c.is_constant(c.input(i))) continue;
    // Known only at run time: the declared length, checked by the kernel.
    const std::vector<int64_t> dims = declared_dims(c, 0, "start, limit or delta", i);
    if (dims.size() != 1) c.fail("declared output shape is not 1-D");
    return c.set_output(0, c.emit1(EdgeOp::Range, {c.input(0), c.input(1), c.input(2)}, {{"shape", dims}}));
  }
  switch (dtype) {
    case DType::Float32: return emit_range<float>(c);
    case DType::Float64: return emit_range<double>(c);
    case DType::Int32: return emit_range<int32_t>(c);
    case DType::Int64: return emit_range<int64_t>(c);
    default: c.fail(std::string("dtype ") + dtype_name(dtype) + " is not supported");
  }
}

}  // namespace

void register_constant_lowerings() {
  register_lowering("Shape", {lower_shape, 1});
  register_lowering("Size", {lower_size, 1});
  register_lowering("Constant", {lower_constant, 1});
  register_lowering("ConstantOfShape", {lower_constant_of_shape, 9});
  register_lowering("Range", {lower_range, 11});
}

}  // namespace etc::onnx_import
