// Data movement: reshape → static_reshape, pad → static_constant_pad,
// resize → static_resize_bilinear_2d (linear) or the native ResizeNearest,
// depth_to_space → depth_to_space. Shapes and pads are given in each
// tensor's blob order (NHWC for the 4-D activations planned so).
#include "compiler/common/compile_error.h"
#include "partitioners/xnnpack/xnnpack_rules.h"
#include "preprocessors/xnnpack/lowering.h"
#include "runtime/kernels/portable/resize_plan.h"

namespace etc::xnnpack {
namespace {

// xnnpack.h flag values (the compiler does not depend on XNNPACK itself).
constexpr uint32_t kFlagTensorflowLegacyMode = 0x00000004;
constexpr uint32_t kFlagAlignCorners = 0x00000008;

void emit_pad(Lowering& l, const ir::Node& n, NodeRecord& r) {
  const int rank = shape_of(l.graph(), n.inputs[0]).rank();
  const bool nhwc = l.nhwc(n.inputs[0]);
  const std::vector<int64_t> pads = attr_ints(n, "pads");
  std::vector<uint64_t> pre(rank), post(rank);
  for (int i = 0; i < rank; ++i) {
    pre[i] = static_cast<uint64_t>(pads[i]);
    post[i] = static_cast<uint64_t>(pads[rank + i]);
  }
  if (rank == 4 && nhwc) {
    pre = {pre[0], pre[2], pre[3], pre[1]};
    post = {post[0], post[2], post[3], post[1]};
  }
  r.pre_paddings = pre;
  r.post_paddings = post;
  r.padding_value = attr_float(n, "value", 0.0f);
}

uint32_t resize_flags(const ir::Node& n) {
  const std::string ctm = attr_string(n, "coordinate_transformation_mode", "half_pixel");
  if (ctm == "align_corners") return kFlagAlignCorners;
  if (ctm == "asymmetric") return kFlagTensorflowLegacyMode;
  return 0;  // half-pixel centres
}

// A reshape reorders elements unless both sides hold ONNX order (or have the
// same bytes in either layout).
void emit_reshape(Lowering& l, const ir::Node& n) {
  const ir::ValueId x = n.inputs[0], y = n.outputs[0];
  const uint32_t in = layout_free(shape_of(l.graph(), x)) ? l.value(x) : l.value_as(x, false);
  const bool out_nhwc = layout_free(shape_of(l.graph(), y)) && l.nhwc(y);
  const uint32_t out = l.output_as(y, out_nhwc);
  NodeRecord& r = l.add_node(fb::NodeType::StaticReshape, n);
  r.inputs = {in};
  r.outputs = {out};
  r.new_shape = xnn_dims(shape_of(l.graph(), y), out_nhwc);
  // A target dim that follows the input (bounded dynamic shapes) takes
  // what the others leave, in the output's blob order.
  if (const int64_t dim = attr_int(n, "infer_dim", -1); dim >= 0)
    r.infer_dim = static_cast<int32_t>(stored_axes(shape_of(l.graph(), y).rank(), out_nhwc)[dim]);
}

// A resize whose output follows the input (sizes_from_scales): the blob
// keeps the height and width scales, from which the runtime recomputes the
// output size (and a nearest resize's source indices) when it resizes.
void set_follow_scales(const ir::Node& n, NodeRecord& r) {
  if (attr_int(n, "sizes_from_scales", 0) == 0) return;
  const ir::AttrValue* a = n.attrs.find("scales");
  const auto* v = a ? std::get_if<std::vector<float>>(a) : nullptr;
  if (v == nullptr || v->size() != 4)
    throw CompileError("xnnpack: a resize that follows its input has no scales");
  r.scales = {(*v)[2], (*v)[3]};
}

ResizeAxisParams nearest_axis(const ir::Node& n, int axis, int64_t in_len, int64_t out_len) {
  ResizeAxisParams p;
  p.mode = ResizeMode::Nearest;
  auto coord = parse_resize_coord_mode(attr_string(n, "coordinate_transformation_mode", "half_pixel"));
  auto nearest = parse_resize_nearest_mode(attr_string(n, "nearest_mode", "round_prefer_floor"));
  if (!coord.ok() || !nearest.ok())
    throw CompileError("xnnpack: resize with an unknown coordinate or nearest mode");
  p.coord = *coord;
  p.nearest = *nearest;
  p.in_len = in_len;
  p.out_len = out_len;
  const std::vector<float> scales = [&] {
    const ir::AttrValue* a = n.attrs.find("scales");
    const auto* v = a ? std::get_if<std::vector<float>>(a) : nullptr;
    return v ? *v : std::vector<float>{};
  }();
  if (static_cast<size_t>(axis) < scales.size()) p.scale = scales[static_cast<size_t>(axis)];
  return p;
}

// Nearest resize: the source row of each output row and column of each
// column, from the portable kernel's own sampling plan.
void emit_resize_nearest(Lowering& l, const ir::Node& n) {
  const Shape& x = shape_of(l.graph(), n.inputs[0]);
  const Shape& y = shape_of(l.graph(), n.outputs[0]);
  const uint32_t in = l.value_as(n.inputs[0], true);
  const uint32_t out = l.output_as(n.outputs[0], true);
  NodeRecord& r = l.add_node(fb::NodeType::ResizeNearest, n);
  r.inputs = {in};
  r.outputs = {out};
  for (int axis = 2; axis < 4; ++axis)
    for (const ResizeTaps& t : resize_axis_taps(nearest_axis(n, axis, x[axis], y[axis]))) {
      if (t.count != 1 || t.extrapolate)
        throw CompileError("xnnpack: nearest resize sample is not one pixel");
      r.indices.push_back(static_cast<uint64_t>(t.index[0]));
    }
  set_follow_scales(n, r);
  const ResizeAxisParams p = nearest_axis(n, 2, x[2], y[2]);
  r.coord_mode = static_cast<uint8_t>(p.coord);
  r.nearest_mode = static_cast<uint8_t>(p.nearest);
}

}  // namespace

void emit_shape(Lowering& l, const ir::Node& n) {
  if (n.op == EdgeOp::Reshape) return emit_reshape(l, n);
  if (n.op == EdgeOp::Resize && attr_string(n, "mode", "nearest") == "nearest")
    return emit_resize_nearest(l, n);
  const uint32_t in = l.value(n.inputs[0]);
  const uint32_t out = l.value(n.outputs[0]);
  const Shape& y = shape_of(l.graph(), n.outputs[0]);
  fb::NodeType type = fb::NodeType::StaticConstantPad;
  if (n.op == EdgeOp::Resize) type = fb::NodeType::StaticResizeBilinear2d;
  if (n.op == EdgeOp::DepthToSpace) type = fb::NodeType::DepthToSpace;
  NodeRecord& r = l.add_node(type, n);
  r.inputs = {in};
  r.outputs = {out};
  switch (n.op) {
    case EdgeOp::Pad: emit_pad(l, n, r); break;
    case EdgeOp::Resize:
      r.new_shape = {uint64_t(y[2]), uint64_t(y[3])};
      r.flags = resize_flags(n);
      set_follow_scales(n, r);
      break;
    default: r.block_size = static_cast<uint32_t>(attr_int(n, "blocksize", 1)); break;
  }
}

}  // namespace etc::xnnpack
