// Rules for data-movement ops: reshape, pad, resize, depth_to_space.
#include <cmath>

#include "partitioners/xnnpack/xnnpack_rules.h"

namespace etc::xnnpack {
namespace {

Support no_runtime_arguments(const ir::Graph& g, const ir::Node& n, const char* what) {
  for (size_t i = 1; i < n.inputs.size(); ++i)
    if (present(n, i) && !is_constant(g, n.inputs[i]))
      return Support::no(std::string("xnnpack: ") + what + " with an argument computed at run time");
  return Support::yes();
}

}  // namespace

Support reshape_rule(const ir::Graph& g, const ir::Node& n) { return no_runtime_arguments(g, n, "reshape"); }

Support pad_rule(const ir::Graph& /*g*/, const ir::Node& n) {
  if (present(n, 1) || present(n, 2)) return Support::no("xnnpack: pad with pads or value given as inputs");
  const std::string mode = attr_string(n, "mode", "constant");
  if (mode != "constant") return Support::no("xnnpack: pad in " + mode + " mode (constant only)");
  for (int64_t p : attr_ints(n, "pads"))
    if (p < 0) return Support::no("xnnpack: pad with negative pads (cropping)");
  return Support::yes();
}

Support resize_rule(const ir::Graph& g, const ir::Node& n) {
  Support s = no_runtime_arguments(g, n, "resize");
  if (!s.supported) return s;
  const std::string mode = attr_string(n, "mode", "nearest");
  if (mode != "linear" && mode != "nearest")
    return Support::no("xnnpack: resize in " + mode + " mode (nearest and bilinear only)");
  const Shape& x = shape_of(g, n.inputs[0]);
  const Shape& y = shape_of(g, n.outputs[0]);
  if (x.rank() != 4 || x[0] != y[0] || x[1] != y[1])
    return Support::no("xnnpack: resize of other than the two spatial axes of a 4-D tensor");
  const std::string ctm = attr_string(n, "coordinate_transformation_mode", "half_pixel");
  if (mode == "nearest") {
    if (ctm == "tf_crop_and_resize") return Support::no("xnnpack: nearest resize in tf_crop_and_resize mode");
    return Support::yes();  // any other coordinate and rounding mode: a gather planned at compile time
  }
  if (ctm != "half_pixel" && ctm != "align_corners" && ctm != "asymmetric" && ctm != "pytorch_half_pixel")
    return Support::no("xnnpack: resize with coordinate_transformation_mode " + ctm);
  if (ctm == "pytorch_half_pixel" && (y[2] == 1 || y[3] == 1))
    return Support::no("xnnpack: resize in pytorch_half_pixel mode to a size of 1");
  // XNNPACK derives its scale from the sizes; ONNX scales must agree.
  const ir::AttrValue* scales = n.attrs.find("scales");
  if (const auto* v = scales ? std::get_if<std::vector<float>>(scales) : nullptr) {
    for (int i = 2; i < 4 && static_cast<size_t>(i) < v->size(); ++i)
      if ((*v)[i] != static_cast<float>(y[i]) / static_cast<float>(x[i]))
        return Support::no("xnnpack: resize with scales that differ from output size / input size");
  }
  return Support::yes();
}

Support depth_to_space_rule(const ir::Graph& g, const ir::Node& n) {
  if (shape_of(g, n.inputs[0]).rank() != 4) return Support::no("xnnpack: depth_to_space of a non-4-D tensor");
  const std::string mode = attr_string(n, "mode", "DCR");
  if (mode != "DCR")
    return Support::no("xnnpack: depth_to_space in " + mode + " mode (XNNPACK orders channels DCR)");
  return Support::yes();
}

}  // namespace etc::xnnpack
