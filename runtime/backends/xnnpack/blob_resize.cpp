#include "runtime/backends/xnnpack/blob_resize.h"

#include <algorithm>
#include <cmath>

#include "runtime/backends/xnnpack/blob_reader.h"
#include "runtime/kernels/portable/resize_plan.h"

namespace etc::xnnpack {
namespace {

using fb::NodeType;

// xnnpack.h flag values (this file does not depend on XNNPACK itself).
constexpr uint32_t kFlagTensorflowSamePadding = 0x00000004;  // convolution, pooling
constexpr uint32_t kFlagTransposeWeights = 0x00000001;       // fully connected
constexpr uint32_t kFlagTensorflowReshape2d = 0x00000004;    // fully connected

std::string str(uint64_t v) { return std::to_string(v); }

std::string dims_str(const BlobDims& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + str(d[i]);
  return s + "]";
}

std::string node_label(const fb::NodeT& node, size_t n) {
  const char* type = fb::EnumNameNodeType(node.type);
  return "node " + str(n) + " (" + (*type ? type : "unknown type") + ")";
}

// One node being re-derived: its input dims and where its output goes.
struct Derive {
  fb::GraphT& g;
  fb::NodeT& node;
  size_t n;

  Failure error(const std::string& what) const {
    return fail(Error::InvalidArgument, "xnnpack: ", node_label(node, n), ": ", what);
  }
  const BlobDims& in(size_t i) const { return g.tensors[node.inputs[i]]->dims; }
  BlobDims& out() const { return g.tensors[node.outputs[0]]->dims; }
};

uint32_t param(const std::vector<uint32_t>& v, size_t i, uint32_t fallback) {
  return i < v.size() ? v[i] : fallback;
}

// Output height and width of a strided window, as XNNPACK computes them.
Status window_output(const Derive& d, const BlobDims& x, uint64_t hw[2]) {
  const fb::NodeT& node = d.node;
  if (x.size() != 4) return d.error("input " + dims_str(x) + " is not 4-D");
  for (int a = 0; a < 2; ++a) {
    const uint64_t size = x[1 + static_cast<size_t>(a)];
    const uint64_t stride = std::max<uint32_t>(param(node.stride, static_cast<size_t>(a), 1), 1);
    if (node.flags & kFlagTensorflowSamePadding) {
      hw[a] = (size + stride - 1) / stride;
      continue;
    }
    const uint64_t padded =
        size + param(node.padding, a == 0 ? 0 : 3, 0) + param(node.padding, a == 0 ? 2 : 1, 0);
    const uint64_t kernel = std::max<uint32_t>(param(node.kernel, static_cast<size_t>(a), 1), 1);
    const uint64_t extent = (kernel - 1) * param(node.dilation, static_cast<size_t>(a), 1) + 1;
    if (padded < extent)
      return d.error("the window (" + str(extent) + ") is larger than the padded input (" + str(padded) +
                     ")");
    hw[a] = (padded - extent) / stride + 1;
  }
  return Status::Ok();
}

Status derive_window(const Derive& d, uint64_t channels) {
  uint64_t hw[2];
  ETC_TRY(window_output(d, d.in(0), hw));
  d.out() = {d.in(0)[0], hw[0], hw[1], channels};
  return Status::Ok();
}

Status derive_deconvolution(const Derive& d) {
  const BlobDims& x = d.in(0);
  if (x.size() != 4) return d.error("input " + dims_str(x) + " is not 4-D");
  const fb::NodeT& node = d.node;
  uint64_t hw[2];
  for (size_t a = 0; a < 2; ++a) {
    const uint64_t full = uint64_t{param(node.stride, a, 1)} * (x[1 + a] - 1) + param(node.adjustment, a, 0) +
                          uint64_t{param(node.kernel, a, 1) - 1} * param(node.dilation, a, 1) + 1;
    const uint64_t cut =
        uint64_t{param(node.padding, a == 0 ? 0 : 3, 0)} + param(node.padding, a == 0 ? 2 : 1, 0);
    if (full <= cut) return d.error("padding removes the whole output");
    hw[a] = full - cut;
  }
  d.out() = {x[0], hw[0], hw[1], uint64_t{node.groups} * node.group_output_channels};
  return Status::Ok();
}

Status derive_fully_connected(const Derive& d) {
  const BlobDims& x = d.in(0);
  const BlobDims& w = d.in(1);
  if (w.size() != 2 || x.empty()) return d.error("filter " + dims_str(w) + " or input " + dims_str(x));
  const bool transposed = d.node.flags & kFlagTransposeWeights;
  const uint64_t in_channels = w[transposed ? 0 : 1], out_channels = w[transposed ? 1 : 0];
  if (d.node.flags & kFlagTensorflowReshape2d) {
    uint64_t numel = 1;
    for (uint64_t v : x) numel *= v;
    d.out() = {numel / std::max<uint64_t>(in_channels, 1), out_channels};
    return Status::Ok();
  }
  d.out() = x;
  d.out().back() = out_channels;
  return Status::Ok();
}

Status derive_binary(const Derive& d) {
  const BlobDims &a = d.in(0), &b = d.in(1);
  const size_t rank = std::max(a.size(), b.size());
  BlobDims out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const uint64_t da = i + a.size() >= rank ? a[i + a.size() - rank] : 1;
    const uint64_t db = i + b.size() >= rank ? b[i + b.size() - rank] : 1;
    if (da != db && da != 1 && db != 1)
      return d.error(dims_str(a) + " and " + dims_str(b) + " do not broadcast");
    out[i] = da == 1 ? db : da;
  }
  d.out() = out;
  return Status::Ok();
}

Status derive_pad(const Derive& d) {
  const BlobDims& x = d.in(0);
  if (d.node.pre_paddings.size() != x.size() || d.node.post_paddings.size() != x.size())
    return d.error("paddings do not match the input's rank");
  BlobDims out = x;
  for (size_t i = 0; i < x.size(); ++i) out[i] += d.node.pre_paddings[i] + d.node.post_paddings[i];
  d.out() = out;
  return Status::Ok();
}

uint64_t numel(const BlobDims& dims) {
  uint64_t n = 1;
  for (uint64_t v : dims) n *= v;
  return n;
}

Status derive_reshape(const Derive& d) {
  fb::NodeT& node = d.node;
  const BlobDims& x = d.in(0);
  if (!node.perm.empty()) {
    if (node.perm.size() != x.size()) return d.error("perm does not match the input's rank");
    BlobDims out(x.size());
    for (size_t j = 0; j < x.size(); ++j) {
      if (node.perm[j] >= x.size()) return d.error("perm is not a permutation");
      out[j] = x[node.perm[j]];
    }
    node.new_shape = out;
  } else if (node.infer_dim >= 0) {
    const auto k = static_cast<size_t>(node.infer_dim);
    if (k >= node.new_shape.size()) return d.error("infer_dim is outside new_shape");
    uint64_t others = 1;
    for (size_t j = 0; j < node.new_shape.size(); ++j)
      if (j != k) others *= node.new_shape[j];
    if (others == 0 || numel(x) % others != 0)
      return d.error("input " + dims_str(x) + " does not fill new_shape " + dims_str(node.new_shape) +
                     " in dim " + str(k));
    node.new_shape[k] = numel(x) / others;
  }
  if (numel(node.new_shape) != numel(x))
    return d.error("input " + dims_str(x) + " does not hold the elements of new_shape " +
                   dims_str(node.new_shape) + " (no dim of the target follows the input)");
  d.out() = node.new_shape;
  return Status::Ok();
}

// floor(length * scale), as the portable resize computes a size that
// follows its input; 0 when it would be out of range.
uint64_t scaled(uint64_t length, float scale) {
  const double v = std::floor(static_cast<double>(length) * static_cast<double>(scale));
  return v >= 1.0 && v <= static_cast<double>(kMaxTensorElements) ? static_cast<uint64_t>(v) : 0;
}

Status derive_resize(const Derive& d) {
  fb::NodeT& node = d.node;
  const BlobDims& x = d.in(0);
  if (x.size() != 4) return d.error("input " + dims_str(x) + " is not 4-D");
  if (!node.scales.empty()) {
    if (node.scales.size() != 2 || !(node.scales[0] > 0.0f) || !(node.scales[1] > 0.0f) ||
        !std::isfinite(node.scales[0]) || !std::isfinite(node.scales[1]))
      return d.error("scales must be two positive numbers");
    const uint64_t h = scaled(x[1], node.scales[0]), w = scaled(x[2], node.scales[1]);
    if (h == 0 || w == 0 || h * w > kMaxTensorElements)
      return d.error("scales give an empty or too large output for input " + dims_str(x));
    if (node.type == NodeType::StaticResizeBilinear2d) node.new_shape = {h, w};
    d.out() = {x[0], h, w, x[3]};
  } else {
    BlobDims& y = d.out();
    if (y.size() != 4) return d.error("output is not 4-D");
    y[0] = x[0];
    y[3] = x[3];
  }
  if (node.type != NodeType::ResizeNearest || node.scales.empty()) return Status::Ok();
  if (node.coord_mode > static_cast<uint8_t>(ResizeCoordMode::TfCropAndResize) ||
      node.nearest_mode > static_cast<uint8_t>(ResizeNearestMode::Simple))
    return d.error("unknown coordinate or nearest mode");
  node.indices.clear();
  for (size_t a = 0; a < 2; ++a) {
    ResizeAxisParams p;
    p.mode = ResizeMode::Nearest;
    p.coord = static_cast<ResizeCoordMode>(node.coord_mode);
    p.nearest = static_cast<ResizeNearestMode>(node.nearest_mode);
    p.in_len = static_cast<int64_t>(x[1 + a]);
    p.out_len = static_cast<int64_t>(d.out()[1 + a]);
    p.scale = node.scales[a];
    for (const ResizeTaps& t : resize_axis_taps(p)) {
      if (t.count != 1 || t.extrapolate) return d.error("a nearest sample is not one pixel");
      node.indices.push_back(static_cast<uint64_t>(t.index[0]));
    }
  }
  return Status::Ok();
}

Status derive_depth_to_space(const Derive& d) {
  const BlobDims& x = d.in(0);
  const uint64_t b = d.node.block_size;
  if (x.size() != 4 || b == 0 || x[3] % (b * b) != 0)
    return d.error("block size does not divide the channels");
  d.out() = {x[0], x[1] * b, x[2] * b, x[3] / (b * b)};
  return Status::Ok();
}

Status derive_concatenate(const Derive& d) {
  const size_t axis = d.node.axis;
  BlobDims out = d.in(0);
  if (axis >= out.size()) return d.error("axis outside the input's rank");
  for (size_t i = 1; i < d.node.inputs.size(); ++i) {
    const BlobDims& x = d.in(i);
    if (x.size() != out.size()) return d.error("inputs of different ranks");
    out[axis] += x[axis];
  }
  d.out() = out;
  return Status::Ok();
}

Status derive_slice(const Derive& d) {
  const BlobDims& x = d.in(0);
  BlobDims& y = d.out();
  const fb::NodeT& node = d.node;
  if (node.offsets.size() != x.size() || y.size() != x.size())
    return d.error("offsets do not match the rank");
  for (uint32_t dim : node.to_end) {
    if (dim >= x.size() || node.offsets[dim] > x[dim])
      return d.error("the window at offset " + (dim < x.size() ? str(node.offsets[dim]) : "?") +
                     " leaves input " + dims_str(x));
    y[dim] = x[dim] - node.offsets[dim];
  }
  return Status::Ok();
}

Status derive_transpose(const Derive& d) {
  const BlobDims& x = d.in(0);
  if (d.node.perm.size() != x.size()) return d.error("perm does not match the input's rank");
  BlobDims out(x.size());
  for (size_t j = 0; j < x.size(); ++j) {
    if (d.node.perm[j] >= x.size()) return d.error("perm is not a permutation");
    out[j] = x[d.node.perm[j]];
  }
  d.out() = out;
  return Status::Ok();
}

Status derive_reduce(const Derive& d) {
  const BlobDims& x = d.in(0);
  const std::vector<uint32_t>& axes = d.node.axes;
  BlobDims& y = d.out();
  for (uint32_t a : axes)
    if (a >= x.size()) return d.error("axes outside the input's rank");
  BlobDims kept, ones = x;
  for (size_t i = 0; i < x.size(); ++i) {
    const bool reduced = std::find(axes.begin(), axes.end(), i) != axes.end();
    if (reduced) ones[i] = 1;
    if (!reduced) kept.push_back(x[i]);
  }
  if (y.size() == x.size())
    y = ones;
  else if (y.size() == kept.size())
    y = kept;
  else
    return d.error("output rank " + str(y.size()) + " is neither the input's nor the kept dims'");
  return Status::Ok();
}

// The product's dims: its batch, row and column entries name the dim of C
// that holds each size.
Status derive_batch_matmul(const Derive& d) {
  fb::NodeT& node = d.node;
  BlobDims& c = d.out();
  const std::array<const BlobDims*, 3> dims = {&d.in(0), &d.in(1), &c};
  const size_t per = node.stride_axes.size() / 3;
  if (node.stride_axes.size() != 3 * per || per < 2)
    return d.error("stride_axes do not describe three operands");
  // Sizes from A and B first (C's own dims may be stale), then C follows.
  const std::array<const BlobDims*, 3> ab = {dims[0], dims[1], dims[0]};
  std::vector<int8_t> axes = node.stride_axes;
  for (size_t i = 0; i < per; ++i) axes[2 * per + i] = -1;
  ETC_ASSIGN_OR_RETURN(MatmulLayout sizes, batch_matmul_layout(axes, ab));
  for (size_t i = 0; i < per; ++i) {
    const int8_t axis = node.stride_axes[2 * per + i];
    if (axis < 0) continue;
    if (static_cast<size_t>(axis) >= c.size()) return d.error("a stride axis is outside the product");
    c[static_cast<size_t>(axis)] = i + 2 < per ? sizes.batch[i] : i + 2 == per ? sizes.mnk[0] : sizes.mnk[1];
  }
  ETC_ASSIGN_OR_RETURN(MatmulLayout layout, batch_matmul_layout(node.stride_axes, dims));
  node.strides = std::move(layout.strides);
  node.mnk = std::move(layout.mnk);
  node.batch = std::move(layout.batch);
  return Status::Ok();
}

Status derive_node(const Derive& d) {
  const fb::NodeT& node = d.node;
  switch (node.type) {
    case NodeType::Convolution2d: return derive_window(d, uint64_t{node.groups} * node.group_output_channels);
    case NodeType::DepthwiseConvolution2d:
      return derive_window(d, node.input_channels * node.depth_multiplier);
    case NodeType::MaxPooling2d:
    case NodeType::AveragePooling2d:
      if (d.in(0).size() != 4) return d.error("input is not 4-D");
      return derive_window(d, d.in(0)[3]);
    case NodeType::Deconvolution2d: return derive_deconvolution(d);
    case NodeType::FullyConnected: return derive_fully_connected(d);
    case NodeType::GlobalAveragePooling2d: {
      const BlobDims& x = d.in(0);
      if (x.size() != 4) return d.error("input is not 4-D");
      d.out() = d.out().size() == 2 ? BlobDims{x[0], x[3]} : BlobDims{x[0], 1, 1, x[3]};
      return Status::Ok();
    }
    case NodeType::Add:
    case NodeType::Subtract:
    case NodeType::Multiply:
    case NodeType::Divide:
    case NodeType::Maximum:
    case NodeType::Minimum:
    case NodeType::SquaredDifference: return derive_binary(d);
    case NodeType::StaticConstantPad: return derive_pad(d);
    case NodeType::StaticReshape: return derive_reshape(d);
    case NodeType::StaticResizeBilinear2d:
    case NodeType::ResizeNearest: return derive_resize(d);
    case NodeType::DepthToSpace: return derive_depth_to_space(d);
    case NodeType::Concatenate: return derive_concatenate(d);
    case NodeType::Slice: return derive_slice(d);
    case NodeType::Transpose: return derive_transpose(d);
    case NodeType::Reduce: return derive_reduce(d);
    case NodeType::BatchMatMul: return derive_batch_matmul(d);
    default:
      // Elementwise and normalizing nodes: the output has input 0's dims.
      d.out() = d.in(0);
      return Status::Ok();
  }
}

}  // namespace

