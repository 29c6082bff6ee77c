#pragma once
// XnnpackBlobBuilder: builds XNNPACK delegate blobs (xnnpack_blob.fbs) in
// tests, without the AOT half. Nothing is checked here, so tests can build
// defective blobs too. XnnpackRunner runs a blob through the backend
// directly, as the executor would; reference_conv_nchw is what convolutions
// are compared against.
//
//   XnnpackBlobBuilder b;
//   const uint32_t x = b.input({1, 8, 8, 3}, 0, fb::BoundaryLayout::NchwToNhwc);
//   const uint32_t w = b.constant({4, 3, 3, 3}, weights);
//   const uint32_t y = b.output({1, 6, 6, 4}, 0, fb::BoundaryLayout::NhwcToNchw);
//   auto& conv = b.node(fb::NodeType::Convolution2d, {x, w}, {y});
//   conv.kernel = {3, 3};
//   conv.group_input_channels = 3;
//   conv.group_output_channels = 4;
//   const std::vector<uint8_t> blob = b.build();

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <limits>
#include <string>
#include <vector>

#include "runtime/backends/xnnpack/xnnpack_backend.h"
#include "runtime/backends/xnnpack/xnnpack_blob.h"
#include "runtime/core/shape.h"

namespace etc::testing {

namespace xfb = etc::xnnpack::fb;

struct XnnpackNodeSpec {
  xfb::NodeType type = xfb::NodeType::Add;
  std::vector<uint32_t> inputs, outputs, padding, kernel, stride, dilation, adjustment;
  uint32_t groups = 1;
  uint64_t group_input_channels = 0, group_output_channels = 0;
  uint32_t depth_multiplier = 1;
  uint64_t input_channels = 0;
  float output_min = -std::numeric_limits<float>::infinity();
  float output_max = std::numeric_limits<float>::infinity();
  float alpha = 0;
  std::vector<uint64_t> new_shape, pre_paddings, post_paddings;
  float padding_value = 0;
  uint32_t block_size = 0, flags = 0, debug_id = 0;
  uint32_t axis = 0;
  std::vector<uint64_t> offsets;
  std::vector<uint64_t> indices;              // ResizeNearest: source rows, then source columns
  std::vector<uint64_t> batch, mnk, strides;  // BatchMatMul
  int32_t winograd_filter = -1;
};

class XnnpackBlobBuilder {
 public:
  uint32_t tensor(std::vector<uint64_t> dims) {
    return add(std::move(dims), -1, -1, xfb::BoundaryLayout::Same);
  }
  uint32_t input(std::vector<uint64_t> dims, int index,
                 xfb::BoundaryLayout layout = xfb::BoundaryLayout::Same) {
    ++num_inputs_;
    return add(std::move(dims), index, -1, layout);
  }
  uint32_t output(std::vector<uint64_t> dims, int index,
                  xfb::BoundaryLayout layout = xfb::BoundaryLayout::Same) {
    ++num_outputs_;
    return add(std::move(dims), -1, index, layout);
  }
  uint32_t constant(std::vector<uint64_t> dims, const std::vector<float>& data) {
    const uint32_t id = add(std::move(dims), -1, -1, xfb::BoundaryLayout::Same);
    constants_.resize((constants_.size() + 63) / 64 * 64);
    tensors_[id].constant_offset = constants_.size();
    tensors_[id].constant_size = data.size() * sizeof(float);
    const auto* bytes = reinterpret_cast<const uint8_t*>(data.data());
    constants_.insert(constants_.end(), bytes, bytes + data.size() * sizeof(float));
    return id;
  }
  // A constant of `dims` holding `bytes` as they are, marked `packing`
  // (e.g. a filter packed for the native kernel, or a defective one).
  // `shift` bytes past its 64-byte boundary (a damaged blob).
  uint32_t packed_constant(std::vector<uint64_t> dims, const std::vector<float>& data,
                           xfb::WeightPacking packing = xfb::WeightPacking::NativePanels, size_t shift = 0) {
    const uint32_t id = constant(std::move(dims), data);
    tensors_[id].packing = packing;
    const auto at = constants_.begin() + static_cast<std::ptrdiff_t>(tensors_[id].constant_offset);
    constants_.insert(at, shift, uint8_t{0});
    tensors_[id].constant_offset += shift;
    return id;
  }
  // The reference stays valid (nodes live in a deque).
  XnnpackNodeSpec& node(xfb::NodeType type, std::vector<uint32_t> inputs, std::vector<uint32_t> outputs) {
    nodes_.push_back(XnnpackNodeSpec{});
    nodes_.back().type = type;
    nodes_.back().inputs = std::move(inputs);
    nodes_.back().outputs = std::move(outputs);
    return nodes_.back();
  }
  // Overrides of the argument counts the graph declares.
  void set_num_inputs(uint32_t n) { num_inputs_ = n; }
  void set_num_outputs(uint32_t n) { num_outputs_ = n; }

