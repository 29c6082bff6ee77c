// One oneDNN primitive per blob node kind (builder.h).
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runtime/backends/onednn/builder.h"

namespace etc::onednn {
namespace {

using tag = dnnl::memory::format_tag;

constexpr auto kInference = dnnl::prop_kind::forward_inference;

// oneDNN offers Winograd with 2x2 output tiles (F(2x2, 3x3), "wino_2x3")
// and 4x4 ones ("wino_4x3") and lists the first before the second, whatever
// the shape. Per pair of input and output channels, 4x4 tiles take 36
// products per tile of 16 outputs against 16 per tile of 4, but stream 36
// transformed weights against 16. Inside a network a layer's weights come
// from memory, not cache, so each extra weight costs about as much as 40
// products (measured on a 2-core AVX-512 machine: 4x4 tiles gained 1.35x on
// a 56x56x64 layer, matched 2x2 at 28x28x128 and lost 1.25x at 14x14x256).
const char* winograd_tile(const std::vector<int64_t>& out) {
  const int64_t tiles2 = ((out[2] + 1) / 2) * ((out[3] + 1) / 2);
  const int64_t tiles4 = ((out[2] + 3) / 4) * ((out[3] + 3) / 4);
  const int64_t products_saved = 16 * tiles2 - 36 * tiles4;
  return products_saved > 40 * (36 - 16) ? "wino_4x3" : "wino_2x3";
}

// Moves `pd` to the first implementation whose name contains `want`, if
// any; else back to the first. The operation descriptor `pd` was created
// from must still be alive: oneDNN's iterator reads it.
template <typename PrimitiveDesc>
void prefer_implementation(PrimitiveDesc& pd, const char* want) {
  const PrimitiveDesc first = pd;
  do {
    if (std::string(pd.impl_info_str()).find(want) != std::string::npos) return;
  } while (pd.next_impl());
  pd = first;
}

// Whether oneDNN chose its reference implementation (plain loops, the
// fallback for layouts no optimised one takes).
template <typename PrimitiveDesc>
bool is_reference(const PrimitiveDesc& pd) {
  return std::string(pd.impl_info_str()).rfind("ref", 0) == 0;
}

// The first descriptor of `attempts` that is not a reference
// implementation; else the first one made (a refusal is rethrown when none
// was).
template <typename PrimitiveDesc>
PrimitiveDesc first_optimized(const std::vector<std::function<PrimitiveDesc()>>& attempts) {
  std::optional<PrimitiveDesc> first;
  std::optional<dnnl::error> refusal;
  for (const auto& attempt : attempts) {
    try {
      PrimitiveDesc pd = attempt();
      if (!is_reference(pd)) return pd;
      if (!first) first = std::move(pd);
    } catch (const dnnl::error& e) {
      if (!refusal) refusal = e;
    }
  }
  if (first) return *first;
  throw *refusal;
}

dnnl::memory::dims minus_one(const std::vector<int64_t>& v) {
  dnnl::memory::dims d;
  for (int64_t x : v) d.push_back(x - 1);
  return d;
}

}  // namespace

void Builder::build_node(const fb::Node& node) {
  switch (node.kind()) {
    case fb::NodeKind::Convolution: return convolution(node);
    case fb::NodeKind::Pooling: return pooling(node);
    case fb::NodeKind::Binary: return binary(node);
    case fb::NodeKind::Eltwise: return eltwise(node);
    case fb::NodeKind::Concat: return concat(node);
    case fb::NodeKind::InnerProduct: return inner_product(node);
    case fb::NodeKind::Softmax: return softmax(node);
    case fb::NodeKind::Reshape: return reshape(node);
    case fb::NodeKind::BatchNorm: return batch_norm(node);
  }
}

bool Builder::winograd_candidate(const fb::Node& node, const std::vector<int64_t>& w) const {
  if (w.size() != 4) return false;
  bool unit = true;
  for (int64_t v : vec(node.strides())) unit = unit && v == 1;
  for (int64_t v : vec(node.dilations())) unit = unit && v == 1;
  return winograd_applies(options_.winograd, w[2], w[3], node.groups(), unit, w[0], w[1]);
}

void Builder::convolution(const fb::Node& node) {
  const auto* in = node.inputs();
  const uint32_t x = in->Get(0), w = in->Get(1), y = node.outputs()->Get(0);
  const std::vector<int64_t>& wd = tensor(w).dims;
  const int64_t g = node.groups();
  std::vector<int64_t> grouped = wd;
  if (g > 1) {
    grouped = {g, wd[0] / g, wd[1]};
    grouped.insert(grouped.end(), wd.begin() + 2, wd.end());
  }
  const md held = held_desc(x);
  const md src = is_plain(held) ? any(tensor(x).dims) : held;
  const bool has_bias = in->size() == 3;
  const md bias = has_bias ? any({wd[0]}) : md();
  const auto make = [&](dnnl::algorithm algorithm, const md& source, const md& dst,
                        const char* prefer = nullptr) {
    dnnl::convolution_forward::desc d =
        has_bias
            ? dnnl::convolution_forward::desc(kInference, algorithm, source, any(grouped), bias, dst,
                                              to_dims(vec(node.strides())), minus_one(vec(node.dilations())),
                                              to_dims(vec(node.pads_begin())), to_dims(vec(node.pads_end())))
            : dnnl::convolution_forward::desc(kInference, algorithm, source, any(grouped), dst,
                                              to_dims(vec(node.strides())), minus_one(vec(node.dilations())),
                                              to_dims(vec(node.pads_begin())), to_dims(vec(node.pads_end())));
    dnnl::convolution_forward::primitive_desc pd(d, attr(post_ops(node)), out_.engine);
    if (prefer != nullptr) prefer_implementation(pd, prefer);
    return pd;
  };
  const auto choose_for = [&](const md& source, const md& dst) {
    if (winograd_candidate(node, wd)) {
      try {
        return make(dnnl::algorithm::convolution_winograd, any(tensor(x).dims), dst,
                    winograd_tile(tensor(y).dims));
      } catch (const dnnl::error&) {
        // Refused for this shape or CPU: direct below.
      }
    }
    return make(dnnl::algorithm::convolution_direct, source, dst);
  };
  // Writing a slice of a concatenation in place, in its layout, and reading
  // the input as held are preferred; but not at the price of oneDNN's
  // reference implementation (an NHWC input with a blocked slice as output
  // gets only that one: 10-100x slower), so each is given up in turn.
  const md wanted = output_desc(y);
  std::vector<md> sources = {src}, dsts;
  if (src.data.format_kind != dnnl_format_kind_any) sources.push_back(any(tensor(x).dims));
  if (wanted.data.format_kind != dnnl_format_kind_any) dsts.push_back(wanted);
  dsts.push_back(any(tensor(y).dims));
  using ConvolutionDesc = dnnl::convolution_forward::primitive_desc;
  std::vector<std::function<ConvolutionDesc()>> attempts;
  for (const md& dst : dsts)
    for (const md& source : sources)
      attempts.emplace_back([&, source, dst] { return choose_for(source, dst); });
  const auto choose = [&] { return first_optimized(attempts); };
  const dnnl::convolution_forward::primitive_desc pd = matching_packed(choose, w);
  StepArgs args = {{DNNL_ARG_SRC, input(x, pd.src_desc())},
                   {DNNL_ARG_WEIGHTS, constant(w, plain(grouped), pd.weights_desc())}};
  if (has_bias) args.emplace_back(DNNL_ARG_BIAS, constant(in->Get(2), plain({wd[0]}), pd.bias_desc()));
  args.emplace_back(DNNL_ARG_DST, place(node, pd.dst_desc()));
  add_node_step<dnnl::convolution_forward>(pd, std::move(args), y);
}

void Builder::pooling(const fb::Node& node) {
  const uint32_t x = node.inputs()->Get(0), y = node.outputs()->Get(0);
  const auto make = [&](const md& src) {
    dnnl::pooling_v2_forward::desc d(kInference, to_dnnl(node.algorithm()), src, any(tensor(y).dims),
                                     to_dims(vec(node.strides())), to_dims(vec(node.kernel())),
                                     minus_one(vec(node.dilations())), to_dims(vec(node.pads_begin())),
                                     to_dims(vec(node.pads_end())));
    return dnnl::pooling_v2_forward::primitive_desc(d, attr(), out_.engine);
  };
  using PoolingDesc = dnnl::pooling_v2_forward::primitive_desc;
  const PoolingDesc pd = first_optimized<PoolingDesc>(
      {[&] { return make(held_desc(x)); }, [&] { return make(plain(tensor(x).dims)); }});
  source_to_output<dnnl::pooling_v2_forward>(pd, x, y);
}

void Builder::binary(const fb::Node& node) {
  const uint32_t a = node.inputs()->Get(0), b = node.inputs()->Get(1), y = node.outputs()->Get(0);
  const bool same = tensor(a).dims == tensor(b).dims;
  const auto make = [&](const md& first, const md& second) {
    dnnl::binary::desc d(to_dnnl(node.algorithm()), first, second, any(tensor(y).dims));
    return dnnl::binary::primitive_desc(d, attr(post_ops(node)), out_.engine);
  };
  using BinaryDesc = dnnl::binary::primitive_desc;
  const BinaryDesc pd =
      first_optimized<BinaryDesc>({[&] {
                                     const md first = held_desc(a);
                                     return make(first, same ? first : held_desc(b));
                                   },
                                   [&] { return make(plain(tensor(a).dims), plain(tensor(b).dims)); }});
  StepArgs args = {{DNNL_ARG_SRC_0, input(a, pd.src_desc(0))},
                   {DNNL_ARG_SRC_1, input(b, pd.src_desc(1))},
                   {DNNL_ARG_DST, place_output(y, pd.dst_desc())}};
  add_node_step<dnnl::binary>(pd, std::move(args), y);
}

void Builder::eltwise(const fb::Node& node) {
  const uint32_t x = node.inputs()->Get(0), y = node.outputs()->Get(0);
  dnnl::eltwise_forward::desc d(kInference, to_dnnl(node.algorithm()), held_desc(x), node.alpha(),
                                node.beta());
  source_to_output<dnnl::eltwise_forward>(dnnl::eltwise_forward::primitive_desc(d, attr(), out_.engine), x,
                                          y);
}

void Builder::concat(const fb::Node& node) {
  const auto* in = node.inputs();
  const uint32_t y = node.outputs()->Get(0);
  if (held_[y] >= 0) {
    // Its inputs' producers wrote their slices in place
    // (plan_concat_slices); the others are copied into theirs.
    tag layout{};
    slice_tag(desc_of(held_[y]), layout);
    int copies = 0;
    int64_t channel = 0;
    for (uint32_t t : *in) {
      if (!written_in_place(t, y, channel)) {
        const md want(to_dims(tensor(t).dims), dnnl::memory::data_type::f32, layout);
        reorder(held(t), new_memory(want, buffer_index(held_[y]), slice_offset(t, channel)));
        ++copies;
      }
      channel += tensor(t).dims[1];
    }
    reorders_ = 0;
    group_->metadata = "impl=in-place;copies=" + std::to_string(copies);
    finish_output(y);
    return;
  }
  std::vector<md> sources;
  for (uint32_t t : *in) sources.push_back(held_desc(t));
  dnnl::concat::primitive_desc pd;
  try {
    pd = dnnl::concat::primitive_desc(node.axis(), sources, out_.engine, attr());
  } catch (const dnnl::error&) {
    for (size_t i = 0; i < sources.size(); ++i)
      sources[i] = plain(tensor(in->Get(static_cast<uint32_t>(i))).dims);
    pd = dnnl::concat::primitive_desc(node.axis(), sources, out_.engine, attr());
  }
  StepArgs args;
  for (uint32_t i = 0; i < in->size(); ++i)
    args.emplace_back(DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i),
                      input(in->Get(i), pd.src_desc(static_cast<int>(i))));
  args.emplace_back(DNNL_ARG_DST, place_output(y, pd.dst_desc()));
  add_node_step<dnnl::concat>(pd, std::move(args), y);
}

