#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "runtime/backends/xnnpack/native_conv.h"
#include "runtime/backends/xnnpack/native_deconv.h"
#include "runtime/backends/xnnpack/native_depthwise.h"
#include "runtime/backends/xnnpack/native_grouped.h"
#include "runtime/backends/xnnpack/native_pool.h"
#include "runtime/backends/xnnpack/native_rows.h"
#include "runtime/backends/xnnpack/stage_graph.h"

namespace etc::xnnpack {

const fb::Node& node_at(const BlobView& view, size_t n) {
  return *view.graph->nodes()->Get(static_cast<flatbuffers::uoffset_t>(n));
}

namespace {

std::vector<SwishPattern> find_swishes(const BlobView& view, const std::vector<int64_t>& producer,
                                       const std::vector<int64_t>& readers) {
  std::vector<SwishPattern> found;
  const size_t num_nodes = view.graph->nodes()->size();
  for (size_t n = 0; n < num_nodes; ++n) {
    const fb::Node& m = node_at(view, n);
    if (m.type() != fb::NodeType::Multiply || m.inputs()->size() != 2 || !std::isinf(m.output_min()) ||
        !std::isinf(m.output_max()) || m.output_min() > 0 || m.output_max() < 0)
      continue;
    for (flatbuffers::uoffset_t k = 0; k < 2; ++k) {
      const uint32_t s = m.inputs()->Get(k), x = m.inputs()->Get(1 - k);
      const int64_t p = producer[s];
      if (p < 0 || readers[s] != 1 || view.tensors[s].is_external()) continue;
      const fb::Node& sig = node_at(view, static_cast<size_t>(p));
      if (sig.type() != fb::NodeType::Sigmoid || sig.inputs()->Get(0) != x) continue;
      const TensorInfo &tx = view.tensors[x], &ty = view.tensors[m.outputs()->Get(0)];
      if (tx.numel != ty.numel) continue;  // no broadcasting
      found.push_back(SwishPattern{static_cast<size_t>(p), n, x, m.outputs()->Get(0)});
      break;
    }
  }
  return found;
}

// A one-group 1x1 Convolution2d with stride 1 and no padding (native_conv.h
// is_pointwise once compiled).
bool is_pointwise_node(const fb::Node& node) {
  if (node.type() != fb::NodeType::Convolution2d || node.groups() != 1) return false;
  const auto one = [](const flatbuffers::Vector<uint32_t>* v) {
    return v == nullptr || std::all_of(v->begin(), v->end(), [](uint32_t d) { return d == 1; });
  };
  const auto zero = [](const flatbuffers::Vector<uint32_t>* v) {
    return v == nullptr || std::all_of(v->begin(), v->end(), [](uint32_t d) { return d == 0; });
  };
  return one(node.kernel()) && one(node.stride()) && zero(node.padding());
}

// Whether computing the expansion row by row inside the depthwise
// convolution pays: where the expanded tensor is larger than a core's
// cache, it would be written out to the shared cache or memory and read
// back, and streaming saves that round trip of the block's largest tensor
// (efficientnet_b0's 112x112x96 expansion on a 2 MiB L2: 1148 -> 918 us
// with its depthwise convolution and swish; mobilenet_v2's 16->96 one,
// which runs_natively leaves to XNNPACK alone, 3-5% of the model). Where it
// fits, the two run apart.
bool expansion_pays(const BlobView& view, const fb::Node& depthwise) {
  return view.tensors[depthwise.inputs()->Get(0)].numel * sizeof(float) > core_cache_bytes();
}

bool unclamped(const fb::Node& node) {
  return std::isinf(node.output_min()) && node.output_min() < 0 && std::isinf(node.output_max()) &&
         node.output_max() > 0;
}

// For a two-input node one of whose inputs is a constant with one element:
// the other input and the constant's value.
bool scalar_operand(const BlobView& view, const fb::Node& node, uint32_t& other, float& value) {
  if (node.inputs()->size() != 2) return false;
  for (flatbuffers::uoffset_t k = 0; k < 2; ++k) {
    const TensorInfo& c = view.tensors[node.inputs()->Get(k)];
    if (!c.is_constant() || c.numel != 1 || view.tensors[node.inputs()->Get(1 - k)].is_constant()) continue;
    other = node.inputs()->Get(1 - k);
    std::memcpy(&value, c.constant, sizeof(float));
    return true;
  }
  return false;
}

// The pointwise convolution the native kernel can run that produces a
// depthwise convolution's input for it alone, directly or through a swish
// or hardswish its epilogue computes, and then a scalar multiplication and
// addition (an affine block, fold_output_affines); -1 when there is none.
// (Streamed, it runs natively whatever runs_natively says.)
int64_t expansion_of(const Graph& g, size_t depthwise) {
  uint32_t u = g.node(depthwise).inputs()->Get(0);
  if (g.readers[u] != 1 || g.view.tensors[u].is_external()) return -1;
  for (const fb::NodeType affine : {fb::NodeType::Add, fb::NodeType::Multiply}) {
    const int64_t a = g.producer[u];
    if (a < 0) return -1;
    const fb::Node& r = g.node(static_cast<size_t>(a));
    uint32_t other = 0;
    float value = 0;
    if (r.type() == affine && unclamped(r) && scalar_operand(g.view, r, other, value) &&
        g.readers[other] == 1 && !g.view.tensors[other].is_external())
      u = other;
  }
  int64_t p = g.producer[u];
  if (p < 0) return -1;
  const fb::Node& q = g.node(static_cast<size_t>(p));
  uint32_t x = u;
  int64_t x_readers = 1;
  if (q.type() == fb::NodeType::HardSwish) {
    x = q.inputs()->Get(0);
  } else if (q.type() == fb::NodeType::Multiply) {
    const auto sw = std::find_if(g.swishes.begin(), g.swishes.end(),
                                 [&](const SwishPattern& s) { return s.multiply == static_cast<size_t>(p); });
    if (sw == g.swishes.end()) return -1;
    x = sw->x;
    x_readers = 2;
  }
  if (x != u) {
    p = g.producer[x];
    if (p < 0 || g.readers[x] != x_readers || g.view.tensors[x].is_external()) return -1;
  }
  const size_t conv = static_cast<size_t>(p);
  return can_run_natively(g.node(conv)) && is_pointwise_node(g.node(conv)) ? p : -1;
}

}  // namespace

Graph analyse(const BlobView& view, NativeConvolutions convolutions) {
  Graph g(view, convolutions);
  g.num_nodes = view.graph->nodes() == nullptr ? 0 : view.graph->nodes()->size();
  g.num_tensors = view.tensors.size();
  g.producer.assign(g.num_tensors, -1);
  g.readers.assign(g.num_tensors, 0);
  g.reader.assign(g.num_tensors, -1);
  g.native.assign(g.num_nodes, false);
  for (size_t n = 0; n < g.num_nodes; ++n) {
    const fb::Node& node = g.node(n);
    for (uint32_t id : *node.inputs()) ++g.readers[id];
    for (uint32_t id : *node.outputs()) g.producer[id] = static_cast<int64_t>(n);
  }
  for (size_t n = 0; n < g.num_nodes; ++n)
    for (uint32_t id : *g.node(n).inputs()) g.reader[id] = static_cast<int64_t>(n);
  g.swishes = find_swishes(view, g.producer, g.readers);
  // Tensors a swish or hardswish reads alone (`activated`): a native
  // convolution producing one computes the activation in its epilogue.
  std::vector<bool> activated(g.num_tensors, false);
  for (const SwishPattern& sw : g.swishes) activated[sw.x] = g.readers[sw.x] == 2;
  for (size_t n = 0; n < g.num_nodes; ++n) {
    const fb::Node& node = g.node(n);
    if (node.type() == fb::NodeType::HardSwish && g.readers[node.inputs()->Get(0)] == 1)
      activated[node.inputs()->Get(0)] = true;
  }
  for (size_t n = 0; n < g.num_nodes; ++n) {
    const fb::Node& node = g.node(n);
    const bool folds = node.outputs()->size() == 1 && activated[node.outputs()->Get(0)];
    g.native[n] =
        is_native_node(node.type()) ||
        (convolutions != NativeConvolutions::kOff &&
         (deconv_runs_natively(node) || max_pool_can_run_natively(node) || softmax_runs_natively(node) ||
          depthwise_can_run_natively(node) || grouped_can_run_natively(node))) ||
        (convolutions == NativeConvolutions::kAuto && runs_natively(view, node, folds)) ||
        (convolutions == NativeConvolutions::kAll && can_run_natively(node));
  }
  if (convolutions != NativeConvolutions::kOff) {
    for (size_t n = 0; n < g.num_nodes; ++n) {
      const fb::Node& node = g.node(n);
      if (!depthwise_can_run_natively(node) || !expansion_pays(view, node)) continue;
      const int64_t p = expansion_of(g, n);
      if (p < 0) continue;
      g.native[n] = true;
      g.native[static_cast<size_t>(p)] = true;
      g.expansions.emplace_back(static_cast<size_t>(p), n);
    }
  }
  return g;
}

namespace {

// The native convolution (dense, fully connected or depthwise) whose
// output `t` is and that may write elsewhere instead (into a swish's, a
// hardswish's, a residual Add's or a concatenation's output): `t` is read by
// exactly `readers` nodes and is not a delegate argument, and the
// convolution writes nowhere else yet. -1 when there is none.
int64_t redirectable_convolution(const Graph& g, const StagePlan& plan, uint32_t t, int64_t readers) {
  const int64_t p = g.producer[t];
  if (p < 0 || g.readers[t] != readers || g.view.tensors[t].is_external()) return -1;
  const fb::NodeType type = g.node(static_cast<size_t>(p)).type();
  const bool convolution = type == fb::NodeType::Convolution2d || type == fb::NodeType::FullyConnected ||
                           type == fb::NodeType::DepthwiseConvolution2d;
  if (!g.native[static_cast<size_t>(p)] || !convolution) return -1;
  return plan.writes_into[static_cast<size_t>(p)].active ? -1 : p;
}

}  // namespace

// x * sigmoid(x) in one pass: in the epilogue of the native convolution that
// alone produces x for it, or else as a native swish node in place of the
// multiply (XNNPACK's sigmoid and multiply make two passes). Both need
// AVX-512F, as the native convolution does.
void fold_swishes(Graph& g, StagePlan& plan) {
  for (const SwishPattern& sw : g.swishes) {
    plan.elided[sw.sigmoid] = true;
    plan.folded_into[sw.sigmoid] = static_cast<int64_t>(sw.multiply);
    // x is read by the sigmoid and the multiply.
    const int64_t p = redirectable_convolution(g, plan, sw.x, 2);
    if (p >= 0) {
      const TensorInfo& y = g.view.tensors[sw.y];
      plan.writes_into[static_cast<size_t>(p)] =
          ConvOutput{true, sw.y, 0, y.dims[y.rank - 1], ConvActivation::kSwish};
      plan.elided[sw.multiply] = true;
      plan.folded_into[sw.multiply] = p;
      plan.folded_into[sw.sigmoid] = p;
    } else {
      plan.swish_input[sw.multiply] = sw.x;
      g.native[sw.multiply] = true;
    }
  }
}

// A HardSwish of a convolution's output that nothing else reads folds into
// the convolution's epilogue (mobilenet_v3, the PaddleOCR backbones).
void fold_hardswishes(Graph& g, StagePlan& plan) {
  for (size_t n = 0; n < g.num_nodes; ++n) {
    const fb::Node& hs = g.node(n);
    if (hs.type() != fb::NodeType::HardSwish) continue;
    const uint32_t x = hs.inputs()->Get(0), y = hs.outputs()->Get(0);
    const int64_t p = redirectable_convolution(g, plan, x, 1);
    const TensorInfo& ty = g.view.tensors[y];
    if (p < 0 || g.view.tensors[x].numel != ty.numel) continue;
    plan.writes_into[static_cast<size_t>(p)] =
        ConvOutput{true, y, 0, ty.dims[ty.rank - 1], ConvActivation::kHardSwish};
    plan.elided[n] = true;
    plan.folded_into[n] = p;
  }
}

namespace {

// Add node `add` folds into node `into`, which writes the Add's output with
// `other` (the Add's other operand) as its residual and the Add's clamp.
void fold_add(const Graph& g, StagePlan& plan, size_t add, int64_t into, uint32_t other) {
  const fb::Node& node = g.node(add);
  const uint32_t y = node.outputs()->Get(0);
  const TensorInfo& ty = g.view.tensors[y];
  ConvOutput out{true, y, 0, ty.dims[ty.rank - 1], ConvActivation::kNone};
  out.residual = other;
  out.residual_lo = node.output_min();
  out.residual_hi = node.output_max();
  plan.writes_into[static_cast<size_t>(into)] = out;
  plan.elided[add] = true;
  plan.folded_into[add] = into;
}

}  // namespace

// A residual Add(conv output, r) — no broadcasting, the convolution's output
// read by nothing else, r computed before the convolution — folds into the
// convolution's epilogue (resnet's blocks, mobilenet_v2's).
void fold_residual_adds(const Graph& g, StagePlan& plan) {
  for (size_t n = 0; n < g.num_nodes; ++n) {
    const fb::Node& add = g.node(n);
    if (add.type() != fb::NodeType::Add || add.inputs()->size() != 2) continue;
    const uint32_t y = add.outputs()->Get(0);
    for (flatbuffers::uoffset_t k = 0; k < 2; ++k) {
      const uint32_t t = add.inputs()->Get(k), r = add.inputs()->Get(1 - k);
      const int64_t p = redirectable_convolution(g, plan, t, 1);
      const TensorInfo &tt = g.view.tensors[t], &tr = g.view.tensors[r], &ty = g.view.tensors[y];
      if (p < 0 || tr.is_constant() || t == r || tt.numel != ty.numel || tr.numel != ty.numel ||
          g.producer[r] >= p)
        continue;
      fold_add(g, plan, n, p, r);
      break;
    }
  }
}

namespace {

// The native convolution (dense, fully connected or depthwise) that writes
// tensor t in its epilogue — its own output, or where it writes instead
// (after a folded activation or residual) — when t has that one reader and
// is not a delegate argument; -1 otherwise.
int64_t computing_convolution(const Graph& g, const StagePlan& plan, uint32_t t) {
  if (g.readers[t] != 1 || g.view.tensors[t].is_external()) return -1;
  int64_t p = g.producer[t];
  if (p < 0) return -1;
  if (plan.elided[static_cast<size_t>(p)]) p = plan.folded_into[static_cast<size_t>(p)];
  if (p < 0 || !g.native[static_cast<size_t>(p)]) return -1;
  const fb::Node& node = g.node(static_cast<size_t>(p));
  const fb::NodeType type = node.type();
  if (type != fb::NodeType::Convolution2d && type != fb::NodeType::FullyConnected &&
      type != fb::NodeType::DepthwiseConvolution2d)
    return -1;
  const ConvOutput& out = plan.writes_into[static_cast<size_t>(p)];
  const uint32_t written = out.active ? out.tensor : node.outputs()->Get(0);
  return written == t && out.channel_offset == 0 && !out.affine ? p : -1;
}

}  // namespace

// A multiplication by a scalar constant, an addition of one, or the first
// then the second (PaddleOCR's learnable affine blocks after each
// activation), of what a native convolution computes for it alone, folds
// into the convolution's epilogue: one pass instead of three.
void fold_output_affines(const Graph& g, StagePlan& plan) {
  for (size_t n = 0; n < g.num_nodes; ++n) {
    const fb::Node& first = g.node(n);
    const bool mul = first.type() == fb::NodeType::Multiply;
    if (plan.elided[n] || (!mul && first.type() != fb::NodeType::Add) || !unclamped(first)) continue;
    uint32_t t = 0;
    float value = 0;
    if (!scalar_operand(g.view, first, t, value)) continue;
    const int64_t p = computing_convolution(g, plan, t);
    if (p < 0) continue;
    float scale = mul ? value : 1.0f, shift = mul ? 0.0f : value;
    uint32_t y = first.outputs()->Get(0);
    plan.elided[n] = true;
    plan.folded_into[n] = p;
    // An addition of a scalar that alone reads the product joins it.
    const int64_t a = g.reader[y];
    if (mul && g.readers[y] == 1 && !g.view.tensors[y].is_external() && a >= 0) {
      const fb::Node& add = g.node(static_cast<size_t>(a));
      uint32_t other = 0;
      float b = 0;
      if (add.type() == fb::NodeType::Add && unclamped(add) && scalar_operand(g.view, add, other, b) &&
          other == y) {
        shift = b;
        y = add.outputs()->Get(0);
        plan.elided[static_cast<size_t>(a)] = true;
        plan.folded_into[static_cast<size_t>(a)] = p;
      }
    }
    ConvOutput& out = plan.writes_into[static_cast<size_t>(p)];
    const TensorInfo& ty = g.view.tensors[y];
    if (!out.active) out = ConvOutput{true, y, 0, ty.dims[ty.rank - 1], ConvActivation::kNone};
    out.tensor = y;
    out.affine = true;
    out.scale = scale;
    out.shift = shift;
  }
}

// An Add of a nearest resize's output, which nothing else reads, and a
// tensor of the output's shape computed before the resize (a feature
// pyramid's top-down sum) folds into the native resize: it adds as it
// copies, so the upsampled tensor is never written and read back.
void fold_resize_adds(const Graph& g, StagePlan& plan) {
  for (size_t n = 0; n < g.num_nodes; ++n) {
    const fb::Node& add = g.node(n);
    if (plan.elided[n] || add.type() != fb::NodeType::Add || add.inputs()->size() != 2) continue;
    const uint32_t y = add.outputs()->Get(0);
    const TensorInfo& ty = g.view.tensors[y];
    for (flatbuffers::uoffset_t k = 0; k < 2; ++k) {
      const uint32_t u = add.inputs()->Get(k), z = add.inputs()->Get(1 - k);
      const int64_t r = g.producer[u];
      if (r < 0 || u == z || g.readers[u] != 1 || g.view.tensors[u].is_external() ||
          g.view.tensors[z].is_constant() || !g.native[static_cast<size_t>(r)] ||
          g.node(static_cast<size_t>(r)).type() != fb::NodeType::ResizeNearest ||
          plan.writes_into[static_cast<size_t>(r)].active || g.producer[z] >= r)
        continue;
      const TensorInfo &tu = g.view.tensors[u], &tz = g.view.tensors[z];
      if (tu.rank != ty.rank || tz.rank != ty.rank || !std::equal(tu.dims, tu.dims + tu.rank, ty.dims) ||
          !std::equal(tz.dims, tz.dims + tz.rank, ty.dims))
        continue;
      fold_add(g, plan, n, r, z);
      break;
    }
  }
}

// A ChannelScale (x * s, s one value per channel and image: a
// squeeze-and-excitation gate) whose product only a native one-group
// convolution reads, unclamped, folds into that convolution: on each run it
// scales its packed weights by s (taps x input x output channels
// multiplies) and reads x, so the product is never written and read back
// (pixels x channels). Only where the weights are the smaller, and for one
// image (or one gate for all).
void fold_input_scales(const Graph& g, StagePlan& plan) {
  for (size_t n = 0; n < g.num_nodes; ++n) {
    const fb::Node& scale = g.node(n);
    if (scale.type() != fb::NodeType::ChannelScale || scale.inputs()->size() != 2) continue;
    if (!unclamped(scale)) continue;
    const uint32_t x = scale.inputs()->Get(0), s = scale.inputs()->Get(1), t = scale.outputs()->Get(0);
    const TensorInfo &tx = g.view.tensors[x], &ts = g.view.tensors[s], &tt = g.view.tensors[t];
    if (g.readers[t] != 1 || tt.is_external() || (tx.dims[0] != 1 && ts.dims[0] != 1)) continue;
    for (size_t m = n + 1; m < g.num_nodes; ++m) {
      const fb::Node& conv = g.node(m);
      if (std::find(conv.inputs()->begin(), conv.inputs()->end(), t) == conv.inputs()->end()) continue;
      if (g.native[m] && conv.type() == fb::NodeType::Convolution2d && conv.groups() == 1 &&
          conv.inputs()->Get(0) == t && g.view.tensors[conv.inputs()->Get(1)].numel < tx.numel) {
        plan.elided[n] = true;
        plan.folded_into[n] = static_cast<int64_t>(m);
        plan.input_scale[m] = static_cast<int64_t>(n);
      }
      break;
    }
  }
}

// Native convolutions whose output only a channel concatenation reads write
// straight into the concatenation's output; it copies the rest.
void concatenate_in_place(const Graph& g, StagePlan& plan) {
  for (size_t n = 0; n < g.num_nodes; ++n) {
    const fb::Node& node = g.node(n);
    if (node.type() != fb::NodeType::Concatenate) continue;
    const TensorInfo& out = g.view.tensors[node.outputs()->Get(0)];
    if (node.axis() + 1 != out.rank || out.is_external()) continue;
    plan.in_place[n].assign(node.inputs()->size(), false);
    size_t offset = 0;
    for (flatbuffers::uoffset_t i = 0; i < node.inputs()->size(); ++i) {
      const uint32_t t = node.inputs()->Get(i);
      const TensorInfo& in = g.view.tensors[t];
      const int64_t p = redirectable_convolution(g, plan, t, 1);
      if (p >= 0) {
        plan.writes_into[static_cast<size_t>(p)] =
            ConvOutput{true, node.outputs()->Get(0), offset, out.dims[out.rank - 1], ConvActivation::kNone};
        plan.in_place[n][i] = true;
      }
      offset += in.dims[in.rank - 1];
    }
  }
}

// Each candidate expansion whose output, after the folds, is one tensor
// that only its depthwise convolution reads runs that convolution in its
// stage (StagePlan::expands_into). The depthwise convolution's residual, if
// it folded one, must be computed before the expansion.
void stream_expansions(const Graph& g, StagePlan& plan) {
  for (const auto& [p, d] : g.expansions) {
    const ConvOutput& out = plan.writes_into[p];
    const fb::Node& depthwise = g.node(d);
    const uint32_t t = out.active ? out.tensor : g.node(p).outputs()->Get(0);
    const int64_t residual = plan.writes_into[d].residual;
    if (plan.input_scale[p] >= 0 || plan.elided[d] || depthwise.inputs()->Get(0) != t ||
        (out.active &&
         (out.channel_offset != 0 || out.residual >= 0 || out.pixel_stride != g.view.tensors[t].dims[3])) ||
        (residual >= 0 && g.producer[static_cast<size_t>(residual)] >= static_cast<int64_t>(p)))
      continue;
    plan.expands_into[p] = static_cast<int64_t>(d);
    plan.elided[d] = true;
    for (int64_t& into : plan.folded_into)
      if (into == static_cast<int64_t>(d)) into = static_cast<int64_t>(p);
    plan.folded_into[d] = static_cast<int64_t>(p);
  }
}

}  // namespace etc::xnnpack
