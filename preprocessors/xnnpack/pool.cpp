// max_pool → max_pooling_2d; avg_pool → average_pooling_2d, or
// global_average_pooling_2d when the window covers the whole image.
#include "partitioners/xnnpack/xnnpack_rules.h"
#include "preprocessors/xnnpack/lowering.h"

namespace etc::xnnpack {

void emit_pool(Lowering& l, const ir::Node& n) {
  const uint32_t in = l.value(n.inputs[0]);
  const uint32_t out = l.value(n.outputs[0]);
  if (is_global_avg_pool(l.graph(), n)) {
    const Shape& y = shape_of(l.graph(), n.outputs[0]);
    if (y.rank() == 4) {
      NodeRecord& r = l.add_node(fb::NodeType::GlobalAveragePooling2d, n);
      r.inputs = {in};
      r.outputs = {out};
      return;
    }
    // reduce_mean without keepdims: pool to [N, 1, 1, C], then drop the
    // unit dimensions (the same bytes).
    TensorRecord pooled;
    pooled.dims = {uint64_t(y[0]), 1, 1, uint64_t(y[1])};
    const uint32_t mid = l.blob().add_tensor(std::move(pooled));
    NodeRecord& pool = l.add_node(fb::NodeType::GlobalAveragePooling2d, n);
    pool.inputs = {in};
    pool.outputs = {mid};
    NodeRecord& reshape = l.add_node(fb::NodeType::StaticReshape, n);
    reshape.inputs = {mid};
    reshape.outputs = {out};
    reshape.new_shape = {uint64_t(y[0]), uint64_t(y[1])};
    return;
  }
  const bool max = n.op == EdgeOp::MaxPool;
  NodeRecord& r = l.add_node(max ? fb::NodeType::MaxPooling2d : fb::NodeType::AveragePooling2d, n);
  r.inputs = {in};
  r.outputs = {out};
  const std::vector<int64_t> p = attr_ints(n, "pads"), k = attr_ints(n, "kernel_shape"),
                             s = attr_ints(n, "strides"), d = attr_ints(n, "dilations");
  const std::vector<int64_t> extra = pool_ceil_padding(l.graph(), n);  // ceil_mode
  r.padding = {uint32_t(p[0]), uint32_t(p[3] + extra[1]), uint32_t(p[2] + extra[0]), uint32_t(p[1])};
  r.kernel = {uint32_t(k[0]), uint32_t(k[1])};
  r.stride = {uint32_t(s[0]), uint32_t(s[1])};
  if (max) r.dilation = {uint32_t(d[0]), uint32_t(d[1])};
}

}  // namespace etc::xnnpack