  std::vector<uint8_t> build(uint32_t version = xnnpack::kXnnpackBlobVersion) const {
    flatbuffers::FlatBufferBuilder fbb;
    std::vector<flatbuffers::Offset<xfb::Tensor>> tensors;
    for (const TensorSpec& t : tensors_)
      tensors.push_back(xfb::CreateTensorDirect(fbb, &t.dims, t.constant_size, t.constant_offset,
                                                t.external_input, t.external_output, t.layout,
                                                /*nchw=*/false, t.packing));
    std::vector<flatbuffers::Offset<xfb::Node>> nodes;
    for (const XnnpackNodeSpec& n : nodes_) nodes.push_back(build_node(fbb, n));
    const auto tensor_vector = fbb.CreateVector(tensors);
    const auto node_vector = fbb.CreateVector(nodes);
    xfb::GraphBuilder graph(fbb);
    graph.add_version(version);
    graph.add_tensors(tensor_vector);
    graph.add_nodes(node_vector);
    graph.add_num_inputs(num_inputs_);
    graph.add_num_outputs(num_outputs_);
    xfb::FinishSizePrefixedGraphBuffer(fbb, graph.Finish());
    std::vector<uint8_t> blob(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
    blob.resize(xnnpack::xnnpack_constant_base(fbb.GetSize() - 4), 0);
    blob.insert(blob.end(), constants_.begin(), constants_.end());
    return blob;
  }

 private:
  struct TensorSpec {
    std::vector<uint64_t> dims;
    uint64_t constant_size = 0, constant_offset = 0;
    int32_t external_input = -1, external_output = -1;
    xfb::BoundaryLayout layout = xfb::BoundaryLayout::Same;
    xfb::WeightPacking packing = xfb::WeightPacking::Plain;
  };

  uint32_t add(std::vector<uint64_t> dims, int input, int output, xfb::BoundaryLayout layout) {
    TensorSpec t;
    t.dims = std::move(dims);
    t.external_input = input;
    t.external_output = output;
    t.layout = layout;
    tensors_.push_back(std::move(t));
    return static_cast<uint32_t>(tensors_.size() - 1);
  }

  template <typename T>
  static flatbuffers::Offset<flatbuffers::Vector<T>> optional(flatbuffers::FlatBufferBuilder& fbb,
                                                              const std::vector<T>& v) {
    return v.empty() ? 0 : fbb.CreateVector(v);
  }

  static flatbuffers::Offset<xfb::Node> build_node(flatbuffers::FlatBufferBuilder& fbb,
                                                   const XnnpackNodeSpec& n) {
    const auto inputs = fbb.CreateVector(n.inputs);
    const auto outputs = fbb.CreateVector(n.outputs);
    const auto padding = optional(fbb, n.padding);
    const auto kernel = optional(fbb, n.kernel);
    const auto stride = optional(fbb, n.stride);
    const auto dilation = optional(fbb, n.dilation);
    const auto adjustment = optional(fbb, n.adjustment);
    const auto new_shape = optional(fbb, n.new_shape);
    const auto pre = optional(fbb, n.pre_paddings);
    const auto post = optional(fbb, n.post_paddings);
    const auto offsets = optional(fbb, n.offsets);
    const auto indices = optional(fbb, n.indices);
    const auto batch = optional(fbb, n.batch);
    const auto mnk = optional(fbb, n.mnk);
    const auto strides = optional(fbb, n.strides);
    xfb::NodeBuilder b(fbb);
    b.add_type(n.type);
    b.add_inputs(inputs);
    b.add_outputs(outputs);
    if (!padding.IsNull()) b.add_padding(padding);
    if (!kernel.IsNull()) b.add_kernel(kernel);
    if (!stride.IsNull()) b.add_stride(stride);
    if (!dilation.IsNull()) b.add_dilation(dilation);
    if (!adjustment.IsNull()) b.add_adjustment(adjustment);
    b.add_groups(n.groups);
    b.add_group_input_channels(n.group_input_channels);
    b.add_group_output_channels(n.group_output_channels);
    b.add_depth_multiplier(n.depth_multiplier);
    b.add_input_channels(n.input_channels);
    b.add_output_min(n.output_min);
    b.add_output_max(n.output_max);
    b.add_alpha(n.alpha);
    if (!new_shape.IsNull()) b.add_new_shape(new_shape);
    if (!pre.IsNull()) b.add_pre_paddings(pre);
    if (!post.IsNull()) b.add_post_paddings(post);
    b.add_padding_value(n.padding_value);
    b.add_block_size(n.block_size);
    b.add_flags(n.flags);
    b.add_debug_id(n.debug_id);
    b.add_axis(n.axis);
    if (!offsets.IsNull()) b.add_offsets(offsets);
    if (!indices.IsNull()) b.add_indices(indices);
    if (!batch.IsNull()) b.add_batch(batch);
    if (!mnk.IsNull()) b.add_mnk(mnk);
    if (!strides.IsNull()) b.add_strides(strides);
    b.add_winograd_filter(n.winograd_filter);
    return b.Finish();
  }

  std::vector<TensorSpec> tensors_;
  std::deque<XnnpackNodeSpec> nodes_;
  std::vector<uint8_t> constants_;
  uint32_t num_inputs_ = 0, num_outputs_ = 0;
};

struct XnnpackArg {
  Shape shape;
  std::vector<float> data;
};

class XnnpackRunner {
 public:
  // The delegate runs on num_threads threads (0: one per core), however
  // little work the blob holds.
  explicit XnnpackRunner(int num_threads = 0) : init_context_(nullptr, "forward", &options_) {
    options_.num_threads = num_threads;
    options_.fit_threads_to_work = false;
  }
  ~XnnpackRunner() { reset(); }
  XnnpackRunner(const XnnpackRunner&) = delete;
  XnnpackRunner& operator=(const XnnpackRunner&) = delete;