Result<MatmulLayout> batch_matmul_layout(const std::vector<int8_t>& stride_axes,
                                         const std::array<const BlobDims*, 3>& dims) {
  const size_t per = stride_axes.size() / 3;
  if (stride_axes.size() != 3 * per || per < 2)
    return fail(Error::InvalidArgument, "xnnpack: batch matmul: ", str(stride_axes.size()),
                " stride axes do not describe three operands");
  MatmulLayout out;
  // An entry's size in its operand (1 where it has no axis) and its stride.
  auto size_of = [&](size_t o, size_t i) -> Result<uint64_t> {
    const int8_t axis = stride_axes[o * per + i];
    if (axis < 0) return uint64_t{1};
    if (static_cast<size_t>(axis) >= dims[o]->size())
      return fail(Error::InvalidArgument, "xnnpack: batch matmul: stride axis ",
                  str(static_cast<uint64_t>(axis)), " is outside operand ", dims_str(*dims[o]));
    return (*dims[o])[static_cast<size_t>(axis)];
  };
  for (size_t o = 0; o < 3; ++o)
    for (size_t i = 0; i < per; ++i) {
      const int8_t axis = stride_axes[o * per + i];
      // -1: a broadcast (stride 0); -2: a 1-D operand's missing axis, unit stride.
      uint64_t stride = axis == -2 ? 1 : 0;
      ETC_TRY(size_of(o, i));
      if (axis >= 0) {
        stride = 1;
        for (size_t k = static_cast<size_t>(axis) + 1; k < dims[o]->size(); ++k) stride *= (*dims[o])[k];
      }
      out.strides.push_back(stride);
    }
  for (size_t i = 0; i + 2 < per; ++i) {
    ETC_ASSIGN_OR_RETURN(const uint64_t a, size_of(0, i));
    ETC_ASSIGN_OR_RETURN(const uint64_t b, size_of(1, i));
    out.batch.push_back(std::max(a, b));
  }
  ETC_ASSIGN_OR_RETURN(const uint64_t m, size_of(0, per - 2));
  ETC_ASSIGN_OR_RETURN(const uint64_t k, size_of(0, per - 1));
  ETC_ASSIGN_OR_RETURN(const uint64_t n, size_of(1, per - 1));
  out.mnk = {m, n, k};
  return out;
}

