// Lowering of ONNX ops that are compositions of other edge ops: CastLike,
// IsNaN, IsInf, ThresholdedRelu, Shrink, Celu, LRN, LpNormalization,
// MeanVarianceNormalization, EyeLike, Hardmax and OneHot. Each emits the ops its ONNX
// definition (the function body in the spec) is made of, so backends see
// ops they already take and constant inputs fold at import.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "compiler/common/limits.h"
#include "compiler/import/onnx/lower_context.h"
#include "compiler/import/onnx/ops/register_all.h"
#include "compiler/import/onnx/ops/shape_lowerings.h"
#include "compiler/import/onnx/tensor_proto.h"

namespace etc::onnx_import {
namespace {

bool is_float(DType t) { return t == DType::Float32 || t == DType::Float64; }

void require_float(const LowerContext& c, int i) {
  const DType t = c.input_spec(i).dtype;
  if (!is_float(t))
    c.fail("input " + std::to_string(i) + " must be float32 or float64, got " + dtype_name(t));
}

// Fails unless a tensor of `spec`, which the lowering is about to make,
// fits --max-tensor-bytes.
void require_fits(const LowerContext& c, const TensorSpec& spec, const std::string& what) {
  const std::string error = tensor_size_error(spec);
  if (!error.empty()) c.fail(what + ": " + error);
}

// A scalar of x's dtype.
ir::ValueId scalar_like(LowerContext& c, ir::ValueId x, double value) {
  return c.scalar(c.spec(x).dtype, value);
}

void lower_cast_like(LowerContext& c) {
  const DType to = c.input_spec(1).dtype;
  c.set_output(0, c.emit1(EdgeOp::Cast, {c.input(0)}, {{"to", static_cast<int64_t>(to)}}));
}

// NaN is the one value not equal to itself.
void lower_is_nan(LowerContext& c) {
  require_float(c, 0);
  const ir::ValueId x = c.input(0);
  c.set_output(0, c.emit1(EdgeOp::Not, {c.emit1(EdgeOp::Equal, {x, x})}));
}

void lower_is_inf(LowerContext& c) {
  require_float(c, 0);
  const ir::ValueId x = c.input(0);
  const bool positive = c.attr_int("detect_positive", 1) != 0;
  const bool negative = c.attr_int("detect_negative", 1) != 0;
  const double inf = std::numeric_limits<double>::infinity();
  ir::ValueId y;
  if (positive && negative)
    y = c.emit1(EdgeOp::Equal, {c.emit1(EdgeOp::Abs, {x}), scalar_like(c, x, inf)});
  else if (positive || negative)
    y = c.emit1(EdgeOp::Equal, {x, scalar_like(c, x, positive ? inf : -inf)});
  else  // detects nothing: false everywhere (nothing is below -inf, NaN included)
    y = c.emit1(EdgeOp::Less, {x, scalar_like(c, x, -inf)});
  c.set_output(0, y);
}

// y = x where x > alpha, else 0.
void lower_thresholded_relu(LowerContext& c) {
  require_float(c, 0);
  const ir::ValueId x = c.input(0);
  const ir::ValueId keep = c.emit1(EdgeOp::Greater, {x, scalar_like(c, x, c.attr_float("alpha", 1.0f))});
  c.set_output(0, c.emit1(EdgeOp::Where, {keep, x, scalar_like(c, x, 0.0)}));
}

// y = x + bias where x < -lambd, x - bias where x > lambd, else 0.
void lower_shrink(LowerContext& c) {
  require_float(c, 0);
  const ir::ValueId x = c.input(0);
  const double lambd = c.attr_float("lambd", 0.5f), bias = c.attr_float("bias", 0.0f);
  const ir::ValueId zero = scalar_like(c, x, 0.0);
  const ir::ValueId above = c.emit1(EdgeOp::Greater, {x, scalar_like(c, x, lambd)});
  const ir::ValueId below = c.emit1(EdgeOp::Less, {x, scalar_like(c, x, -lambd)});
  const ir::ValueId minus = c.emit1(EdgeOp::Sub, {x, scalar_like(c, x, bias)});
  const ir::ValueId plus = c.emit1(EdgeOp::Add, {x, scalar_like(c, x, bias)});
  const ir::ValueId low = c.emit1(EdgeOp::Where, {below, plus, zero});
  c.set_output(0, c.emit1(EdgeOp::Where, {above, minus, low}));
}

// y = max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).
void lower_celu(LowerContext& c) {
  require_float(c, 0);
  const ir::ValueId x = c.input(0);
  const double alpha = c.attr_float("alpha", 1.0f);
  if (alpha == 0.0) c.fail("alpha must not be 0");
  const ir::ValueId zero = scalar_like(c, x, 0.0);
  const ir::ValueId a = scalar_like(c, x, alpha);
  const ir::ValueId e = c.emit1(EdgeOp::Exp, {c.emit1(EdgeOp::Div, {x, a})});
  const ir::ValueId neg = c.emit1(EdgeOp::Mul, {a, c.emit1(EdgeOp::Sub, {e, scalar_like(c, x, 1.0)})});
  c.set_output(0, c.emit1(EdgeOp::Add, {c.emit1(EdgeOp::Max, {x, zero}), c.emit1(EdgeOp::Min, {neg, zero})}));
}

// Local response normalisation across channels:
//   y = x / (bias + alpha / size * sum of x^2 over channels [c - (size-1)/2, c + size/2])^beta.
// The window sum is an average pool over the channel dim of x^2 seen as
// [N, 1, C, rest] (padding counted, so the mean is the sum / size).
void lower_lrn(LowerContext& c) {
  require_float(c, 0);
  const ir::ValueId x = c.input(0);
  const Shape s = c.input_spec(0).shape;
  if (s.rank() < 3) c.fail("input must have rank >= 3 (N, C, D1, ...), got " + s.str());
  const int64_t size = c.attr_int("size");
  if (size < 1) c.fail("size must be >= 1, got " + std::to_string(size));
  const double alpha = c.attr_float("alpha", 1e-4f), beta = c.attr_float("beta", 0.75f),
               bias = c.attr_float("bias", 1.0f);
  int64_t rest = 1;
  for (int d = 2; d < s.rank(); ++d) rest *= s[d];
  const ir::ValueId square = c.emit1(EdgeOp::Mul, {x, x});
  const ir::ValueId planes = reshape_to(c, square, {s[0], 1, s[1], rest});
  const ir::ValueId mean = c.emit1(EdgeOp::AvgPool, {planes},
                                   {{"kernel_shape", std::vector<int64_t>{size, 1}},
                                    {"strides", std::vector<int64_t>{1, 1}},
                                    {"pads", std::vector<int64_t>{(size - 1) / 2, 0, size / 2, 0}},
                                    {"dilations", std::vector<int64_t>{1, 1}},
                                    {"ceil_mode", int64_t{0}},
                                    {"count_include_pad", int64_t{1}}});
  const ir::ValueId sum = reshape_to(c, mean, dims_of(s));
  const ir::ValueId base =
      c.emit1(EdgeOp::Add, {scalar_like(c, x, bias), c.emit1(EdgeOp::Mul, {sum, scalar_like(c, x, alpha)})});
  c.set_output(0, c.emit1(EdgeOp::Div, {x, c.emit1(EdgeOp::Pow, {base, scalar_like(c, x, beta)})}));
}

// y = x / ||x||_p along the axis (p = 1 or 2).
void lower_lp_normalization(LowerContext& c) {
  require_float(c, 0);
  const ir::ValueId x = c.input(0);
  const int64_t axis = c.normalize_axis(c.attr_int("axis", -1), c.input_spec(0).shape.rank());
  const int64_t p = c.attr_int("p", 2);
  if (p != 1 && p != 2) c.fail("p must be 1 or 2, got " + std::to_string(p));
  const ir::Attrs attrs{{"axes", std::vector<int64_t>{axis}}, {"keepdims", int64_t{1}}};
  const ir::ValueId norm = p == 2 ? c.emit1(EdgeOp::ReduceL2, {x}, attrs)
                                  : c.emit1(EdgeOp::ReduceSum, {c.emit1(EdgeOp::Abs, {x})}, attrs);
  c.set_output(0, c.emit1(EdgeOp::Div, {x, norm}));
}

// y = (x - mean) / sqrt(mean((x - mean)^2) + 1e-9) over the axes (default N, H, W).
void lower_mean_variance_normalization(LowerContext& c) {
  require_float(c, 0);
  const ir::ValueId x = c.input(0);
  const int64_t rank = c.input_spec(0).shape.rank();
  std::vector<int64_t> axes = c.attr_ints("axes", {0, 2, 3});
  for (int64_t& a : axes) a = c.normalize_axis(a, rank, "axes entry");
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) c.fail("axes has a repeated axis");
  const ir::Attrs attrs{{"axes", axes}, {"keepdims", int64_t{1}}};
  const ir::ValueId centred = c.emit1(EdgeOp::Sub, {x, c.emit1(EdgeOp::ReduceMean, {x}, attrs)});
  const ir::ValueId var = c.emit1(EdgeOp::ReduceMean, {c.emit1(EdgeOp::Mul, {centred, centred})}, attrs);
  const ir::ValueId stddev = c.emit1(EdgeOp::Sqrt, {c.emit1(EdgeOp::Add, {var, scalar_like(c, x, 1e-9)})});
  c.set_output(0, c.emit1(EdgeOp::Div, {centred, stddev}));
}

// A 2-D tensor of the input's shape with ones on diagonal k: a constant.
void lower_eye_like(LowerContext& c) {
  const Shape s = c.input_spec(0).shape;
  if (s.rank() != 2) c.fail("input must have rank 2, got " + s.str());
  DType dtype = c.input_spec(0).dtype;
  if (c.has_attr("dtype")) {
    dtype = dtype_from_onnx(static_cast<int32_t>(c.attr_int("dtype")));
    if (dtype == DType::Invalid) c.fail("dtype " + std::to_string(c.attr_int("dtype")) + " is not supported");
  }
  const int64_t k = c.attr_int("k", 0);
  require_fits(c, TensorSpec{DType::Float32, s}, "the output");
  std::vector<float> values(static_cast<size_t>(s.numel()), 0.0f);
  for (int64_t i = 0; i < s[0]; ++i)
    if (i + k >= 0 && i + k < s[1]) values[static_cast<size_t>(i * s[1] + i + k)] = 1.0f;
  const ir::ValueId eye = c.constant_floats(values, s);
  c.set_output(
      0, dtype == DType::Float32 ? eye : c.emit1(EdgeOp::Cast, {eye}, {{"to", static_cast<int64_t>(dtype)}}));
}

// A constant int64 [n, 1, ..., 1] of `dims` dims holding 0..n-1: the
// positions along the first of them, to compare an index against.
ir::ValueId positions(LowerContext& c, int64_t n, int dims) {
  require_fits(c, TensorSpec{DType::Int64, Shape{n}}, "the positions along the axis");
  std::vector<int64_t> values(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) values[static_cast<size_t>(i)] = i;
  Shape shape{n};
  for (int d = 1; d < dims; ++d) shape.push_back(1);
  return c.constant_ints(values, shape);
}

// 1 where x holds the first maximum along the axis, else 0. Before opset
// 13 the input is read as 2-D, [dims before axis, dims from axis on].
void lower_hardmax(LowerContext& c) {
  require_float(c, 0);
  const Shape s = c.input_spec(0).shape;
  if (s.rank() < 1) c.fail("input must have rank 1 or more");
  const bool flat = c.opset() < 13;
  int64_t axis = c.normalize_axis(c.attr_int("axis", flat ? 1 : -1), s.rank());
  ir::ValueId x = c.input(0);
  if (flat) {
    int64_t outer = 1;
    for (int d = 0; d < axis; ++d) outer *= s[d];
    x = reshape_to(c, x, {outer, s.numel() / std::max<int64_t>(outer, 1)});
    axis = 1;
  }
  const Shape xs = c.spec(x).shape;
  const ir::ValueId first = c.emit1(
      EdgeOp::ArgMax, {x}, {{"axis", axis}, {"keepdims", int64_t{1}}, {"select_last_index", int64_t{0}}});
  const ir::ValueId hit = c.emit1(
      EdgeOp::Equal, {first, positions(c, xs[static_cast<int>(axis)], static_cast<int>(xs.rank() - axis))});
  const ir::ValueId y = c.emit1(EdgeOp::Cast, {hit}, {{"to", static_cast<int64_t>(c.spec(x).dtype)}});
  c.set_output(0, flat ? reshape_to(c, y, dims_of(s)) : y);
}

// values[1] where the position along the new axis equals the index (a
// negative one counting from depth), values[0] elsewhere; an index outside
// [-depth, depth - 1] gives a row of values[0]. depth sets the output's
// shape, so it must be a constant.
void lower_one_hot(LowerContext& c) {
  const TensorSpec indices = c.input_spec(0);
  const int64_t depth = c.constant_int(1, "depth");
  if (depth < 1) c.fail("depth must be positive, got " + std::to_string(depth));
  if (c.input_spec(2).shape.numel() != 2)
    c.fail("values must hold two values (off, on), it has shape " + c.input_spec(2).shape.str());
  const int rank = indices.shape.rank() + 1;
  const int64_t axis = c.normalize_axis(c.attr_int("axis", -1), rank);
  std::vector<int64_t> out = dims_of(indices.shape);
  out.insert(out.begin() + axis, depth);
  require_fits(c, TensorSpec{c.input_spec(2).dtype, Shape(Span<const int64_t>(out.data(), out.size()))},
               "the output");
  ir::ValueId index = c.input(0);
  if (indices.dtype != DType::Int64)
    index = c.emit1(EdgeOp::Cast, {index}, {{"to", static_cast<int64_t>(DType::Int64)}});
  const ir::ValueId negative = c.emit1(EdgeOp::Less, {index, c.scalar(DType::Int64, 0)});
  index = c.emit1(
      EdgeOp::Where,
      {negative, c.emit1(EdgeOp::Add, {index, c.scalar(DType::Int64, static_cast<double>(depth))}), index});
  std::vector<int64_t> with_axis = dims_of(indices.shape);
  with_axis.insert(with_axis.begin() + axis, 1);
  const ir::ValueId hit = c.emit1(
      EdgeOp::Equal, {reshape_to(c, index, with_axis), positions(c, depth, static_cast<int>(rank - axis))});
  const ir::ValueId values = reshape_to(c, c.input(2), {2});
  const auto value = [&](int64_t i) {
    return c.emit1(EdgeOp::Gather, {values, c.constant_ints({i}, Shape{})}, {{"axis", int64_t{0}}});
  };
  c.set_output(0, c.emit1(EdgeOp::Where, {hit, value(1), value(0)}));
}

}  // namespace

void register_composite_lowerings() {
  register_lowering("CastLike", {lower_cast_like, 15});
  register_lowering("IsNaN", {lower_is_nan, 9});
  register_lowering("IsInf", {lower_is_inf, 10});
  register_lowering("ThresholdedRelu", {lower_thresholded_relu, 10});
  register_lowering("Shrink", {lower_shrink, 9});
  register_lowering("Celu", {lower_celu, 12});
  register_lowering("LRN", {lower_lrn, 1});
  register_lowering("LpNormalization", {lower_lp_normalization, 1});
  register_lowering("MeanVarianceNormalization", {lower_mean_variance_normalization, 9});
  register_lowering("EyeLike", {lower_eye_like, 9});
  register_lowering("Hardmax", {lower_hardmax, 1});
  register_lowering("OneHot", {lower_one_hot, 9});
}

}  // namespace etc::onnx_import
