// Data movement: reshape → static_reshape, pad → static_constant_pad,
// resize → static_resize_bilinear_2d, depth_to_space → depth_to_space. 4-D
// tensors are NHWC here, so shapes and pads are given in NHWC order.
#include "partitioners/xnnpack/xnnpack_rules.h"
#include "preprocessors/xnnpack/lowering.h"

namespace etc::xnnpack {
namespace {

// xnnpack.h flag values (the compiler does not depend on XNNPACK itself).
constexpr uint32_t kFlagTensorflowLegacyMode = 0x00000004;
constexpr uint32_t kFlagAlignCorners = 0x00000008;

void emit_pad(Lowering& l, const ir::Node& n, NodeRecord& r) {
  const int rank = shape_of(l.graph(), n.inputs[0]).rank();
  const std::vector<int64_t> pads = attr_ints(n, "pads");
  std::vector<uint64_t> pre(rank), post(rank);
  for (int i = 0; i < rank; ++i) {
    pre[i] = static_cast<uint64_t>(pads[i]);
    post[i] = static_cast<uint64_t>(pads[rank + i]);
  }
  if (rank == 4) {
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

}  // namespace

void emit_shape(Lowering& l, const ir::Node& n) {
  const uint32_t in = l.value(n.inputs[0]);
  const uint32_t out = l.value(n.outputs[0]);
  const Shape& y = shape_of(l.graph(), n.outputs[0]);
  fb::NodeType type = fb::NodeType::StaticReshape;
  if (n.op == EdgeOp::Pad) type = fb::NodeType::StaticConstantPad;
  if (n.op == EdgeOp::Resize) type = fb::NodeType::StaticResizeBilinear2d;
  if (n.op == EdgeOp::DepthToSpace) type = fb::NodeType::DepthToSpace;
  NodeRecord& r = l.add_node(type, n);
  r.inputs = {in};
  r.outputs = {out};
  switch (n.op) {
    case EdgeOp::Reshape: r.new_shape = xnn_dims(y); break;
    case EdgeOp::Pad: emit_pad(l, n, r); break;
    case EdgeOp::Resize:
      r.new_shape = {uint64_t(y[2]), uint64_t(y[3])};
      r.flags = resize_flags(n);
      break;
    default: r.block_size = static_cast<uint32_t>(attr_int(n, "blocksize", 1)); break;
  }
}

}  // namespace etc::xnnpack