void Builder::inner_product(const fb::Node& node) {
  const auto* in = node.inputs();
  const uint32_t x = in->Get(0), w = in->Get(1), y = node.outputs()->Get(0);
  const std::vector<int64_t>& xd = tensor(x).dims;
  std::vector<int64_t> wd = {tensor(w).dims[0]};
  wd.insert(wd.end(), xd.begin() + 1, xd.end());  // [O, K] read as [O, C, H, W] for a 4-D input
  const bool has_bias = in->size() == 3;
  dnnl::inner_product_forward::desc d =
      has_bias
          ? dnnl::inner_product_forward::desc(kInference, any(xd), any(wd), any({wd[0]}), any(tensor(y).dims))
          : dnnl::inner_product_forward::desc(kInference, any(xd), any(wd), any(tensor(y).dims));
  const auto pd = matching_packed(
      [&] { return dnnl::inner_product_forward::primitive_desc(d, attr(post_ops(node)), out_.engine); }, w);
  StepArgs args = {{DNNL_ARG_SRC, input(x, pd.src_desc())},
                   {DNNL_ARG_WEIGHTS, constant(w, plain(wd), pd.weights_desc())}};
  if (has_bias) args.emplace_back(DNNL_ARG_BIAS, constant(in->Get(2), plain({wd[0]}), pd.bias_desc()));
  args.emplace_back(DNNL_ARG_DST, place_output(y, pd.dst_desc()));
  add_node_step<dnnl::inner_product_forward>(pd, std::move(args), y);
}