Status resize_graph(fb::GraphT& graph, const std::vector<BlobDims>& input_dims) {
  if (input_dims.size() != graph.num_inputs)
    return fail(Error::InvalidArgument, "xnnpack: ", str(input_dims.size()), " input shapes for ",
                str(graph.num_inputs), " delegate inputs");
  for (auto& t : graph.tensors) {
    if (!t) return fail(Error::InvalidArgument, "xnnpack: a blob tensor is missing");
    if (t->external_input < 0) continue;
    if (static_cast<size_t>(t->external_input) >= input_dims.size())
      return fail(Error::InvalidArgument, "xnnpack: a tensor is delegate input ",
                  str(static_cast<uint64_t>(t->external_input)), " of ", str(input_dims.size()));
    const BlobDims& dims = input_dims[static_cast<size_t>(t->external_input)];
    if (dims.size() != t->dims.size())
      return fail(Error::InvalidArgument, "xnnpack: delegate input ",
                  str(static_cast<uint64_t>(t->external_input)), " has rank ", str(t->dims.size()), ", not ",
                  str(dims.size()));
    t->dims = dims;
  }
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    if (!graph.nodes[n]) return fail(Error::InvalidArgument, "xnnpack: node ", str(n), " is missing");
    fb::NodeT& node = *graph.nodes[n];
    const Derive d{graph, node, n};
    if (node.inputs.empty() || node.outputs.size() != 1) return d.error("not one output and some inputs");
    for (uint32_t id : node.inputs)
      if (id >= graph.tensors.size()) return d.error("an input is not a tensor");
    if (node.outputs[0] >= graph.tensors.size()) return d.error("the output is not a tensor");
    ETC_TRY(derive_node(d));
    // Within what a blob may hold (blob_reader.h), so no later product of
    // sizes overflows.
    uint64_t elements = 1;
    for (uint64_t v : d.out()) {
      if (v == 0 || v > kMaxTensorElements || elements * v > kMaxTensorElements)
        return d.error("output " + dims_str(d.out()) + " is empty or too large at these input sizes");
      elements *= v;
    }
  }
  return Status::Ok();
}

