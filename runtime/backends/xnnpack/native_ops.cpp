#include "runtime/backends/xnnpack/native_ops.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "runtime/backends/xnnpack/avx2_lanes.h"
#include "runtime/backends/xnnpack/native_conv.h"
#include "runtime/backends/xnnpack/native_matmul.h"
#include "runtime/backends/xnnpack/node_checks.h"
#include "runtime/backends/xnnpack/swish.h"

namespace etc::xnnpack {
namespace {

using fb::NodeType;

Failure invalid(const fb::Node& node, size_t index, const std::string& what) {
  return fail(Error::InvalidProgram, "xnnpack: invalid blob: ", node_name(node, index), ": ", what);
}

bool same_dims(const TensorInfo& a, const TensorInfo& b) {
  if (a.rank != b.rank) return false;
  for (size_t d = 0; d < a.rank; ++d)
    if (a.dims[d] != b.dims[d]) return false;
  return true;
}

Status check_concatenate(const BlobView& view, const fb::Node& node, size_t index) {
  const TensorInfo& out = view.tensors[node.outputs()->Get(0)];
  const size_t axis = node.axis();
  if (axis >= out.rank)
    return invalid(node, index,
                   "axis " + std::to_string(axis) + " of a rank-" + std::to_string(out.rank) + " output");
  uint64_t total = 0;
  for (flatbuffers::uoffset_t i = 0; i < node.inputs()->size(); ++i) {
    const TensorInfo& in = view.tensors[node.inputs()->Get(i)];
    bool ok = in.rank == out.rank;
    for (size_t d = 0; ok && d < out.rank; ++d) ok = d == axis || in.dims[d] == out.dims[d];
    if (!ok)
      return invalid(node, index,
                     "input " + std::to_string(i) + " has dims " + dims_string(in) +
                         ", which do not match output " + dims_string(out) + " off axis " +
                         std::to_string(axis));
    total += in.dims[axis];
  }
  if (total != out.dims[axis])
    return invalid(node, index,
                   "the inputs hold " + std::to_string(total) + " along axis " + std::to_string(axis) +
                       ", the output " + std::to_string(out.dims[axis]));
  return Status::Ok();
}

Status check_slice(const BlobView& view, const fb::Node& node, size_t index) {
  const TensorInfo& in = view.tensors[node.inputs()->Get(0)];
  const TensorInfo& out = view.tensors[node.outputs()->Get(0)];
  const auto* offsets = node.offsets();
  if (in.rank != out.rank || offsets == nullptr || offsets->size() != in.rank)
    return invalid(node, index, "input, output and offsets must have the same rank");
  for (flatbuffers::uoffset_t d = 0; d < in.rank; ++d) {
    const uint64_t offset = offsets->Get(d);
    if (offset > in.dims[d] || out.dims[d] > in.dims[d] - offset)
      return invalid(node, index,
                     "the window at offset " + std::to_string(offset) + " of output " + dims_string(out) +
                         " leaves input " + dims_string(in) + " in dimension " + std::to_string(d));
  }
  return Status::Ok();
}

Status check_channel_shuffle(const BlobView& view, const fb::Node& node, size_t index) {
  const TensorInfo& in = view.tensors[node.inputs()->Get(0)];
  const TensorInfo& out = view.tensors[node.outputs()->Get(0)];
  if (!same_dims(in, out))
    return invalid(node, index, "output dims " + dims_string(out) + " differ from input " + dims_string(in));
  const size_t groups = node.groups();
  if (in.rank == 0 || groups == 0 || in.dims[in.rank - 1] % groups != 0)
    return invalid(node, index,
                   std::to_string(groups) + " groups do not divide the last dimension of " + dims_string(in));
  return Status::Ok();
}

// Splits `rows` into tiles of at least ~16 KiB of copying each.
size_t tile_rows(size_t row_elements) {
  const size_t elements = 4096;
  return row_elements >= elements ? 1 : elements / (row_elements == 0 ? 1 : row_elements);
}

template <typename Op>
struct RunContext {
  const Op* op;
  float* const* data;
};

void concatenate_rows(void* context, size_t first, size_t count) {
  const auto& [op, data] = *static_cast<const RunContext<ConcatenateOp>*>(context);
  size_t out_row = 0;
  for (size_t e : op->row_elements) out_row += e;
  float* out = data[op->output] + first * out_row;
  for (size_t r = first; r < first + count; ++r)
    for (size_t i = 0; i < op->inputs.size(); ++i) {
      const size_t e = op->row_elements[i];
      if (op->in_place.empty() || !op->in_place[i])
        std::memcpy(out, data[op->inputs[i]] + r * e, e * sizeof(float));
      out += e;
    }
}

#if defined(__x86_64__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // as in swish.h
__attribute__((target("avx512f"))) void swish_rows(void* context, size_t first, size_t count) {
  const auto& [op, data] = *static_cast<const RunContext<SwishOp>*>(context);
  const size_t e = op->row_elements;
  const size_t begin = first * e, end = std::min(op->total, (first + count) * e);
  const float* x = data[op->input];
  float* y = data[op->output];
  size_t i = begin;
  for (; i + 16 <= end; i += 16) _mm512_storeu_ps(y + i, swish_ps(_mm512_loadu_ps(x + i)));
  if (i < end) {
    const auto m = static_cast<__mmask16>((1u << (end - i)) - 1);
    _mm512_mask_storeu_ps(y + i, m, swish_ps(_mm512_maskz_loadu_ps(m, x + i)));
  }
}

__attribute__((target("avx2,fma"))) void swish_rows_avx2(void* context, size_t first, size_t count) {
  const auto& [op, data] = *static_cast<const RunContext<SwishOp>*>(context);
  const size_t e = op->row_elements;
  const size_t begin = first * e, end = std::min(op->total, (first + count) * e);
  const float* x = data[op->input];
  float* y = data[op->output];
  size_t i = begin;
  for (; i + 8 <= end; i += 8) _mm256_storeu_ps(y + i, swish_ps(_mm256_loadu_ps(x + i)));
  if (i < end) {
    const __m256i m = lanes_avx2(end - i);
    _mm256_maskstore_ps(y + i, m, swish_ps(_mm256_maskload_ps(x + i, m)));
  }
}
#pragma GCC diagnostic pop
#else
void swish_rows(void*, size_t, size_t) {}
void swish_rows_avx2(void*, size_t, size_t) {}
#endif

void slice_rows(void* context, size_t first, size_t count) {
  const auto& [op, data] = *static_cast<const RunContext<SliceOp>*>(context);
  const size_t e = op->row_elements;
  const size_t outer = op->out_dims.size();
  const float* in = data[op->input];
  float* out = data[op->output];
  for (size_t r = first; r < first + count; ++r) {
    size_t offset = op->start, rest = r;
    for (size_t d = outer; d-- > 0;) {
      offset += (rest % op->out_dims[d]) * op->in_stride[d];
      rest /= op->out_dims[d];
    }
    std::memcpy(out + r * e, in + offset, e * sizeof(float));
  }
}

void shuffle_rows(void* context, size_t first, size_t count) {
  const auto& [op, data] = *static_cast<const RunContext<ChannelShuffleOp>*>(context);
  const size_t c = op->channels, g = op->groups, per_group = c / g;
  for (size_t r = first; r < first + count; ++r) {
    const float* in = data[op->input] + r * c;
    float* out = data[op->output] + r * c;
    for (size_t i = 0; i < g; ++i)
      for (size_t j = 0; j < per_group; ++j) out[j * g + i] = in[i * per_group + j];
  }
}

ConcatenateOp compile_concatenate(const BlobView& view, const fb::Node& node) {
  ConcatenateOp op;
  for (uint32_t id : *node.inputs()) op.inputs.push_back(id);
  op.output = node.outputs()->Get(0);
  const TensorInfo& out = view.tensors[op.output];
  const size_t axis = node.axis();
  op.rows = 1;
  for (size_t d = 0; d < axis; ++d) op.rows *= out.dims[d];
  for (uint32_t id : op.inputs) {
    const TensorInfo& t = view.tensors[id];
    size_t e = 1;
    for (size_t d = axis; d < t.rank; ++d) e *= t.dims[d];
    op.row_elements.push_back(e);
  }
  return op;
}

SliceOp compile_slice(const BlobView& view, const fb::Node& node) {
  SliceOp op;
  op.input = node.inputs()->Get(0);
  op.output = node.outputs()->Get(0);
  const TensorInfo &in = view.tensors[op.input], &out = view.tensors[op.output];
  std::vector<size_t> in_dims(in.dims, in.dims + in.rank), out_dims(out.dims, out.dims + out.rank);
  std::vector<size_t> offsets;
  for (uint64_t o : *node.offsets()) offsets.push_back(static_cast<size_t>(o));
  // Trailing dimensions taken whole merge into the contiguous row.
  while (out_dims.size() > 1 && out_dims.back() == in_dims.back()) {
    const size_t k = out_dims.size();
    out_dims[k - 2] *= out_dims[k - 1];
    offsets[k - 2] *= in_dims[k - 1];
    in_dims[k - 2] *= in_dims[k - 1];
    out_dims.pop_back(), in_dims.pop_back(), offsets.pop_back();
  }
  const size_t k = out_dims.size();
  op.row_elements = out_dims[k - 1];
  op.in_stride.assign(k, 1);
  for (size_t d = k - 1; d-- > 0;) op.in_stride[d] = op.in_stride[d + 1] * in_dims[d + 1];
  op.start = offsets[k - 1];
  for (size_t d = 0; d + 1 < k; ++d) op.start += offsets[d] * op.in_stride[d];
  op.out_dims.assign(out_dims.begin(), out_dims.end() - 1);
  op.in_stride.pop_back();
  op.rows = 1;
  for (size_t d : op.out_dims) op.rows *= d;
  return op;
}

ChannelShuffleOp compile_channel_shuffle(const BlobView& view, const fb::Node& node) {
  ChannelShuffleOp op;
  op.input = node.inputs()->Get(0);
  op.output = node.outputs()->Get(0);
  const TensorInfo& in = view.tensors[op.input];
  op.channels = in.dims[in.rank - 1];
  op.rows = in.numel / op.channels;
  op.groups = node.groups();
  return op;
}

template <typename Op>
void parallel_rows(const Op& op, float* const* data, pthreadpool_t pool, pthreadpool_task_1d_tile_1d_t task,
                   size_t tile) {
  RunContext<Op> context{&op, data};
  pthreadpool_parallelize_1d_tile_1d(pool, task, &context, op.rows, tile, 0);
}

template <typename... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <typename... F>
Overloaded(F...) -> Overloaded<F...>;

}  // namespace

Status check_native_node(const BlobView& view, const fb::Node& node, size_t index) {
  const auto* inputs = node.inputs();
  const auto* outputs = node.outputs();
  const size_t num_in = inputs == nullptr ? 0 : inputs->size();
  const size_t min_in = node.type() == NodeType::BatchMatMul || node.type() == NodeType::LayerNorm ||
                                node.type() == NodeType::ChannelScale
                            ? 2
                            : 1;
  const size_t max_in = node.type() == NodeType::Concatenate ? kMaxConcatInputs
                        : node.type() == NodeType::LayerNorm ? 3
                        : node.type() == NodeType::BatchMatMul || node.type() == NodeType::ChannelScale ? 2
                                                                                                        : 1;
  if (num_in < min_in || num_in > max_in)
    return invalid(node, index,
                   std::to_string(num_in) + " inputs, expected " +
                       (max_in == min_in ? std::to_string(min_in)
                                         : std::to_string(min_in) + " to " + std::to_string(max_in)));
  if (outputs == nullptr || outputs->size() != 1)
    return invalid(node, index,
                   std::to_string(outputs == nullptr ? 0 : outputs->size()) + " outputs, expected 1");
  for (flatbuffers::uoffset_t i = 0; i < num_in; ++i)
    if (inputs->Get(i) >= view.tensors.size())
      return invalid(node, index,
                     "input " + std::to_string(i) + " is tensor " + std::to_string(inputs->Get(i)) +
                         ", but there are " + std::to_string(view.tensors.size()) + " tensors");
  if (outputs->Get(0) >= view.tensors.size())
    return invalid(node, index,
                   "output is tensor " + std::to_string(outputs->Get(0)) + ", but there are " +
                       std::to_string(view.tensors.size()) + " tensors");
  if (view.tensors[outputs->Get(0)].is_constant()) return invalid(node, index, "the output is a constant");
  // AxisSoftmax: bit 0 log-softmax, bit 1 over all dims from the axis on.
  const uint32_t allowed_flags = node.type() == NodeType::AxisSoftmax ? 3u : 0u;
  if ((node.flags() & ~allowed_flags) != 0)
    return invalid(node, index,
                   "flags " + std::to_string(node.flags()) +
                       (allowed_flags == 0 ? " (none allowed)" : " (bits beyond 0 and 1)"));
  switch (node.type()) {
    case NodeType::Concatenate: return check_concatenate(view, node, index);
    case NodeType::Slice: return check_slice(view, node, index);
    case NodeType::ChannelShuffle: return check_channel_shuffle(view, node, index);
    default: return check_math_node(view, node, index);
  }
}

NativeOp swish_op(const BlobView& view, uint32_t x, uint32_t y) {
  SwishOp op;
  op.input = x;
  op.output = y;
  op.total = view.tensors[x].numel;
  op.row_elements = std::min<size_t>(op.total, 1024);
  op.rows = (op.total + op.row_elements - 1) / op.row_elements;
  return op;
}

Result<NativeOp> compile_native_op(const BlobView& view, const fb::Node& node,
                                   const NativeConvOptions& conv_options) {
  switch (node.type()) {
    case NodeType::FullyConnected:
    case NodeType::Convolution2d: {
      if (node.type() == NodeType::Convolution2d && node.groups() > 1) {
        ETC_ASSIGN_OR_RETURN(NativeGroupedPtr conv, compile_native_grouped(view, node));
        return NativeOp(GroupedOp{std::move(conv)});
      }
      ETC_ASSIGN_OR_RETURN(NativeConvPtr conv, compile_native_conv(view, node, conv_options));
      return NativeOp(ConvolutionOp{std::move(conv)});
    }
    case NodeType::Deconvolution2d: {
      ETC_ASSIGN_OR_RETURN(NativeDeconvPtr deconv, compile_native_deconv(view, node));
      return NativeOp(DeconvolutionOp{std::move(deconv)});
    }
    case NodeType::DepthwiseConvolution2d: {
      ETC_ASSIGN_OR_RETURN(NativeDepthwisePtr conv, compile_native_depthwise(view, node));
      return NativeOp(DepthwiseOp{std::move(conv)});
    }
    case NodeType::MaxPooling2d: return NativeOp(compile_max_pool(view, node));
    case NodeType::Concatenate: return NativeOp(compile_concatenate(view, node));
    case NodeType::Slice: return NativeOp(compile_slice(view, node));
    case NodeType::ChannelShuffle: return NativeOp(compile_channel_shuffle(view, node));
    case NodeType::Transpose: return NativeOp(compile_transpose(view, node));
    case NodeType::BatchMatMul: {
      BatchMatMulOp op = compile_batch_matmul(view, node);
      op.on_kernel = conv_options.native_kernels && matmul_runs_on_kernel(op);
      return NativeOp(std::move(op));
    }
    case NodeType::Softmax:
    case NodeType::AxisSoftmax: {
      AxisSoftmaxOp op = node.type() == NodeType::Softmax ? compile_last_axis_softmax(view, node)
                                                          : compile_axis_softmax(view, node);
      op.vector_rows = conv_options.native_kernels && op.inner == 1 && native_convolution_available();
      return NativeOp(op);
    }
    case NodeType::LayerNorm: {
      LayerNormOp op = compile_layer_norm(view, node);
      op.vector_rows = conv_options.native_kernels && native_convolution_available();
      return NativeOp(op);
    }
    case NodeType::Reduce: return NativeOp(compile_reduce(view, node));
    case NodeType::UnaryMath: return NativeOp(compile_unary_math(view, node));
    case NodeType::ResizeNearest: return NativeOp(compile_resize_nearest(view, node));
    case NodeType::ChannelScale: return NativeOp(compile_channel_scale(view, node));
    // Run natively only when it writes a delegate output in NCHW (stages.h).
    case NodeType::StaticResizeBilinear2d: return NativeOp(compile_resize_bilinear_nchw(view, node));
    default:
      return fail(Error::Internal, "xnnpack: node type ", std::to_string(static_cast<int>(node.type())),
                  " has no native kernel");
  }
}

void run_native_op(const NativeOp& native, float* const* data, pthreadpool_t pool) {
  std::visit(
      Overloaded{
          [&](const ConvolutionOp& op) { run_native_conv(*op.conv, data, pool); },
          [&](const DeconvolutionOp& op) { run_native_deconv(*op.deconv, data, pool); },
          [&](const DepthwiseOp& op) { run_native_depthwise(*op.conv, data, pool); },
          [&](const GroupedOp& op) { run_native_grouped(*op.conv, data, pool); },
          [&](const ExpandDepthwiseOp& op) { run_expand_depthwise(op, data, pool); },
          [&](const MaxPoolOp& op) { run_max_pool(op, data, pool); },
          [&](const ConcatenateOp& op) {
            if (!op.in_place.empty() &&
                std::all_of(op.in_place.begin(), op.in_place.end(), [](bool b) { return b; }))
              return;  // every input already wrote its slice
            size_t row = 0;
            for (size_t e : op.row_elements) row += e;
            parallel_rows(op, data, pool, concatenate_rows, tile_rows(row));
          },
          [&](const SliceOp& op) { parallel_rows(op, data, pool, slice_rows, tile_rows(op.row_elements)); },
          [&](const ChannelShuffleOp& op) {
            parallel_rows(op, data, pool, shuffle_rows, tile_rows(op.channels));
          },
          [&](const SwishOp& op) {
            parallel_rows(op, data, pool, native_avx512_available() ? swish_rows : swish_rows_avx2, 16);
          },
          [&](const auto& op) { run_math_op(op, data, pool); },
      },
      native);
}

}  // namespace etc::xnnpack