  // Keeps its own copy of `blob`, `misalign` bytes past a 64-byte boundary
  // of its storage, available as blob() to scribble on after init (to show
  // that execute no longer reads it).
  Status init(const std::vector<uint8_t>& blob, size_t misalign = 0) {
    reset();
    blob_.assign(blob.size() + 64 + misalign, 0);
    const size_t offset = (64 - reinterpret_cast<uintptr_t>(blob_.data()) % 64) % 64 + misalign;
    std::copy(blob.begin(), blob.end(), blob_.begin() + static_cast<std::ptrdiff_t>(offset));
    freed_ = false;
    {
      FreeableBuffer processed(blob_.data() + offset, blob.size(), &mark_freed, &freed_);
      handle_ = backend_->init(init_context_, &processed, {});
      freed_by_init_ = freed_;
    }
    if (!handle_.ok()) return handle_.failure();
    return Status::Ok();
  }
  Status execute(std::vector<XnnpackArg>& args, EventTracer* tracer = nullptr, DType dtype = DType::Float32) {
    return with_args(args, dtype, [&](Span<EValue*> values) {
      BackendExecutionContext context(nullptr, tracer, "forward");
      return backend_->execute(context, handle_.get(), values);
    });
  }
  // backend->resize with arguments of these shapes.
  Status resize(std::vector<XnnpackArg>& args) {
    return with_args(args, DType::Float32,
                     [&](Span<EValue*> values) { return backend_->resize(handle_.get(), values); });
  }
  void reset() {
    if (handle_.ok()) backend_->destroy(handle_.get());
    handle_ = Error::InvalidState;
  }
  bool freed_by_init() const { return freed_by_init_; }
  // Options the next init sees (delegate_detail, ...).
  RuntimeOptions& options() { return options_; }
  std::vector<uint8_t>& blob() { return blob_; }

