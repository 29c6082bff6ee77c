// Lowering of ONNX Resize (opsets 10..17) and Upsample (7..9) to the edge op
// resize, and of GridSample (16..; 2-D) to grid_sample. The output size and the scales the coordinate
// transform uses are written into the attributes when scales, sizes and roi are compile-time constants. When
// one of them is computed by the model, the output shape is the one the model declares, and the argument
// stays an input that the kernel reads and checks against that shape at run time.
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "compiler/import/onnx/lower_context.h"
#include "compiler/import/onnx/ops/register_all.h"

namespace etc::onnx_import {
namespace {

struct ResizeSpec {
  std::string mode;
  std::string coord;
  std::string nearest;
  std::vector<float> scales;  // empty when sizes are given
  std::vector<int64_t> sizes;
  std::vector<float> roi;  // tf_crop_and_resize only
  // Arguments only known at run time (kNoValue when constant or absent).
  ir::ValueId scales_value = ir::kNoValue;
  ir::ValueId sizes_value = ir::kNoValue;
  ir::ValueId roi_value = ir::kNoValue;
  int scales_input = 2;  // 1 for Resize-10 and Upsample
};

// True when input i is computed by the model and not statically empty (an
// empty scales, sizes or roi means "not given").
bool is_runtime_arg(const LowerContext& c, int i) {
  if (!c.has_input(i) || c.is_constant(c.input(i))) return false;
  return c.input_spec(i).shape.numel() != 0;
}

void check_mode(const LowerContext& c, std::string& mode) {
  if (mode == "bilinear") mode = "linear";  // early Upsample spelling
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    c.fail("mode '" + mode + "' is not supported");
}

void check_scales(const LowerContext& c, const std::vector<float>& scales, size_t rank) {
  if (scales.size() != rank)
    c.fail("scales has " + std::to_string(scales.size()) + " values, input rank is " + std::to_string(rank));
  for (size_t a = 0; a < rank; ++a)
    if (!(scales[a] > 0.0f) || !std::isfinite(scales[a]))
      c.fail("scales[" + std::to_string(a) + "] = " + std::to_string(scales[a]) + " is not positive");
}

// Output dims from the scales: floor(in * scale), over the roi extent for
// tf_crop_and_resize.
std::vector<int64_t> sizes_from_scales(const LowerContext& c, const ResizeSpec& s, const Shape& in) {
  const size_t rank = static_cast<size_t>(in.rank());
  check_scales(c, s.scales, rank);
  std::vector<int64_t> sizes(rank);
  for (size_t a = 0; a < rank; ++a) {
    double extent = 1.0;
    if (!s.roi.empty()) extent = static_cast<double>(s.roi[a + rank]) - static_cast<double>(s.roi[a]);
    sizes[a] = static_cast<int64_t>(
        std::floor(static_cast<double>(in[static_cast<int>(a)]) * extent * static_cast<double>(s.scales[a])));
  }
  return sizes;
}

// Resize-10 and Upsample: X and scales only, asymmetric transform and the
// floor-or-ceil nearest rounding of that era.
ResizeSpec legacy_spec(LowerContext& c) {
  ResizeSpec s;
  s.mode = c.attr_string("mode", "nearest");
  s.coord = "asymmetric";
  s.nearest = "simple";
  s.scales_input = 1;
  if (c.node().op_type() == "Upsample" && c.opset() < 9)
    s.scales = c.attr_floats("scales");
  else if (is_runtime_arg(c, 1))
    s.scales_value = c.input(1);
  else
    s.scales = c.constant_floats(1, "scales");
  return s;
}

ResizeSpec resize11_spec(LowerContext& c, int rank) {
  ResizeSpec s;
  s.mode = c.attr_string("mode", "nearest");
  s.coord = c.attr_string("coordinate_transformation_mode", "half_pixel");
  s.nearest = c.attr_string("nearest_mode", "round_prefer_floor");
  if (s.coord == "tf_crop_and_resize") {
    if (is_runtime_arg(c, 1)) {
      s.roi_value = c.input(1);
      if (c.input_spec(1).shape.numel() != 2 * int64_t{rank})
        c.fail("roi has " + std::to_string(c.input_spec(1).shape.numel()) +
               " values, expected 2 * rank = " + std::to_string(2 * rank));
    } else if (c.has_input(1) && c.is_constant(c.input(1))) {
      s.roi = c.constant_floats(1, "roi");
    }
    if (s.roi.empty() && s.roi_value == ir::kNoValue) {
      s.roi.assign(static_cast<size_t>(rank), 0.0f);
      s.roi.resize(2 * static_cast<size_t>(rank), 1.0f);
    }
    if (!s.roi.empty() && s.roi.size() != 2 * static_cast<size_t>(rank))
      c.fail("roi has " + std::to_string(s.roi.size()) +
             " values, expected 2 * rank = " + std::to_string(2 * rank));
  }
  if (is_runtime_arg(c, 2))
    s.scales_value = c.input(2);
  else if (c.has_input(2) && c.is_constant(c.input(2)))
    s.scales = c.constant_floats(2, "scales");
  if (is_runtime_arg(c, 3))
    s.sizes_value = c.input(3);
  else if (c.has_input(3) && c.is_constant(c.input(3)))
    s.sizes = c.constant_ints(3, "sizes");
  const bool has_scales = !s.scales.empty() || s.scales_value != ir::kNoValue;
  const bool has_sizes = !s.sizes.empty() || s.sizes_value != ir::kNoValue;
  if (has_scales && has_sizes) c.fail("both scales and sizes are given; ONNX allows only one");
  if (!has_scales && !has_sizes) c.fail("neither scales nor sizes is given");
  if (!s.sizes.empty() && s.sizes.size() != static_cast<size_t>(rank))
    c.fail("sizes has " + std::to_string(s.sizes.size()) + " values, input rank is " + std::to_string(rank));
  return s;
}

// The output dims when they depend on an argument only known at run time:
// those of the model's declared output type, which the kernel checks.
std::vector<int64_t> declared_sizes(const LowerContext& c, const ResizeSpec& s, const Shape& in) {
  const bool sizes = s.sizes_value != ir::kNoValue, scales = s.scales_value != ir::kNoValue;
  const std::string what = sizes    ? "sizes (input 3)"
                           : scales ? "scales (input " + std::to_string(s.scales_input) + ")"
                                    : "roi (input 1)";
  const std::optional<TensorSpec> declared = c.declared_output_spec(0);
  if (!declared) c.fail(what + " is not a compile-time constant and the output type is undeclared");
  if (declared->dtype != c.input_spec(0).dtype || declared->shape.rank() != in.rank())
    c.fail("declared output type " + std::string(dtype_name(declared->dtype)) + declared->shape.str() +
           " does not match the input " + dtype_name(c.input_spec(0).dtype) + in.str());
  return std::vector<int64_t>(declared->shape.begin(), declared->shape.end());
}

// Edge inputs: x, then scales, sizes, roi when they are read at run time.
std::vector<ir::ValueId> resize_inputs(LowerContext& c, const ResizeSpec& s) {
  std::vector<ir::ValueId> inputs = {c.input(0), s.scales_value, s.sizes_value, s.roi_value};
  while (inputs.back() == ir::kNoValue) inputs.pop_back();
  return inputs;
}

void lower_resize(LowerContext& c) {
  const Shape in = c.input_spec(0).shape;
  const bool legacy = c.node().op_type() == "Upsample" || c.opset() < 11;
  ResizeSpec s = legacy ? legacy_spec(c) : resize11_spec(c, in.rank());
  check_mode(c, s.mode);
  if (!s.scales.empty()) check_scales(c, s.scales, static_cast<size_t>(in.rank()));
  const bool size_at_run_time = s.scales_value != ir::kNoValue || s.sizes_value != ir::kNoValue ||
                                (s.roi_value != ir::kNoValue && s.sizes.empty());
  if (size_at_run_time)
    s.sizes = declared_sizes(c, s, in);
  else if (s.sizes.empty())
    s.sizes = sizes_from_scales(c, s, in);
  for (size_t a = 0; a < s.sizes.size(); ++a)
    if (s.sizes[a] < 0) c.fail("output size of axis " + std::to_string(a) + " is negative");

  // Sizes that are whole multiples of the input's become the scales they
  // are (the same coordinate transform): with scales, the output follows
  // the input's size, so one program serves a range of sizes.
  bool follow = !size_at_run_time && s.roi.empty() && !s.scales.empty();
  if (!size_at_run_time && s.roi.empty() && s.scales.empty()) {
    std::vector<float> scales;
    for (int a = 0; a < in.rank(); ++a) {
      const int64_t i = in[a], o = s.sizes[static_cast<size_t>(a)];
      if (i <= 0 || o % i != 0 || o / i > (1 << 20)) break;
      scales.push_back(static_cast<float>(o / i));
    }
    if (scales.size() == static_cast<size_t>(in.rank())) {
      s.scales = scales;
      follow = true;
    }
  }
  ir::Attrs attrs;
  attrs.set("sizes", s.sizes);
  if (!s.scales.empty()) attrs.set("scales", s.scales);
  if (follow) attrs.set("sizes_from_scales", int64_t{1});
  attrs.set("mode", s.mode);
  attrs.set("coordinate_transformation_mode", s.coord);
  attrs.set("nearest_mode", s.nearest);
  if (!legacy) {
    attrs.set("cubic_coeff_a", c.attr_float("cubic_coeff_a", -0.75f));
    attrs.set("exclude_outside", c.attr_int("exclude_outside", 0));
    attrs.set("extrapolation_value", c.attr_float("extrapolation_value", 0.0f));
  }
  if (!s.roi.empty()) attrs.set("roi", s.roi);
  c.set_output(0, c.emit1(EdgeOp::Resize, resize_inputs(c, s), std::move(attrs)));
}

// GridSample: the opset-16 mode names (bilinear, bicubic) become the later
// ones (linear, cubic); X must be 4-D (2-D sampling).
void lower_grid_sample(LowerContext& c) {
  std::string mode = c.attr_string("mode", c.opset() >= 20 ? "linear" : "bilinear");
  if (mode == "bilinear") mode = "linear";
  if (mode == "bicubic") mode = "cubic";
  if (mode != "linear" && mode != "nearest" && mode != "cubic")
    c.fail("mode '" + mode + "' is not supported");
  const std::string padding = c.attr_string("padding_mode", "zeros");
  if (padding != "zeros" && padding != "border" && padding != "reflection")
    c.fail("padding_mode '" + padding + "' is not supported");
  const Shape x = c.input_spec(0).shape;
  if (x.rank() != 4) c.fail("X must be [N, C, H, W] (2-D sampling), got " + x.str());
  ir::Attrs attrs{
      {"mode", mode}, {"padding_mode", padding}, {"align_corners", c.attr_int("align_corners", 0)}};
  c.set_output(0, c.emit1(EdgeOp::GridSample, {c.input(0), c.input(1)}, std::move(attrs)));
}

}  // namespace

void register_resize_lowerings() {
  register_lowering("GridSample", {lower_grid_sample, 16});
  register_lowering("Resize", {lower_resize, 10, 17});
  register_lowering("Upsample", {lower_resize, 7, 17});  // deprecated in 10, still in use
}

}  // namespace etc::onnx_import