void Builder::softmax(const fb::Node& node) {
  const uint32_t x = node.inputs()->Get(0), y = node.outputs()->Get(0);
  const auto run = [&](const md& src) {
    if (node.log())
      source_to_output<dnnl::logsoftmax_forward>(
          dnnl::logsoftmax_forward::primitive_desc(
              dnnl::logsoftmax_forward::desc(kInference, src, node.axis()), attr(), out_.engine),
          x, y);
    else
      source_to_output<dnnl::softmax_forward>(
          dnnl::softmax_forward::primitive_desc(dnnl::softmax_forward::desc(kInference, src, node.axis()),
                                                attr(), out_.engine),
          x, y);
  };
  try {
    run(held_desc(x));
  } catch (const dnnl::error&) {
    run(plain(tensor(x).dims));
  }
}

// Row-major elements reinterpreted with the output's dims: no step when
// the input is already row-major and the output is not a delegate argument.
void Builder::reshape(const fb::Node& node) {
  const uint32_t x = node.inputs()->Get(0), y = node.outputs()->Get(0);
  const md src = plain(tensor(x).dims), dst = plain(tensor(y).dims);
  const int64_t arg = output_arg(y);
  if (arg >= 0) {
    const int to = new_memory(src, new_buffer(0, arg));
    reorder(held(x), to);
    held_[y] = new_memory(dst, buffer_index(to));
    return;
  }
  const int from = input(x, src);
  const int buffer = buffer_index(from);
  held_[y] = new_memory(dst, buffer, offset_of(from));
  shared_.insert(buffer);
  group_->metadata = "impl=reshape";
}

void Builder::batch_norm(const fb::Node& node) {
  const auto* in = node.inputs();
  const uint32_t x = in->Get(0), y = node.outputs()->Get(0);
  const auto flags = dnnl::normalization_flags::use_global_stats | dnnl::normalization_flags::use_scale |
                     dnnl::normalization_flags::use_shift;
  dnnl::batch_normalization_forward::desc d(kInference, held_desc(x), node.epsilon(), flags);
  dnnl::batch_normalization_forward::primitive_desc pd(d, attr(), out_.engine);
  StepArgs args = {{DNNL_ARG_SRC, input(x, pd.src_desc())}, {DNNL_ARG_SCALE, held(in->Get(1))},
                   {DNNL_ARG_SHIFT, held(in->Get(2))},      {DNNL_ARG_MEAN, held(in->Get(3))},
                   {DNNL_ARG_VARIANCE, held(in->Get(4))},   {DNNL_ARG_DST, place_output(y, pd.dst_desc())}};
  add_node_step<dnnl::batch_normalization_forward>(pd, std::move(args), y);
}

}  // namespace etc::onednn
