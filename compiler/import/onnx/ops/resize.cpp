// Lowering of ONNX Resize (opsets 10..17) and Upsample (7..9) to the edge op
// resize. Everything that decides the output shape (scales, sizes, roi) must
// be a compile-time constant; the output size and the scales the coordinate
// transform uses are written into the attributes.
#include <cmath>
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
};

void check_mode(const LowerContext& c, std::string& mode) {
  if (mode == "bilinear") mode = "linear";  // early Upsample spelling
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    c.fail("mode '" + mode + "' is not supported");
}

// Output dims from the scales: floor(in * scale), over the roi extent for
// tf_crop_and_resize.
std::vector<int64_t> sizes_from_scales(const LowerContext& c, const ResizeSpec& s, const Shape& in) {
  const size_t rank = static_cast<size_t>(in.rank());
  if (s.scales.size() != rank)
    c.fail("scales has " + std::to_string(s.scales.size()) + " values, input rank is " +
           std::to_string(rank));
  std::vector<int64_t> sizes(rank);
  for (size_t a = 0; a < rank; ++a) {
    const float scale = s.scales[a];
    if (!(scale > 0.0f) || !std::isfinite(scale))
      c.fail("scales[" + std::to_string(a) + "] = " + std::to_string(scale) + " is not positive");
    double extent = 1.0;
    if (!s.roi.empty()) extent = static_cast<double>(s.roi[a + rank]) - static_cast<double>(s.roi[a]);
    sizes[a] = static_cast<int64_t>(
        std::floor(static_cast<double>(in[static_cast<int>(a)]) * extent * static_cast<double>(scale)));
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
  if (c.node().op_type() == "Upsample" && c.opset() < 9)
    s.scales = c.attr_floats("scales");
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
    if (c.has_input(1)) s.roi = c.constant_floats(1, "roi");
    if (s.roi.empty()) {
      s.roi.assign(static_cast<size_t>(rank), 0.0f);
      s.roi.resize(2 * static_cast<size_t>(rank), 1.0f);
    }
    if (s.roi.size() != 2 * static_cast<size_t>(rank))
      c.fail("roi has " + std::to_string(s.roi.size()) +
             " values, expected 2 * rank = " + std::to_string(2 * rank));
  }
  if (c.has_input(2)) s.scales = c.constant_floats(2, "scales");
  if (c.has_input(3)) s.sizes = c.constant_ints(3, "sizes");
  if (!s.scales.empty() && !s.sizes.empty()) c.fail("both scales and sizes are given; ONNX allows only one");
  if (s.scales.empty() && s.sizes.empty()) c.fail("neither scales nor sizes is given");
  if (!s.sizes.empty() && s.sizes.size() != static_cast<size_t>(rank))
    c.fail("sizes has " + std::to_string(s.sizes.size()) + " values, input rank is " + std::to_string(rank));
  return s;
}

void lower_resize(LowerContext& c) {
  const Shape in = c.input_spec(0).shape;
  const bool legacy = c.node().op_type() == "Upsample" || c.opset() < 11;
  ResizeSpec s = legacy ? legacy_spec(c) : resize11_spec(c, in.rank());
  check_mode(c, s.mode);
  if (s.sizes.empty()) s.sizes = sizes_from_scales(c, s, in);
  for (size_t a = 0; a < s.sizes.size(); ++a)
    if (s.sizes[a] < 0) c.fail("output size of axis " + std::to_string(a) + " is negative");

  ir::Attrs attrs;
  attrs.set("sizes", s.sizes);
  if (!s.scales.empty()) attrs.set("scales", s.scales);
  attrs.set("mode", s.mode);
  attrs.set("coordinate_transformation_mode", s.coord);
  attrs.set("nearest_mode", s.nearest);
  if (!legacy) {
    attrs.set("cubic_coeff_a", c.attr_float("cubic_coeff_a", -0.75f));
    attrs.set("exclude_outside", c.attr_int("exclude_outside", 0));
    attrs.set("extrapolation_value", c.attr_float("extrapolation_value", 0.0f));
  }
  if (!s.roi.empty()) attrs.set("roi", s.roi);
  c.set_output(0, c.emit1(EdgeOp::Resize, {c.input(0)}, std::move(attrs)));
}

}  // namespace

void register_resize_lowerings() {
  register_lowering("Resize", {lower_resize, 10, 17});
  register_lowering("Upsample", {lower_resize, 7, 17});  // deprecated in 10, still in use
}

}  // namespace etc::onnx_import