 private:
  static void mark_freed(void* context, const void*, size_t) { *static_cast<bool*>(context) = true; }

  // `call` with the arguments as the backend takes them.
  template <typename Call>
  static Status with_args(std::vector<XnnpackArg>& args, DType dtype, const Call& call) {
    std::vector<Tensor> tensors(args.size());
    std::vector<EValue> values;
    std::vector<EValue*> pointers;
    values.reserve(args.size());
    for (size_t i = 0; i < args.size(); ++i) {
      tensors[i].spec = TensorSpec{dtype, args[i].shape};
      tensors[i].data = args[i].data.data();
      values.emplace_back(&tensors[i]);
    }
    for (EValue& v : values) pointers.push_back(&v);
    return call(Span<EValue*>(pointers));
  }

  BackendInterface* backend_ = xnnpack::xnnpack_backend();
  RuntimeOptions options_;
  BackendInitContext init_context_;
  Result<DelegateHandle*> handle_ = Error::InvalidState;
  std::vector<uint8_t> blob_;
  bool freed_ = false;
  bool freed_by_init_ = false;
};

inline XnnpackArg zeros(Shape shape) {
  XnnpackArg a;
  a.shape = shape;
  a.data.assign(static_cast<size_t>(shape.numel()), 0.0f);
  return a;
}

// Grouped 2-D convolution on NCHW data with OIHW weights (I = C / groups),
// symmetric padding, then clamp.
inline std::vector<float> reference_conv_nchw(const std::vector<float>& x, int n, int c, int h, int w,
                                              const std::vector<float>& weights, int o, int kh, int kw,
                                              const std::vector<float>& bias, int stride, int pad, int groups,
                                              float lo, float hi, int& oh, int& ow) {
  oh = (h + 2 * pad - kh) / stride + 1;
  ow = (w + 2 * pad - kw) / stride + 1;
  const int ig = c / groups, og = o / groups;
  std::vector<float> y(static_cast<size_t>(n * o * oh * ow));
  for (int b = 0; b < n; ++b)
    for (int oc = 0; oc < o; ++oc)
      for (int i = 0; i < oh; ++i)
        for (int j = 0; j < ow; ++j) {
          double acc = bias.empty() ? 0.0 : bias[oc];
          const int g = oc / og;
          for (int ic = 0; ic < ig; ++ic)
            for (int u = 0; u < kh; ++u)
              for (int v = 0; v < kw; ++v) {
                const int yy = i * stride - pad + u, xx = j * stride - pad + v;
                if (yy < 0 || yy >= h || xx < 0 || xx >= w) continue;
                acc += double(x[((b * c + g * ig + ic) * h + yy) * w + xx]) *
                       weights[((oc * ig + ic) * kh + u) * kw + v];
              }
          const float r = static_cast<float>(acc);
          y[((b * o + oc) * oh + i) * ow + j] = r < lo ? lo : (r > hi ? hi : r);
        }
  return y;
}

// OIHW -> OHWI (XNNPACK's convolution filter layout).
inline std::vector<float> oihw_to_ohwi(const std::vector<float>& w, int o, int i, int kh, int kw) {
  std::vector<float> r(w.size());
  for (int a = 0; a < o; ++a)
    for (int b = 0; b < i; ++b)
      for (int u = 0; u < kh; ++u)
        for (int v = 0; v < kw; ++v) r[((a * kh + u) * kw + v) * i + b] = w[((a * i + b) * kh + u) * kw + v];
  return r;
}

}  // namespace etc::testing
