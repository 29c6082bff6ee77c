#include "runtime/backends/xnnpack/subgraph_builder.h"

#include <string>

#include "runtime/backends/xnnpack/node_checks.h"

namespace etc::xnnpack {
namespace {

using fb::NodeType;

// Everything a node definition needs: the subgraph and blob-id -> XNNPACK-id.
struct Definer {
  xnn_subgraph_t subgraph;
  const std::vector<uint32_t>& ids;
  const fb::Node& node;

  uint32_t in(size_t i) const {
    return i < node.inputs()->size() ? ids[node.inputs()->Get(static_cast<flatbuffers::uoffset_t>(i))]
                                     : XNN_INVALID_VALUE_ID;
  }
  uint32_t out() const { return ids[node.outputs()->Get(0)]; }
  // Parameters were checked by check_node; absent ones take their defaults.
  static uint32_t at(const flatbuffers::Vector<uint32_t>* v, size_t i, uint32_t fill) {
    return v == nullptr ? fill : v->Get(static_cast<flatbuffers::uoffset_t>(i));
  }
  uint32_t pad(size_t i) const { return at(node.padding(), i, 0); }
  uint32_t kernel(size_t i) const { return at(node.kernel(), i, 1); }
  uint32_t stride(size_t i) const { return at(node.stride(), i, 1); }
  uint32_t dilation(size_t i) const { return at(node.dilation(), i, 1); }
  float lo() const { return node.output_min(); }
  float hi() const { return node.output_max(); }
};

xnn_status define_convolution(const Definer& d) {
  const fb::Node& n = d.node;
  return xnn_define_convolution_2d(d.subgraph, d.pad(0), d.pad(1), d.pad(2), d.pad(3), d.kernel(0),
                                   d.kernel(1), d.stride(0), d.stride(1), d.dilation(0), d.dilation(1),
                                   n.groups(), n.group_input_channels(), n.group_output_channels(), d.lo(),
                                   d.hi(), d.in(0), d.in(1), d.in(2), d.out(), n.flags());
}

xnn_status define_depthwise(const Definer& d) {
  const fb::Node& n = d.node;
  return xnn_define_depthwise_convolution_2d(d.subgraph, d.pad(0), d.pad(1), d.pad(2), d.pad(3), d.kernel(0),
                                             d.kernel(1), d.stride(0), d.stride(1), d.dilation(0),
                                             d.dilation(1), n.depth_multiplier(), n.input_channels(), d.lo(),
                                             d.hi(), d.in(0), d.in(1), d.in(2), d.out(), n.flags());
}

xnn_status define_deconvolution(const Definer& d) {
  const fb::Node& n = d.node;
  return xnn_define_deconvolution_2d(
      d.subgraph, d.pad(0), d.pad(1), d.pad(2), d.pad(3), Definer::at(n.adjustment(), 0, 0),
      Definer::at(n.adjustment(), 1, 0), d.kernel(0), d.kernel(1), d.stride(0), d.stride(1), d.dilation(0),
      d.dilation(1), n.groups(), n.group_input_channels(), n.group_output_channels(), d.lo(), d.hi(), d.in(0),
      d.in(1), d.in(2), d.out(), n.flags());
}

xnn_status define_fully_connected(const Definer& d) {
  return xnn_define_fully_connected(d.subgraph, d.lo(), d.hi(), d.in(0), d.in(1), d.in(2), d.out(),
                                    d.node.flags());
}

xnn_status define_max_pooling(const Definer& d) {
  return xnn_define_max_pooling_2d(d.subgraph, d.pad(0), d.pad(1), d.pad(2), d.pad(3), d.kernel(0),
                                   d.kernel(1), d.stride(0), d.stride(1), d.dilation(0), d.dilation(1),
                                   d.lo(), d.hi(), d.in(0), d.out(), d.node.flags());
}

xnn_status define_average_pooling(const Definer& d) {
  return xnn_define_average_pooling_2d(d.subgraph, d.pad(0), d.pad(1), d.pad(2), d.pad(3), d.kernel(0),
                                       d.kernel(1), d.stride(0), d.stride(1), d.lo(), d.hi(), d.in(0),
                                       d.out(), d.node.flags());
}

xnn_status define_global_average_pooling(const Definer& d) {
  return xnn_define_global_average_pooling_2d(d.subgraph, d.lo(), d.hi(), d.in(0), d.out(), d.node.flags());
}

xnn_status define_add(const Definer& d) {
  return xnn_define_add2(d.subgraph, d.lo(), d.hi(), d.in(0), d.in(1), d.out(), d.node.flags());
}
xnn_status define_subtract(const Definer& d) {
  return xnn_define_subtract(d.subgraph, d.lo(), d.hi(), d.in(0), d.in(1), d.out(), d.node.flags());
}
xnn_status define_multiply(const Definer& d) {
  return xnn_define_multiply2(d.subgraph, d.lo(), d.hi(), d.in(0), d.in(1), d.out(), d.node.flags());
}
xnn_status define_divide(const Definer& d) {
  return xnn_define_divide(d.subgraph, d.lo(), d.hi(), d.in(0), d.in(1), d.out(), d.node.flags());
}
xnn_status define_maximum(const Definer& d) {
  return xnn_define_maximum2(d.subgraph, d.in(0), d.in(1), d.out(), d.node.flags());
}
xnn_status define_minimum(const Definer& d) {
  return xnn_define_minimum2(d.subgraph, d.in(0), d.in(1), d.out(), d.node.flags());
}
xnn_status define_squared_difference(const Definer& d) {
  return xnn_define_squared_difference(d.subgraph, d.in(0), d.in(1), d.out(), d.node.flags());
}

xnn_status define_clamp(const Definer& d) {
  return xnn_define_clamp(d.subgraph, d.lo(), d.hi(), d.in(0), d.out(), d.node.flags());
}
xnn_status define_leaky_relu(const Definer& d) {
  return xnn_define_leaky_relu(d.subgraph, d.node.alpha(), d.in(0), d.out(), d.node.flags());
}
xnn_status define_elu(const Definer& d) {
  return xnn_define_elu(d.subgraph, d.node.alpha(), d.in(0), d.out(), d.node.flags());
}
// The unary nodes that take no parameter: define_sigmoid, define_abs, ...
#define ETC_XNN_UNARY(name, xnn_define) \
  xnn_status name(const Definer& d) { return xnn_define(d.subgraph, d.in(0), d.out(), d.node.flags()); }
ETC_XNN_UNARY(define_sigmoid, xnn_define_sigmoid)
ETC_XNN_UNARY(define_softmax, xnn_define_softmax)
ETC_XNN_UNARY(define_hardswish, xnn_define_hardswish)
ETC_XNN_UNARY(define_abs, xnn_define_abs)
ETC_XNN_UNARY(define_negate, xnn_define_negate)
ETC_XNN_UNARY(define_floor, xnn_define_floor)
ETC_XNN_UNARY(define_ceiling, xnn_define_ceiling)
ETC_XNN_UNARY(define_bankers_rounding, xnn_define_bankers_rounding)
ETC_XNN_UNARY(define_square, xnn_define_square)
ETC_XNN_UNARY(define_square_root, xnn_define_square_root)
#undef ETC_XNN_UNARY

xnn_status define_prelu(const Definer& d) {
  return xnn_define_prelu(d.subgraph, d.in(0), d.in(1), d.out(), d.node.flags());
}

xnn_status define_constant_pad(const Definer& d) {
  size_t pre[kMaxTensorRank] = {}, post[kMaxTensorRank] = {};
  for (flatbuffers::uoffset_t i = 0; i < d.node.pre_paddings()->size(); ++i) {
    pre[i] = static_cast<size_t>(d.node.pre_paddings()->Get(i));
    post[i] = static_cast<size_t>(d.node.post_paddings()->Get(i));
  }
  return xnn_define_static_constant_pad(d.subgraph, pre, post, d.node.padding_value(), d.in(0), d.out(),
                                        d.node.flags());
}

xnn_status define_reshape(const Definer& d) {
  size_t shape[kMaxTensorRank] = {};
  const auto* v = d.node.new_shape();
  for (flatbuffers::uoffset_t i = 0; i < v->size(); ++i) shape[i] = static_cast<size_t>(v->Get(i));
  return xnn_define_static_reshape(d.subgraph, v->size(), shape, d.in(0), d.out(), d.node.flags());
}

xnn_status define_resize(const Definer& d) {
  const auto* v = d.node.new_shape();
  return xnn_define_static_resize_bilinear_2d(d.subgraph, static_cast<size_t>(v->Get(0)),
                                              static_cast<size_t>(v->Get(1)), d.in(0), d.out(),
                                              d.node.flags());
}

xnn_status define_depth_to_space(const Definer& d) {
  return xnn_define_depth_to_space(d.subgraph, d.in(0), d.out(), d.node.block_size(), d.node.flags());
}

// A kind node_kinds.def does not list cannot reach here (check_node refuses
// it); it would be refused again rather than defined as something else.
xnn_status define_node(const Definer& d) {
  switch (d.node.type()) {
#define ETC_XNN_NODE(kind, min_in, max_in, packed, range, check, define) \
  case NodeType::kind:                                                   \
    return define(d);
#include "runtime/backends/xnnpack/node_kinds.def"
#undef ETC_XNN_NODE
    default: return xnn_status_invalid_parameter;
  }
}

Failure rejected(const std::string& what, xnn_status status) {
  return fail(Error::DelegateInvalidCompatibility, "xnnpack: XNNPACK rejected ", what, " (",
              xnn_status_name(status), ")");
}

}  // namespace

const char* xnn_status_name(xnn_status status) {
  switch (status) {
    case xnn_status_success: return "xnn_status_success";
    case xnn_status_uninitialized: return "xnn_status_uninitialized";
    case xnn_status_invalid_parameter: return "xnn_status_invalid_parameter";
    case xnn_status_invalid_state: return "xnn_status_invalid_state";
    case xnn_status_unsupported_parameter: return "xnn_status_unsupported_parameter";
    case xnn_status_unsupported_hardware: return "xnn_status_unsupported_hardware";
    case xnn_status_out_of_memory: return "xnn_status_out_of_memory";
  }
  return "unknown xnn_status";
}

Result<SubgraphPtr> build_subgraph(const BlobView& view, const std::vector<const void*>& constant_data,
                                   const StagePlan& plan, size_t stage_index,
                                   std::vector<uint32_t>& externals) {
  const Stage& stage = plan.stages[stage_index];
  const auto* nodes = view.graph->nodes();
  // The tensors this stage reads or writes, and which of them it produces.
  std::vector<bool> used(view.tensors.size(), false), produced(view.tensors.size(), false);
  for (size_t n = stage.first_node; n < stage.end_node; ++n) {
    if (plan.elided[n]) continue;
    const fb::Node& node = *nodes->Get(static_cast<flatbuffers::uoffset_t>(n));
    for (uint32_t id : *node.inputs()) used[id] = true;
    for (uint32_t id : *node.outputs()) used[id] = produced[id] = true;
  }
  externals.clear();
  for (size_t t = 0; t < view.tensors.size(); ++t)
    if (used[t] && plan.shared[t]) externals.push_back(static_cast<uint32_t>(t));

  xnn_subgraph_t raw = nullptr;
  if (xnn_status s = xnn_create_subgraph(static_cast<uint32_t>(externals.size()), 0, &raw);
      s != xnn_status_success)
    return rejected("a subgraph", s);
  SubgraphPtr subgraph(raw);

  std::vector<uint32_t> ids(view.tensors.size(), XNN_INVALID_VALUE_ID);
  uint32_t next_external = 0;
  for (size_t t = 0; t < view.tensors.size(); ++t) {
    if (!used[t]) continue;
    const TensorInfo& info = view.tensors[t];
    uint32_t external_id = XNN_INVALID_VALUE_ID, flags = 0;
    if (plan.shared[t]) {
      external_id = next_external++;
      flags = produced[t] ? XNN_VALUE_FLAG_EXTERNAL_OUTPUT : XNN_VALUE_FLAG_EXTERNAL_INPUT;
    }
    if (xnn_status s = xnn_define_tensor_value(subgraph.get(), xnn_datatype_fp32, info.rank, info.dims,
                                               constant_data[t], external_id, flags, &ids[t]);
        s != xnn_status_success)
      return rejected("tensor " + std::to_string(t) + " " + dims_string(info), s);
  }

  for (size_t n = stage.first_node; n < stage.end_node; ++n) {
    if (plan.elided[n]) continue;
    const fb::Node& node = *nodes->Get(static_cast<flatbuffers::uoffset_t>(n));
    if (xnn_status s = define_node(Definer{subgraph.get(), ids, node}); s != xnn_status_success)
      return rejected(node_name(node, n), s);
  }
  return subgraph;
}

}  // namespace etc::xnnpack
