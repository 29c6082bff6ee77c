#include "runtime/backends/xnnpack/node_checks.h"

#include <xnnpack.h>

#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <string>

#include "runtime/backends/xnnpack/native_ops.h"

namespace etc::xnnpack {
namespace {

using fb::NodeType;
using UintVector = flatbuffers::Vector<uint32_t>;

// No node kind takes more inputs (node_kinds.def).
constexpr size_t kMaxNodeInputs = 3;

struct NodeCheck {
  const BlobView& view;
  const fb::Node& node;
  size_t index;
  const TensorInfo* in[kMaxNodeInputs] = {};
  uint32_t in_ids[kMaxNodeInputs] = {};
  size_t num_in = 0;
  const TensorInfo* out = nullptr;
  uint32_t out_id = 0;

  Failure error(const std::string& what) const {
    return fail(Error::InvalidProgram, "xnnpack: invalid blob: ", node_name(node, index), ": ", what);
  }
  std::string input_name(size_t i) const {
    return "input " + std::to_string(i) + " (tensor " + std::to_string(in_ids[i]) + ")";
  }
  std::string output_name() const { return "output (tensor " + std::to_string(out_id) + ")"; }
};

Status expect_dims(const NodeCheck& c, const TensorInfo& t, const std::string& role,
                   std::initializer_list<uint64_t> dims) {
  bool same = t.rank == dims.size();
  size_t d = 0;
  std::string expected = "[";
  for (uint64_t dim : dims) {
    same = same && t.dims[d] == dim;
    expected += (d ? ", " : "") + std::to_string(dim);
    ++d;
  }
  if (same) return Status::Ok();
  return c.error(role + " has dims " + dims_string(t) + ", expected " + expected + "]");
}

Status expect_rank(const NodeCheck& c, const TensorInfo& t, const std::string& role, size_t rank) {
  if (t.rank == rank) return Status::Ok();
  return c.error(role + " has dims " + dims_string(t) + ", expected rank " + std::to_string(rank));
}

Status expect_constant(const NodeCheck& c, size_t i) {
  if (c.in[i]->is_constant()) return Status::Ok();
  return c.error(c.input_name(i) + " must be a constant (XNNPACK packs it when the runtime is created)");
}

Status expect_flags(const NodeCheck& c, uint32_t allowed) {
  if ((c.node.flags() & ~allowed) == 0) return Status::Ok();
  char text[80];  // the longest message is 65 bytes with its terminator
  std::snprintf(text, sizeof(text), "flags 0x%x not allowed for this node (allowed: 0x%x)",
                static_cast<unsigned>(c.node.flags()), static_cast<unsigned>(allowed));
  return c.error(text);
}

// The largest count or window parameter a node may declare (channels,
// groups, kernel, stride, padding...): far below what XNNPACK takes, and
// small enough that every product of them stays exact.
constexpr uint64_t kMaxDeclaredCount = uint64_t{1} << 24;

// Reads an optional [uint] parameter of `n` entries; absent means `fill`.
Status read_params(const NodeCheck& c, const UintVector* v, const char* name, size_t n, uint32_t fill,
                   uint32_t minimum, uint32_t* out) {
  if (v != nullptr && v->size() != n)
    return c.error(std::string(name) + " has " + std::to_string(v->size()) + " entries, expected " +
                   std::to_string(n));
  for (size_t i = 0; i < n; ++i) {
    out[i] = v == nullptr ? fill : v->Get(static_cast<flatbuffers::uoffset_t>(i));
    if (out[i] < minimum || out[i] > kMaxDeclaredCount)
      return c.error(std::string(name) + "[" + std::to_string(i) + "] = " + std::to_string(out[i]) +
                     " is out of range (" + std::to_string(minimum) + " to " +
                     std::to_string(kMaxDeclaredCount) + ")");
  }
  return Status::Ok();
}

// Window geometry shared by convolutions and pooling.
struct Window {
  uint32_t padding[4];  // top, right, bottom, left
  uint32_t kernel[2];
  uint32_t stride[2];
  uint32_t dilation[2];
};

Status read_window(const NodeCheck& c, Window& w, bool has_dilation) {
  if (c.node.kernel() == nullptr) return c.error("kernel size missing");
  ETC_TRY(read_params(c, c.node.kernel(), "kernel", 2, 1, 1, w.kernel));
  ETC_TRY(read_params(c, c.node.stride(), "stride", 2, 1, 1, w.stride));
  ETC_TRY(read_params(c, has_dilation ? c.node.dilation() : nullptr, "dilation", 2, 1, 1, w.dilation));
  ETC_TRY(read_params(c, c.node.padding(), "padding", 4, 0, 0, w.padding));
  if ((c.node.flags() & XNN_FLAG_TENSORFLOW_SAME_PADDING) &&
      (w.padding[0] | w.padding[1] | w.padding[2] | w.padding[3]) != 0)
    return c.error("explicit padding together with TensorFlow SAME padding");
  return Status::Ok();
}

// Output height/width of a strided window over input `in` (NHWC), as
// XNNPACK's compute_output_dimension does.
Status window_output(const NodeCheck& c, const Window& w, const TensorInfo& in, uint64_t out_hw[2]) {
  for (int a = 0; a < 2; ++a) {
    const uint64_t size = in.dims[1 + a];
    if (c.node.flags() & XNN_FLAG_TENSORFLOW_SAME_PADDING) {
      out_hw[a] = (size + w.stride[a] - 1) / w.stride[a];
      continue;
    }
    const uint64_t padded = size + w.padding[a == 0 ? 0 : 3] + w.padding[a == 0 ? 2 : 1];
    const uint64_t extent = uint64_t{w.kernel[a] - 1} * w.dilation[a] + 1;
    if (padded < extent)
      return c.error("the " + std::string(a == 0 ? "height" : "width") + " window (" +
                     std::to_string(extent) + ") is larger than the padded input (" + std::to_string(padded) +
                     ")");
    out_hw[a] = (padded - extent) / w.stride[a] + 1;
  }
  return Status::Ok();
}

Status check_bias(const NodeCheck& c, uint64_t channels) {
  if (c.num_in < 3) return Status::Ok();
  ETC_TRY(expect_constant(c, 2));
  return expect_dims(c, *c.in[2], c.input_name(2) + " (bias)", {channels});
}

bool in_channel_range(std::initializer_list<uint64_t> counts) {
  for (uint64_t n : counts)
    if (n == 0 || n > kMaxDeclaredCount) return false;
  return true;
}

std::string channel_range_error(const char* what) {
  return std::string(what) + " must be between 1 and " + std::to_string(kMaxDeclaredCount);
}

// A grouped convolution's (or deconvolution's) input, filter and bias, for
// `groups` groups of `gic` input and `goc` output channels.
Status check_grouped_operands(const NodeCheck& c, const Window& w, uint64_t groups, uint64_t gic,
                              uint64_t goc) {
  if (!in_channel_range({groups, gic, goc}))
    return c.error(channel_range_error("groups and group channel counts"));
  const TensorInfo& x = *c.in[0];
  ETC_TRY(expect_rank(c, x, c.input_name(0), 4));
  ETC_TRY(expect_dims(c, x, c.input_name(0), {x.dims[0], x.dims[1], x.dims[2], groups * gic}));
  ETC_TRY(expect_constant(c, 1));
  ETC_TRY(
      expect_dims(c, *c.in[1], c.input_name(1) + " (filter)", {groups * goc, w.kernel[0], w.kernel[1], gic}));
  return check_bias(c, groups * goc);
}

Status check_convolution(const NodeCheck& c) {
  ETC_TRY(expect_flags(c, XNN_FLAG_TENSORFLOW_SAME_PADDING));
  Window w;
  ETC_TRY(read_window(c, w, true));
  const uint64_t groups = c.node.groups(), gic = c.node.group_input_channels(),
                 goc = c.node.group_output_channels();
  ETC_TRY(check_grouped_operands(c, w, groups, gic, goc));
  const TensorInfo& x = *c.in[0];
  uint64_t hw[2];
  ETC_TRY(window_output(c, w, x, hw));
  return expect_dims(c, *c.out, c.output_name(), {x.dims[0], hw[0], hw[1], groups * goc});
}

Status check_depthwise(const NodeCheck& c) {
  ETC_TRY(expect_flags(c, XNN_FLAG_TENSORFLOW_SAME_PADDING));
  Window w;
  ETC_TRY(read_window(c, w, true));
  const uint64_t channels = c.node.input_channels(), multiplier = c.node.depth_multiplier();
  if (!in_channel_range({channels, multiplier}))
    return c.error(channel_range_error("input_channels and depth_multiplier"));
  const TensorInfo& x = *c.in[0];
  ETC_TRY(expect_rank(c, x, c.input_name(0), 4));
  ETC_TRY(expect_dims(c, x, c.input_name(0), {x.dims[0], x.dims[1], x.dims[2], channels}));
  ETC_TRY(expect_constant(c, 1));
  ETC_TRY(expect_dims(c, *c.in[1], c.input_name(1) + " (filter)",
                      {1, w.kernel[0], w.kernel[1], channels * multiplier}));
  ETC_TRY(check_bias(c, channels * multiplier));
  uint64_t hw[2];
  ETC_TRY(window_output(c, w, x, hw));
  return expect_dims(c, *c.out, c.output_name(), {x.dims[0], hw[0], hw[1], channels * multiplier});
}

Status check_deconvolution(const NodeCheck& c) {
  ETC_TRY(expect_flags(c, 0));
  Window w;
  ETC_TRY(read_window(c, w, true));
  uint32_t adjustment[2];
  ETC_TRY(read_params(c, c.node.adjustment(), "adjustment", 2, 0, 0, adjustment));
  const uint64_t groups = c.node.groups(), gic = c.node.group_input_channels(),
                 goc = c.node.group_output_channels();
  ETC_TRY(check_grouped_operands(c, w, groups, gic, goc));
  const TensorInfo& x = *c.in[0];
  uint64_t hw[2];
  for (int a = 0; a < 2; ++a) {
    if (adjustment[a] >= w.stride[a]) return c.error("adjustment must be smaller than the stride");
    const uint64_t full = uint64_t{w.stride[a]} * (x.dims[1 + a] - 1) + adjustment[a] +
                          uint64_t{w.kernel[a] - 1} * w.dilation[a] + 1;
    const uint64_t cut = uint64_t{w.padding[a == 0 ? 0 : 3]} + w.padding[a == 0 ? 2 : 1];
    if (full <= cut) return c.error("padding removes the whole output");
    hw[a] = full - cut;
  }
  return expect_dims(c, *c.out, c.output_name(), {x.dims[0], hw[0], hw[1], groups * goc});
}

Status check_fully_connected(const NodeCheck& c) {
  ETC_TRY(expect_flags(c, XNN_FLAG_TRANSPOSE_WEIGHTS | XNN_FLAG_TENSORFLOW_RESHAPE_2D));
  ETC_TRY(expect_constant(c, 1));
  const TensorInfo& x = *c.in[0];
  const TensorInfo& filter = *c.in[1];
  ETC_TRY(expect_rank(c, filter, c.input_name(1) + " (filter)", 2));
  const bool transposed = c.node.flags() & XNN_FLAG_TRANSPOSE_WEIGHTS;
  const size_t in_channels = filter.dims[transposed ? 0 : 1], out_channels = filter.dims[transposed ? 1 : 0];
  const bool reshape_2d = c.node.flags() & XNN_FLAG_TENSORFLOW_RESHAPE_2D;
  if (x.rank == 0) return c.error(c.input_name(0) + " is a scalar");
  if (!reshape_2d && x.dims[x.rank - 1] != in_channels)
    return c.error(c.input_name(0) + " has dims " + dims_string(x) + ", expected " +
                   std::to_string(in_channels) + " input channels last");
  if (x.numel % in_channels != 0)
    return c.error(c.input_name(0) + " has " + std::to_string(x.numel) + " elements, not a multiple of " +
                   std::to_string(in_channels) + " input channels");
  ETC_TRY(check_bias(c, out_channels));
  const uint64_t batch = x.numel / in_channels;
  if (reshape_2d) return expect_dims(c, *c.out, c.output_name(), {batch, out_channels});
  bool same = c.out->rank == x.rank && c.out->dims[x.rank - 1] == out_channels;
  for (size_t d = 0; same && d + 1 < x.rank; ++d) same = c.out->dims[d] == x.dims[d];
  if (!same)
    return c.error(c.output_name() + " has dims " + dims_string(*c.out) +
                   ", expected the input's dims with " + std::to_string(out_channels) + " channels last");
  return Status::Ok();
}

Status check_pooling(const NodeCheck& c, bool has_dilation) {
  ETC_TRY(expect_flags(c, XNN_FLAG_TENSORFLOW_SAME_PADDING));
  Window w;
  ETC_TRY(read_window(c, w, has_dilation));
  if (uint64_t{w.kernel[0]} * w.kernel[1] < 2) return c.error("a 1x1 pooling window is not supported");
  const TensorInfo& x = *c.in[0];
  ETC_TRY(expect_rank(c, x, c.input_name(0), 4));
  uint64_t hw[2];
  ETC_TRY(window_output(c, w, x, hw));
  return expect_dims(c, *c.out, c.output_name(), {x.dims[0], hw[0], hw[1], x.dims[3]});
}

Status check_max_pooling(const NodeCheck& c) { return check_pooling(c, true); }
Status check_average_pooling(const NodeCheck& c) { return check_pooling(c, false); }

Status check_global_pooling(const NodeCheck& c) {
  ETC_TRY(expect_flags(c, 0));
  const TensorInfo& x = *c.in[0];
  ETC_TRY(expect_rank(c, x, c.input_name(0), 4));
  if (c.out->rank == 2) return expect_dims(c, *c.out, c.output_name(), {x.dims[0], x.dims[3]});
  return expect_dims(c, *c.out, c.output_name(), {x.dims[0], 1, 1, x.dims[3]});
}

Status check_binary(const NodeCheck& c) {
  ETC_TRY(expect_flags(c, 0));
  const TensorInfo& a = *c.in[0];
  const TensorInfo& b = *c.in[1];
  const size_t rank = a.rank > b.rank ? a.rank : b.rank;
  bool ok = c.out->rank == rank;
  for (size_t d = 0; ok && d < rank; ++d) {
    const size_t da = d + a.rank >= rank ? a.dims[d + a.rank - rank] : 1;
    const size_t db = d + b.rank >= rank ? b.dims[d + b.rank - rank] : 1;
    ok = (da == db || da == 1 || db == 1) && c.out->dims[d] == (da == 1 ? db : da);
  }
  if (!ok)
    return c.error(c.output_name() + " has dims " + dims_string(*c.out) + ", not the broadcast of " +
                   dims_string(a) + " and " + dims_string(b));
  return Status::Ok();
}

Status check_same_dims(const NodeCheck& c) {
  const TensorInfo& x = *c.in[0];
  bool same = c.out->rank == x.rank;
  for (size_t d = 0; same && d < x.rank; ++d) same = c.out->dims[d] == x.dims[d];
  if (!same)
    return c.error(c.output_name() + " has dims " + dims_string(*c.out) + ", expected " + dims_string(x));
  return Status::Ok();
}

Status check_unary(const NodeCheck& c) {
  ETC_TRY(expect_flags(c, 0));
  if (!std::isfinite(c.node.alpha())) return c.error("alpha is not finite");
  return check_same_dims(c);
}

Status check_softmax(const NodeCheck& c) {
  if (c.in[0]->rank == 0) return c.error("softmax of a scalar");
  return check_unary(c);
}

Status check_prelu(const NodeCheck& c) {
  ETC_TRY(expect_flags(c, 0));
  ETC_TRY(expect_constant(c, 1));
  const TensorInfo& x = *c.in[0];
  ETC_TRY(expect_rank(c, x, c.input_name(0), 4));
  ETC_TRY(expect_dims(c, *c.in[1], c.input_name(1) + " (slope)", {x.dims[3]}));
  return check_same_dims(c);
}

Status check_pad(const NodeCheck& c) {
  ETC_TRY(expect_flags(c, 0));
  const TensorInfo& x = *c.in[0];
  const auto* pre = c.node.pre_paddings();
  const auto* post = c.node.post_paddings();
  if (pre == nullptr || post == nullptr || pre->size() != x.rank || post->size() != x.rank)
    return c.error("pre_paddings and post_paddings need one entry per input dimension");
  bool ok = c.out->rank == x.rank;
  for (size_t d = 0; ok && d < x.rank; ++d) {
    const uint64_t p0 = pre->Get(static_cast<flatbuffers::uoffset_t>(d));
    const uint64_t p1 = post->Get(static_cast<flatbuffers::uoffset_t>(d));
    ok = p0 <= kMaxTensorElements && p1 <= kMaxTensorElements && c.out->dims[d] == x.dims[d] + p0 + p1;
  }
  if (!ok) return c.error(c.output_name() + " has dims " + dims_string(*c.out) + ", not the padded input");
  return Status::Ok();
}

Status check_reshape(const NodeCheck& c) {
  ETC_TRY(expect_flags(c, 0));
  const auto* shape = c.node.new_shape();
  bool ok = shape != nullptr && shape->size() == c.out->rank && c.out->numel == c.in[0]->numel;
  for (size_t d = 0; ok && d < c.out->rank; ++d)
    ok = shape->Get(static_cast<flatbuffers::uoffset_t>(d)) == c.out->dims[d];
  if (!ok)
    return c.error(c.output_name() + " dims " + dims_string(*c.out) + " must equal new_shape and hold the " +
                   std::to_string(c.in[0]->numel) + " input elements");
  return Status::Ok();
}

Status check_resize(const NodeCheck& c) {
  const uint32_t modes = XNN_FLAG_ALIGN_CORNERS | XNN_FLAG_TENSORFLOW_LEGACY_MODE;
  ETC_TRY(expect_flags(c, modes));
  if ((c.node.flags() & modes) == modes) return c.error("align corners and legacy mode exclude each other");
  const TensorInfo& x = *c.in[0];
  ETC_TRY(expect_rank(c, x, c.input_name(0), 4));
  const auto* shape = c.node.new_shape();
  if (shape == nullptr || shape->size() != 2)
    return c.error("new_shape must hold the output height and width");
  return expect_dims(c, *c.out, c.output_name(), {x.dims[0], shape->Get(0), shape->Get(1), x.dims[3]});
}

Status check_depth_to_space(const NodeCheck& c) {
  ETC_TRY(expect_flags(c, 0));
  const TensorInfo& x = *c.in[0];
  ETC_TRY(expect_rank(c, x, c.input_name(0), 4));
  const uint64_t block = c.node.block_size();
  if (block < 2 || block > 1024 || x.dims[3] % (block * block) != 0)
    return c.error("block size " + std::to_string(block) + " does not divide the " +
                   std::to_string(x.dims[3]) + " channels into blocks");
  return expect_dims(c, *c.out, c.output_name(),
                     {x.dims[0], x.dims[1] * block, x.dims[2] * block, x.dims[3] / (block * block)});
}

Status check_activation_range(const NodeCheck& c) {
  const float lo = c.node.output_min(), hi = c.node.output_max();
  if (std::isnan(lo) || std::isnan(hi) || !(lo < hi))
    return c.error("output range [" + std::to_string(lo) + ", " + std::to_string(hi) + "] is empty");
  return Status::Ok();
}

// One row of node_kinds.def.
struct NodeKind {
  size_t min_inputs, max_inputs;
  uint32_t packed_inputs;  // bit i: input i
  bool output_range;
  Status (*check)(const NodeCheck&);
};

// Null for a kind the table does not list.
const NodeKind* node_kind(NodeType type) {
  switch (type) {
#define ETC_XNN_NODE(kind, min_in, max_in, packed, range, check, define) \
  case NodeType::kind: {                                                 \
    static_assert((min_in) <= (max_in) && (max_in) <= kMaxNodeInputs);   \
    static constexpr NodeKind k{min_in, max_in, packed, range, &check};  \
    return &k;                                                           \
  }
#include "runtime/backends/xnnpack/node_kinds.def"
#undef ETC_XNN_NODE
    default: return nullptr;
  }
}

// Input and output ids and tensors into `c`, once their count fits `kind`.
Status read_operands(NodeCheck& c, const NodeKind& kind) {
  const auto* inputs = c.node.inputs();
  const auto* outputs = c.node.outputs();
  const size_t num_in = inputs == nullptr ? 0 : inputs->size();
  if (num_in < kind.min_inputs || num_in > kind.max_inputs)
    return c.error(std::to_string(num_in) + " inputs, expected " + std::to_string(kind.min_inputs) +
                   (kind.max_inputs != kind.min_inputs ? " or " + std::to_string(kind.max_inputs) : ""));
  if (outputs == nullptr || outputs->size() != 1)
    return c.error(std::to_string(outputs == nullptr ? 0 : outputs->size()) + " outputs, expected 1");
  c.num_in = num_in;
  for (size_t i = 0; i < num_in; ++i) {
    c.in_ids[i] = inputs->Get(static_cast<flatbuffers::uoffset_t>(i));
    if (c.in_ids[i] >= c.view.tensors.size())
      return c.error("input " + std::to_string(i) + " is tensor " + std::to_string(c.in_ids[i]) +
                     ", but there are " + std::to_string(c.view.tensors.size()) + " tensors");
    c.in[i] = &c.view.tensors[c.in_ids[i]];
  }
  c.out_id = outputs->Get(0);
  if (c.out_id >= c.view.tensors.size())
    return c.error("output is tensor " + std::to_string(c.out_id) + ", but there are " +
                   std::to_string(c.view.tensors.size()) + " tensors");
  c.out = &c.view.tensors[c.out_id];
  if (c.out->is_constant()) return c.error(c.output_name() + " is a constant");
  return Status::Ok();
}

}  // namespace

std::string node_name(const fb::Node& node, size_t index) {
  const char* type = fb::EnumNameNodeType(node.type());
  return "node " + std::to_string(index) + " (" +
         (*type ? type : "unknown type " + std::to_string(static_cast<int>(node.type()))) + ")";
}

Status check_node(const BlobView& view, const fb::Node& node, size_t index) {
  NodeCheck c{view, node, index};
  if (is_native_node(node.type())) return check_native_node(view, node, index);
  const NodeKind* kind = node_kind(node.type());
  if (kind == nullptr) return c.error("unknown node type");
  ETC_TRY(read_operands(c, *kind));
  for (size_t i = 0; i < c.num_in; ++i)
    if ((kind->packed_inputs >> i) & 1) ETC_TRY(expect_constant(c, i));
  if (kind->output_range) ETC_TRY(check_activation_range(c));
  return kind->check(c);
}

bool input_is_packed(const fb::Node& node, size_t position) {
  const NodeKind* kind = node_kind(node.type());
  return kind != nullptr && position < 32 && ((kind->packed_inputs >> position) & 1) != 0;
}

}  // namespace etc::xnnpack