std::string first_difference(const fb::GraphT& a, const fb::GraphT& b) {
  if (a.tensors.size() != b.tensors.size() || a.nodes.size() != b.nodes.size())
    return str(a.tensors.size()) + " tensors and " + str(a.nodes.size()) + " nodes against " +
           str(b.tensors.size()) + " and " + str(b.nodes.size());
  // A tensor no node reads or writes (left by a fold) keeps its dims.
  std::vector<bool> used(a.tensors.size(), false);
  for (const auto& node : a.nodes) {
    for (uint32_t id : node->inputs)
      if (id < used.size()) used[id] = true;
    for (uint32_t id : node->outputs)
      if (id < used.size()) used[id] = true;
  }
  for (size_t t = 0; t < a.tensors.size(); ++t) {
    const fb::TensorT &x = *a.tensors[t], &y = *b.tensors[t];
    if (x.dims != y.dims && used[t]) {
      std::string producer;
      for (size_t n = 0; n < a.nodes.size(); ++n)
        if (!a.nodes[n]->outputs.empty() && a.nodes[n]->outputs[0] == t)
          producer = ", the output of " + node_label(*a.nodes[n], n);
      return "tensor " + str(t) + producer + ": dims " + dims_str(x.dims) + " after resizing, " +
             dims_str(y.dims) + " when compiled at these sizes";
    }
    if (x.constant_size != y.constant_size || x.constant_offset != y.constant_offset ||
        x.external_input != y.external_input || x.external_output != y.external_output ||
        x.layout != y.layout || x.nchw != y.nchw)
      return "tensor " + str(t) + ": its constant data or role differs";
  }
  for (size_t n = 0; n < a.nodes.size(); ++n) {
    const fb::NodeT &x = *a.nodes[n], &y = *b.nodes[n];
    if (x == y) continue;
    const std::string label = node_label(x, n);
    if (x.type != y.type) return label + ": a " + fb::EnumNameNodeType(y.type) + " node at the other size";
    if (x.new_shape != y.new_shape)
      return label + ": new_shape " + dims_str(x.new_shape) + " against " + dims_str(y.new_shape);
    if (x.offsets != y.offsets)
      return label + ": offsets " + dims_str(x.offsets) + " against " + dims_str(y.offsets);
    if (x.strides != y.strides)
      return label + ": strides " + dims_str(x.strides) + " against " + dims_str(y.strides);
    if (x.indices != y.indices) return label + ": source indices differ";
    if (x.padding != y.padding || x.kernel != y.kernel)
      return label + ": its window (padding or kernel) differs";
    return label + ": its parameters differ";
  }
  if (a.num_inputs != b.num_inputs || a.num_outputs != b.num_outputs || a.version != b.version)
    return "the graphs' inputs or outputs differ";
  return "";
}

}  // namespace etc::xnnpack
