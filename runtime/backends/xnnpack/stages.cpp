#include "runtime/backends/xnnpack/stages.h"

#include <algorithm>
#include <cmath>

#include "runtime/backends/xnnpack/native_conv.h"
#include "runtime/backends/xnnpack/native_math.h"
#include "runtime/backends/xnnpack/stage_graph.h"
#include "runtime/core/arena_plan.h"

namespace etc::xnnpack {
namespace {

// Runs of XNNPACK nodes share a stage when fused; native nodes, and every
// node at a finer detail, have one of their own.
void form_stages(const Graph& g, DelegateDetail detail, StagePlan& plan) {
  for (size_t n = 0; n < g.num_nodes; ++n) {
    if (plan.elided[n]) continue;
    // A native convolution that took over its neighbours' work is not small.
    const bool took_over = plan.swish_input[n] >= 0 || plan.expands_into[n] >= 0 ||
                           (plan.writes_into[n].active && g.node(n).type() != fb::NodeType::ResizeNearest);
    const bool serial = !took_over && is_small_node(g.view, g.node(n));
    if (g.native[n] || detail != DelegateDetail::kFused || plan.stages.empty() || plan.stages.back().native ||
        plan.stages.back().serial != serial)
      plan.stages.push_back(Stage{g.native[n], n, n + 1, serial});
    else
      plan.stages.back().end_node = n + 1;
  }
}

// Native nodes that compute each output element from the input element at
// the same index alone (and other, smaller operands), reading it before
// writing it: their output may take their input's memory.
bool runs_in_place(fb::NodeType type) {
  return type == fb::NodeType::ChannelScale || type == fb::NodeType::UnaryMath;
}

// Every activation is an external value of the XNNPACK runtimes, held in
// buffers planned over the whole delegate. XNNPACK gives each runtime its own
// arena, so tensors left internal to stages would each take memory of their
// own, and a delegate split into many stages would touch far more memory
// than one arena (efficientnet_b0 with every convolution native: 10.0 ms
// with per-stage arenas, 8.7 ms planned here).
void plan_buffers(Graph& g, StagePlan& plan) {
  const BlobView& view = g.view;
  std::vector<int64_t> last_reader(g.num_tensors, -1);
  for (size_t n = 0; n < g.num_nodes; ++n)
    for (uint32_t id : *g.node(n).inputs())
      if (!view.tensors[id].is_constant()) last_reader[id] = static_cast<int64_t>(n);
  // A tensor a convolution writes in place of its own output lives from that
  // convolution on; the outputs so replaced, and the sigmoids folded into
  // swishes, need no memory.
  std::vector<bool> replaced(g.num_tensors, false);
  // A folded ChannelScale's product is never written; its inputs are read
  // by the convolution it folded into.
  for (size_t m = 0; m < g.num_nodes; ++m) {
    if (plan.input_scale[m] < 0) continue;
    const fb::Node& scale = g.node(static_cast<size_t>(plan.input_scale[m]));
    replaced[scale.outputs()->Get(0)] = true;
    for (uint32_t id : *scale.inputs()) last_reader[id] = std::max(last_reader[id], static_cast<int64_t>(m));
  }
  for (size_t n = 0; n < g.num_nodes; ++n) {
    if (plan.elided[n] && g.node(n).type() == fb::NodeType::Sigmoid)
      replaced[g.node(n).outputs()->Get(0)] = true;
    const ConvOutput& out = plan.writes_into[n];
    if (!out.active) continue;
    replaced[g.node(n).outputs()->Get(0)] = true;
    g.producer[out.tensor] = std::min(g.producer[out.tensor], static_cast<int64_t>(n));
  }
  // A streamed expansion's output is never written; its depthwise
  // convolution's is, from the expansion's stage on.
  for (size_t p = 0; p < g.num_nodes; ++p) {
    if (plan.expands_into[p] < 0) continue;
    const auto d = static_cast<size_t>(plan.expands_into[p]);
    replaced[g.node(d).inputs()->Get(0)] = true;
    const uint32_t y = plan.writes_into[d].active ? plan.writes_into[d].tensor : g.node(d).outputs()->Get(0);
    g.producer[y] = std::min(g.producer[y], static_cast<int64_t>(p));
  }
  plan.shared.assign(g.num_tensors, false);
  for (size_t t = 0; t < g.num_tensors; ++t)
    plan.shared[t] = !view.tensors[t].is_constant() &&
                     (g.producer[t] >= 0 || last_reader[t] >= 0 || view.tensors[t].is_external());
  // A tensor lives from its producer to its last reader: no node reads and
  // writes the same memory.
  plan.offset_of.assign(g.num_tensors, kNoOffset);
  // A tensor that an elided node produces and only elided nodes read
  // (between folds chained into one convolution) is never written.
  std::vector<bool> read_live(g.num_tensors, false);
  for (size_t n = 0; n < g.num_nodes; ++n)
    if (!plan.elided[n])
      for (uint32_t id : *g.node(n).inputs()) read_live[id] = true;
  for (size_t t = 0; t < g.num_tensors; ++t)
    if (g.producer[t] >= 0 && plan.elided[static_cast<size_t>(g.producer[t])] && !read_live[t])
      replaced[t] = true;
  const auto in_arena = [&](size_t t) {
    return plan.shared[t] && !view.tensors[t].is_external() && g.producer[t] >= 0 && !replaced[t];
  };
  // Tensors whose memory another takes, written by node n over input x as
  // x dies there: one buffer for both.
  std::vector<size_t> memory_of(g.num_tensors);
  for (size_t t = 0; t < g.num_tensors; ++t) memory_of[t] = t;
  const auto write_over = [&](size_t n, uint32_t x, uint32_t y) {
    if (in_arena(x) && in_arena(y) && g.producer[y] == static_cast<int64_t>(n) &&
        view.tensors[x].numel == view.tensors[y].numel)
      memory_of[y] = memory_of[x];
  };
  std::vector<std::vector<size_t>> readers_of(g.num_tensors);
  for (size_t n = 0; n < g.num_nodes; ++n)
    for (uint32_t id : *g.node(n).inputs()) readers_of[id].push_back(n);
  for (size_t n = 0; n < g.num_nodes; ++n) {
    if (plan.elided[n]) continue;
    // An elementwise native node whose input dies with it (SE gates).
    if (runs_in_place(g.node(n).type())) {
      const uint32_t x = g.node(n).inputs()->Get(0);
      if (last_reader[x] == static_cast<int64_t>(n)) write_over(n, x, g.node(n).outputs()->Get(0));
      continue;
    }
    // A native node that adds a residual in its epilogue (a convolution's,
    // a nearest resize's: a feature pyramid's top-down sum), where the
    // residual dies there: each output element is stored after the residual
    // element at its index is read, and nothing else the node reads is the
    // residual (it is read later only by the Adds folded into the node).
    const ConvOutput& out = plan.writes_into[n];
    if (!g.native[n] || out.residual < 0 || out.channel_offset != 0 ||
        out.pixel_stride != view.tensors[out.tensor].dims[view.tensors[out.tensor].rank - 1])
      continue;
    const auto r = static_cast<uint32_t>(out.residual);
    const bool dies_here = std::all_of(readers_of[r].begin(), readers_of[r].end(), [&](size_t m) {
      return m != n && static_cast<int64_t>(m) != plan.input_scale[n] &&
             (m < n || plan.folded_into[m] == static_cast<int64_t>(n));
    });
    if (dies_here) write_over(n, r, out.tensor);
  }
  // Placed in one arena by size and lifetime (runtime/core/arena_plan.h).
  std::vector<uint32_t> placed;
  std::vector<BufferRequest> requests;
  std::vector<size_t> request_of(g.num_tensors, 0);
  for (size_t t = 0; t < g.num_tensors; ++t) {
    if (!in_arena(t) || memory_of[t] != t) continue;
    request_of[t] = requests.size();
    placed.push_back(static_cast<uint32_t>(t));
    requests.push_back(BufferRequest{view.tensors[t].numel * sizeof(float),
                                     static_cast<int32_t>(g.producer[t]),
                                     static_cast<int32_t>(std::max(g.producer[t], last_reader[t]))});
  }
  // A buffer shared in place lives until its last tensor's last reader.
  for (size_t t = 0; t < g.num_tensors; ++t)
    if (in_arena(t) && memory_of[t] != t) {
      BufferRequest& r = requests[request_of[memory_of[t]]];
      r.last = std::max(r.last, static_cast<int32_t>(std::max(g.producer[t], last_reader[t])));
    }
  const ArenaPlacement placement = place_in_arena(requests);
  for (size_t i = 0; i < placed.size(); ++i)
    plan.offset_of[placed[i]] = static_cast<int64_t>(placement.offsets[i] / sizeof(float));
  for (size_t t = 0; t < g.num_tensors; ++t)
    if (in_arena(t) && memory_of[t] != t) plan.offset_of[t] = plan.offset_of[memory_of[t]];
  plan.arena_elements = placement.arena_size / sizeof(float);
}

// A bilinear resize whose output is a delegate output turned to NCHW and
// read by no other node runs natively and writes the argument's NCHW layout
// itself. A segmentation head ends so: LR-ASPP's 21x320x320 logits took an
// 8.6 MB staging buffer, XNNPACK's 3.3 MB indirection buffer for the resize
// and a 2 ms transpose after every run.
void resize_into_arguments(Graph& g, StagePlan& plan) {
  const BlobView& view = g.view;
  for (size_t n = 0; n < g.num_nodes; ++n) {
    const fb::Node& node = g.node(n);
    if (node.type() != fb::NodeType::StaticResizeBilinear2d || plan.elided[n]) continue;
    const uint32_t y = node.outputs()->Get(0);
    const TensorInfo &in = view.tensors[node.inputs()->Get(0)], &out = view.tensors[y];
    // With one channel or one pixel the layouts hold the same bytes: no staging to save.
    if (out.external_output < 0 || out.external_input >= 0 || out.layout != fb::BoundaryLayout::NhwcToNchw ||
        g.readers[y] != 0 || out.dims[3] == 1 || out.dims[1] * out.dims[2] == 1 || in.dims[1] == 0 ||
        in.dims[2] == 0)
      continue;
    g.native[n] = true;
    plan.nchw_output[y] = true;
  }
}

// A delegate input arriving in NCHW whose only reader is a native
// convolution with padded rows: the convolution copies it into its
// zero-bordered buffer on every run anyway, and turns it to NHWC in that
// copy. An image model's stem so reads its argument directly: PP-OCR's
// detector at 640x640 had a 4.9 MB staging buffer and a transpose before
// the copy.
void inputs_read_as_nchw(const Graph& g, StagePlan& plan) {
  const BlobView& view = g.view;
  for (size_t t = 0; t < g.num_tensors; ++t) {
    const TensorInfo& x = view.tensors[t];
    if (x.external_input < 0 || x.external_output >= 0 || x.layout != fb::BoundaryLayout::NchwToNhwc ||
        x.rank != 4 || x.dims[3] == 1 || x.dims[1] * x.dims[2] == 1 || g.readers[t] != 1 || g.reader[t] < 0)
      continue;
    const auto n = static_cast<size_t>(g.reader[t]);
    const fb::Node& node = g.node(n);
    if (!g.native[n] || plan.elided[n] || plan.input_scale[n] >= 0 || plan.expands_into[n] >= 0 ||
        plan.swish_input[n] >= 0 || node.inputs()->Get(0) != t || !can_run_natively(node) ||
        !uses_padded_rows(view, node) || winograd_applies(node))
      continue;
    plan.nchw_input[t] = true;
  }
}

}  // namespace

namespace {

// Nodes that only move or lightly combine data: bound by memory, which a
// second core on the same memory does not make faster, so they never wake it.
// The native ChannelScale is not among them: it splits its pixels into one
// contiguous range per thread, as the convolutions and passes that produce
// its input do, so each core reads what it wrote (efficientnet_b0 at 2
// threads: its unfolded gates took 411 us serially; in parallel the run
// was 1.5% faster).
bool memory_bound(fb::NodeType type) {
  switch (type) {
    case fb::NodeType::Add:
    case fb::NodeType::Subtract:
    case fb::NodeType::Multiply:
    case fb::NodeType::Maximum:
    case fb::NodeType::Minimum:
    case fb::NodeType::Clamp:
    case fb::NodeType::Abs:
    case fb::NodeType::Negate:
    case fb::NodeType::StaticConstantPad:
    case fb::NodeType::StaticReshape:
    case fb::NodeType::GlobalAveragePooling2d:
    case fb::NodeType::Concatenate:
    case fb::NodeType::Slice:
    case fb::NodeType::ChannelShuffle:
    case fb::NodeType::Transpose:
    case fb::NodeType::ResizeNearest: return true;
    default: return false;
  }
}

}  // namespace

void apply_conv_output(const ConvOutput& out, NativeEpilogue& e) {
  if (out.active) {
    e.output = out.tensor;
    e.out_offset = out.channel_offset;
    e.out_stride = out.pixel_stride;
    e.activation = out.activation;
  }
  if (out.affine) {
    e.affine = true;
    e.scale = out.scale;
    e.shift = out.shift;
  }
  if (out.residual >= 0) {
    e.has_residual = true;
    e.residual = static_cast<uint32_t>(out.residual);
    e.residual_lo = out.residual_lo;
    e.residual_hi = out.residual_hi;
  }
}

bool is_small_node(const BlobView& view, const fb::Node& node) {
  if (memory_bound(node.type())) return true;
  // Rough single-core costs: a multiply-add of a matrix product 0.01 ns,
  // an element read or written by anything else 0.2 ns. Below ~6 us, waking
  // and joining a second thread (a few us) costs more than it saves.
  constexpr double kSerialNanoseconds = 6000.0;
  size_t touched = 0;
  for (uint32_t id : *node.inputs())
    if (!view.tensors[id].is_constant()) touched += view.tensors[id].numel;
  const TensorInfo& out = view.tensors[node.outputs()->Get(0)];
  touched += out.numel;
  double macs = 0;
  switch (node.type()) {
    case fb::NodeType::Convolution2d:
    case fb::NodeType::DepthwiseConvolution2d:
    case fb::NodeType::Deconvolution2d:
    case fb::NodeType::FullyConnected: {
      // Filters hold (taps x input channels) per output channel; for a
      // depthwise one that is its taps.
      const TensorInfo& w = view.tensors[node.inputs()->Get(1)];
      const size_t out_c = std::max<size_t>(out.dims[out.rank - 1], 1);
      macs = static_cast<double>(out.numel) * static_cast<double>(w.numel / out_c);
      break;
    }
    case fb::NodeType::BatchMatMul:
      macs = static_cast<double>(out.numel) * static_cast<double>(node.mnk() ? node.mnk()->Get(2) : 1);
      break;
    default: break;
  }
  return 0.01 * macs + 0.2 * static_cast<double>(touched) < kSerialNanoseconds;
}

StagePlan plan_stages(const BlobView& view, NativeConvolutions convolutions, DelegateDetail detail) {
  Graph g = analyse(view, convolutions);
  StagePlan plan;
  plan.writes_into.assign(g.num_nodes, ConvOutput{});
  plan.in_place.assign(g.num_nodes, {});
  plan.elided.assign(g.num_nodes, false);
  plan.folded_into.assign(g.num_nodes, -1);
  plan.swish_input.assign(g.num_nodes, -1);
  plan.input_scale.assign(g.num_nodes, -1);
  plan.expands_into.assign(g.num_nodes, -1);
  plan.nchw_output.assign(g.num_tensors, false);
  plan.nchw_input.assign(g.num_tensors, false);
  // Logged node outputs are read as NHWC: every one stays so.
  if (convolutions != NativeConvolutions::kOff && detail != DelegateDetail::kNodeOutputs)
    resize_into_arguments(g, plan);
  // Logging every node's output needs every node's output: nothing folds.
  if (detail != DelegateDetail::kNodeOutputs) {
    if (convolutions != NativeConvolutions::kOff) {
      fold_input_scales(g, plan);
      fold_swishes(g, plan);
      fold_hardswishes(g, plan);
    }
    fold_residual_adds(g, plan);
    fold_resize_adds(g, plan);
    if (convolutions != NativeConvolutions::kOff) fold_output_affines(g, plan);
    concatenate_in_place(g, plan);
    stream_expansions(g, plan);
  }
  if (convolutions != NativeConvolutions::kOff) inputs_read_as_nchw(g, plan);
  form_stages(g, detail, plan);
  plan_buffers(g, plan);
  return plan;
}

}  // namespace etc::xnnpack
