#include "runtime/backends/onednn/partition_builder.h"

#include <omp.h>

#include <cstddef>
#include <cstring>
#include <set>
#include <stdexcept>

#include "runtime/backends/onednn/prepack.h"

namespace etc::onednn {
namespace {

using dnnl::memory;
using md = dnnl::memory::desc;
using tag = dnnl::memory::format_tag;
constexpr auto kInference = dnnl::prop_kind::forward_inference;

memory::dims to_dims(const std::vector<int64_t>& d) { return memory::dims(d.begin(), d.end()); }

md plain(const std::vector<int64_t>& dims) {
  // Up to 6-D: a grouped 3-D convolution's weights [g, O/g, I/g, kd, kh, kw].
  static const tag kTags[] = {tag::a, tag::ab, tag::abc, tag::abcd, tag::abcde, tag::abcdef};
  return md(to_dims(dims), memory::data_type::f32, kTags[dims.size() - 1]);
}

md any(const std::vector<int64_t>& dims) { return md(to_dims(dims), memory::data_type::f32, tag::any); }

bool is_plain(const md& d) {
  const memory::dims dims = d.dims();
  return d == plain(std::vector<int64_t>(dims.begin(), dims.end()));
}

dnnl::algorithm to_dnnl(fb::Algorithm a) {
  switch (a) {
    case fb::Algorithm::PoolMax: return dnnl::algorithm::pooling_max;
    case fb::Algorithm::PoolAvgIncludePad: return dnnl::algorithm::pooling_avg_include_padding;
    case fb::Algorithm::PoolAvgExcludePad: return dnnl::algorithm::pooling_avg_exclude_padding;
    case fb::Algorithm::Add: return dnnl::algorithm::binary_add;
    case fb::Algorithm::Sub: return dnnl::algorithm::binary_sub;
    case fb::Algorithm::Mul: return dnnl::algorithm::binary_mul;
    case fb::Algorithm::Div: return dnnl::algorithm::binary_div;
    case fb::Algorithm::Max: return dnnl::algorithm::binary_max;
    case fb::Algorithm::Min: return dnnl::algorithm::binary_min;
    case fb::Algorithm::Relu: return dnnl::algorithm::eltwise_relu;
    case fb::Algorithm::Clip: return dnnl::algorithm::eltwise_clip_v2;
    case fb::Algorithm::Logistic: return dnnl::algorithm::eltwise_logistic;
    case fb::Algorithm::Tanh: return dnnl::algorithm::eltwise_tanh;
    case fb::Algorithm::HardSwish: return dnnl::algorithm::eltwise_hardswish;
    case fb::Algorithm::Elu: return dnnl::algorithm::eltwise_elu;
    case fb::Algorithm::Abs: return dnnl::algorithm::eltwise_abs;
    case fb::Algorithm::Sqrt: return dnnl::algorithm::eltwise_sqrt;
    case fb::Algorithm::Exp: return dnnl::algorithm::eltwise_exp;
    case fb::Algorithm::Log: return dnnl::algorithm::eltwise_log;
    case fb::Algorithm::GeluErf: return dnnl::algorithm::eltwise_gelu_erf;
    case fb::Algorithm::GeluTanh: return dnnl::algorithm::eltwise_gelu_tanh;
    case fb::Algorithm::None: break;
  }
  return dnnl::algorithm::undef;  // the reader admits no other value where one is used
}

std::vector<int64_t> vec(const flatbuffers::Vector<int64_t>* v) {
  return v == nullptr ? std::vector<int64_t>{} : std::vector<int64_t>(v->begin(), v->end());
}

class Builder {
 public:
  Builder(const BlobView& view, const CompileOptions& options, CompiledPartition& out, PartitionPlan& plan)
      : view_(view),
        options_(options),
        out_(out),
        plan_(plan),
        held_(view.tensors.size(), -1),
        converted_(view.tensors.size()) {}

  Status build() {
    if (options_.log_outputs) {
      size_t largest = 0;
      for (const TensorInfo& t : view_.tensors) largest = std::max(largest, static_cast<size_t>(t.numel));
      out_.log_buffer = AlignedBuffer::allocate(largest * sizeof(float));
      if (!out_.log_buffer)
        return fail(Error::DelegateMemoryAllocationFailed, "onednn: cannot allocate a log buffer");
    }
    for (size_t i = 0; i < view_.input_tensors.size(); ++i) {
      const uint32_t t = view_.input_tensors[i];
      held_[t] = new_memory(plain(view_.tensors[t].dims), new_buffer(0, static_cast<int64_t>(i)));
    }
    const auto* nodes = view_.graph->nodes();
    for (uint32_t n = 0; n < nodes->size(); ++n) {
      const fb::Node& node = *nodes->Get(n);
      plan_.groups.emplace_back();
      group_ = &plan_.groups.back();
      group_->debug_id = node.debug_id();
      node_ = n;
      try {
        build_node(node);
        if (options_.log_outputs && node.debug_id() != kNoDebugId) log_output(node.outputs()->Get(0));
      } catch (const dnnl::error& e) {
        return fail(Error::InvalidProgram, "onednn: node ", std::to_string(n), " (",
                    fb::EnumNameNodeKind(node.kind()), "): oneDNN cannot create it: ", e.what());
      } catch (const std::runtime_error& e) {
        return fail(Error::DelegateInvalidCompatibility, "onednn: node ", std::to_string(n), " (",
                    fb::EnumNameNodeKind(node.kind()), "): ", e.what());
      }
      if (reorders_ > 0) group_->metadata += ";reorders=" + std::to_string(reorders_);
      reorders_ = 0;
    }
    return Status::Ok();
  }

 private:
  int new_buffer(size_t bytes, int64_t arg = -1, void* fixed = nullptr) {
    plan_.buffers.push_back(BufferPlan{bytes, INT32_MAX, -1, 0, arg, fixed});
    return static_cast<int>(plan_.buffers.size() - 1);
  }
  int new_memory(const md& desc, int buffer) {
    plan_.memories.push_back(MemoryPlan{desc, buffer});
    return static_cast<int>(plan_.memories.size() - 1);
  }
  const md& desc_of(int memory) const { return plan_.memories[static_cast<size_t>(memory)].desc; }
  BufferPlan& buffer_of(int memory) {
    return plan_.buffers[static_cast<size_t>(plan_.memories[static_cast<size_t>(memory)].buffer)];
  }
  const TensorInfo& tensor(uint32_t t) const { return view_.tensors[t]; }
  int64_t output_arg(uint32_t t) const {
    const int32_t j = tensor(t).external_output;
    return j < 0 ? -1 : static_cast<int64_t>(view_.input_tensors.size()) + j;
  }

  void add_step(dnnl::primitive primitive, const dnnl::primitive_desc_base& pd,
                std::vector<std::pair<int, int>> args) {
    const int index = steps_++;
    for (const auto& [arg, memory] : args) {
      BufferPlan& b = buffer_of(memory);
      b.first = std::min(b.first, index);
      b.last = std::max(b.last, index);
    }
    const md scratch = pd.scratchpad_desc();
    plan_.scratchpad_bytes = std::max(plan_.scratchpad_bytes, scratch.get_size());
    group_->steps.push_back(PlannedStep{std::move(primitive), std::move(args), scratch});
  }

  static dnnl::primitive_attr attr(const dnnl::post_ops& post = dnnl::post_ops()) {
    dnnl::primitive_attr a;
    a.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    a.set_post_ops(post);
    return a;
  }

  void reorder(int from, int to) {
    dnnl::reorder::primitive_desc pd(out_.engine, desc_of(from), out_.engine, desc_of(to), attr());
    add_step(dnnl::reorder(pd), pd, {{DNNL_ARG_SRC, from}, {DNNL_ARG_DST, to}});
    ++reorders_;
  }

  // Tensor t in layout `want`: its memory, or a converted copy made by a
  // reorder step (kept for later readers wanting the same layout).
  int input(uint32_t t, const md& want) {
    if (tensor(t).is_constant()) return constant(t, plain(tensor(t).dims), want);
    const int h = held_[t];
    if (desc_of(h) == want) return h;
    for (int c : converted_[t])
      if (desc_of(c) == want) return c;
    const int c = new_memory(want, new_buffer(want.get_size()));
    reorder(h, c);
    converted_[t].push_back(c);
    return c;
  }

  // A constant in layout `want`: the blob's bytes in place where they are
  // in that layout and the blob stays (it has prepacked weights), else
  // converted now into an owned buffer. `source` describes row-major blob
  // bytes (maybe with other dims, e.g. grouped weights).
  int constant(uint32_t t, const md& source, const md& want) {
    for (int c : converted_[t])
      if (desc_of(c) == want) return c;
    const TensorInfo& info = tensor(t);
    void* blob = const_cast<float*>(info.constant);  // read only: in place or a reorder's source
    if (info.packed_desc != nullptr) {
      // Used only where it is exactly the layout this primitive chose
      // here; the descriptor is never trusted to describe anything else.
      if (packed_matches(info, want)) return in_place(t, want, blob);
      throw std::runtime_error("tensor " + std::to_string(t) +
                               ": weights were packed in a layout this CPU's " + "primitive does not use (" +
                               info.packed_for + ", here " + packing_target(out_.num_threads) +
                               "); compile without onednn:prepack=on, or on this machine");
    } else if (view_.has_packed && source == want) {
      return in_place(t, want, blob);
    }
    AlignedBuffer data = AlignedBuffer::allocate(want.get_size());
    if (!data) throw dnnl::error(dnnl_out_of_memory, "cannot allocate a constant");
    if (source == want) {
      std::memcpy(data.data(), blob, want.get_size());
    } else {
      memory src(source, out_.engine, blob), dst(want, out_.engine, data.data());
      dnnl::reorder(src, dst).execute(out_.stream, src, dst);
      out_.stream.wait();
      out_.packed.push_back(PackedConstant{t, want, data.data()});
    }
    const int m = new_memory(want, new_buffer(want.get_size(), -1, data.data()));
    out_.owned.push_back(std::move(data));
    converted_[t].push_back(m);
    return m;
  }

  // Whether prepacked tensor t holds exactly layout `want`. The stored
  // descriptor's enum fields are read as plain integers: a damaged blob may
  // hold values no enumerator has.
  bool packed_matches(const TensorInfo& info, const md& want) const {
    dnnl_memory_desc_t stored;
    std::memcpy(&stored, info.packed_desc, sizeof(stored));
    int32_t ndims = 0, kind = 0;
    std::memcpy(&ndims, info.packed_desc + offsetof(dnnl_memory_desc_t, ndims), sizeof(ndims));
    std::memcpy(&kind, info.packed_desc + offsetof(dnnl_memory_desc_t, format_kind), sizeof(kind));
    return ndims == want.data.ndims && kind == static_cast<int32_t>(want.data.format_kind) &&
           dnnl_memory_desc_equal(&stored, &want.data) && want.get_size() == info.constant_bytes;
  }

  // The primitive `make` creates, for weights prepacked with another thread
  // count made again at that count where the layout then matches (oneDNN
  // picks some layouts, Winograd's, by the threads at creation; the
  // primitive then runs on that many threads).
  template <typename Make>
  auto matching_packed(const Make& make, uint32_t weights) {
    auto pd = make();
    const TensorInfo& info = tensor(weights);
    const int packed = static_cast<int>(view_.packed_threads);
    if (info.packed_desc == nullptr || packed_matches(info, pd.weights_desc()) || packed == 0 ||
        packed == out_.num_threads)
      return pd;
    omp_set_num_threads(packed);
    try {
      auto retry = make();
      omp_set_num_threads(out_.num_threads);
      if (packed_matches(info, retry.weights_desc())) {
        group_->metadata_suffix = ";threads=" + std::to_string(packed);
        group_->threads = packed;
        return retry;
      }
    } catch (...) {
      omp_set_num_threads(out_.num_threads);
      throw;
    }
    return pd;  // constant() names the mismatch
  }

  // The primitive of `pd`, made at the thread count its descriptor was
  // (a primitive sizes its work split when made).
  template <typename Primitive, typename PrimitiveDesc>
  Primitive made_for_group(const PrimitiveDesc& pd) {
    if (group_->threads == 0) return Primitive(pd);
    omp_set_num_threads(group_->threads);
    try {
      Primitive primitive(pd);
      omp_set_num_threads(out_.num_threads);
      return primitive;
    } catch (...) {
      omp_set_num_threads(out_.num_threads);
      throw;
    }
  }

  int in_place(uint32_t t, const md& want, void* blob) {
    out_.reads_blob = true;
    const int m = new_memory(want, new_buffer(want.get_size(), -1, blob));
    converted_[t].push_back(m);
    return m;
  }

  int held(uint32_t t) { return tensor(t).is_constant() ? input(t, plain(tensor(t).dims)) : held_[t]; }
  md held_desc(uint32_t t) { return desc_of(held(t)); }

  // The memory a node writes tensor t to, in layout `desc`: the delegate's
  // argument where it is row-major, else a new buffer.
  int place_output(uint32_t t, const md& desc) {
    const int64_t arg = output_arg(t);
    const int m = arg >= 0 && desc == plain(tensor(t).dims) ? new_memory(desc, new_buffer(0, arg))
                                                            : new_memory(desc, new_buffer(desc.get_size()));
    held_[t] = m;
    return m;
  }

  // The node's output, row-major into the log buffer, after the node.
  void log_output(uint32_t t) {
    const md row_major = plain(tensor(t).dims);
    reorder(held_[t], new_memory(row_major, new_buffer(row_major.get_size(), -1, out_.log_buffer.data())));
    --reorders_;  // not the node's own
    group_->logs_output = true;
    group_->output_shape = Shape(Span<const int64_t>(tensor(t).dims.data(), tensor(t).dims.size()));
  }

  // A delegate output held in another layout is reordered into its argument.
  void finish_output(uint32_t t) {
    const int64_t arg = output_arg(t);
    if (arg < 0 || buffer_of(held_[t]).arg >= 0) return;
    reorder(held_[t], new_memory(plain(tensor(t).dims), new_buffer(0, arg)));
  }

  dnnl::post_ops post_ops(const fb::Node& node) const {
    dnnl::post_ops post;
    if (node.post_ops() == nullptr) return post;
    for (const fb::PostOp* p : *node.post_ops()) {
      if (p->kind() == fb::PostOpKind::Sum)
        post.append_sum(1.0f);
      else
        post.append_eltwise(1.0f, to_dnnl(p->algorithm()), p->alpha(), p->beta());
    }
    return post;
  }

  const fb::PostOp* sum_of(const fb::Node& node) const {
    if (node.post_ops() != nullptr)
      for (const fb::PostOp* p : *node.post_ops())
        if (p->kind() == fb::PostOpKind::Sum) return p;
    return nullptr;
  }

  // The output of a node with a sum post-op starts as the residual: the
  // residual's own buffer when nothing reads it later, else a copy.
  int place_summed_output(uint32_t t, const md& desc, uint32_t residual) {
    const TensorInfo& r = tensor(residual);
    const bool dies_here = view_.last_reader[residual] == static_cast<int32_t>(node_) && !r.is_constant() &&
                           r.external_input < 0 && r.external_output < 0 && output_arg(t) < 0;
    const int buffer = plan_.memories[static_cast<size_t>(held_[residual])].buffer;
    if (dies_here && desc_of(held_[residual]) == desc && !shared_.count(buffer)) {
      held_[t] = new_memory(desc, plan_.memories[static_cast<size_t>(held_[residual])].buffer);
      return held_[t];
    }
    const int m = place_output(t, desc);
    reorder(held(residual), m);
    return m;
  }

  int place(const fb::Node& node, const md& desc) {
    const uint32_t t = node.outputs()->Get(0);
    const fb::PostOp* sum = sum_of(node);
    return sum != nullptr ? place_summed_output(t, desc, sum->operand()) : place_output(t, desc);
  }

  void describe(const dnnl::primitive_desc_base& pd) {
    group_->metadata = std::string("impl=") + pd.impl_info_str() + group_->metadata_suffix;
  }

  void build_node(const fb::Node& node) {
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

  bool winograd_candidate(const fb::Node& node, const std::vector<int64_t>& w) const {
    if (options_.winograd == WinogradMode::kOff || w.size() != 4 || w[2] != 3 || w[3] != 3 ||
        node.groups() != 1)
      return false;
    for (int64_t v : vec(node.strides()))
      if (v != 1) return false;
    for (int64_t v : vec(node.dilations()))
      if (v != 1) return false;
    // Few channels: the transforms cost more than the products save.
    return options_.winograd == WinogradMode::kOn || (w[0] >= 32 && w[1] >= 32);
  }

  void convolution(const fb::Node& node);
  void pooling(const fb::Node& node);
  void binary(const fb::Node& node);
  void eltwise(const fb::Node& node);
  void concat(const fb::Node& node);
  void inner_product(const fb::Node& node);
  void softmax(const fb::Node& node);
  void reshape(const fb::Node& node);
  void batch_norm(const fb::Node& node);

  const BlobView& view_;
  const CompileOptions& options_;
  CompiledPartition& out_;
  PartitionPlan& plan_;
  std::vector<int> held_;                    // tensor -> memory in its writer's layout
  std::vector<std::vector<int>> converted_;  // tensor -> memories in other layouts
  std::set<int> shared_;                     // buffers holding several tensors (reshapes)
  PlannedGroup* group_ = nullptr;
  uint32_t node_ = 0;
  int steps_ = 0;
  int reorders_ = 0;
};

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

memory::dims minus_one(const std::vector<int64_t>& v) {
  memory::dims d;
  for (int64_t x : v) d.push_back(x - 1);
  return d;
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
  const auto make = [&](dnnl::algorithm algorithm, const md& source, const char* prefer = nullptr) {
    dnnl::convolution_forward::desc d =
        has_bias
            ? dnnl::convolution_forward::desc(kInference, algorithm, source, any(grouped), bias,
                                              any(tensor(y).dims), to_dims(vec(node.strides())),
                                              minus_one(vec(node.dilations())),
                                              to_dims(vec(node.pads_begin())), to_dims(vec(node.pads_end())))
            : dnnl::convolution_forward::desc(kInference, algorithm, source, any(grouped),
                                              any(tensor(y).dims), to_dims(vec(node.strides())),
                                              minus_one(vec(node.dilations())),
                                              to_dims(vec(node.pads_begin())), to_dims(vec(node.pads_end())));
    dnnl::convolution_forward::primitive_desc pd(d, attr(post_ops(node)), out_.engine);
    if (prefer != nullptr) prefer_implementation(pd, prefer);
    return pd;
  };
  const auto choose = [&] {
    if (winograd_candidate(node, wd)) {
      try {
        return make(dnnl::algorithm::convolution_winograd, any(tensor(x).dims),
                    winograd_tile(tensor(y).dims));
      } catch (const dnnl::error&) {
        // Refused for this shape or CPU: direct below.
      }
    }
    try {
      return make(dnnl::algorithm::convolution_direct, src);
    } catch (const dnnl::error&) {
      return make(dnnl::algorithm::convolution_direct, any(tensor(x).dims));
    }
  };
  const dnnl::convolution_forward::primitive_desc pd = matching_packed(choose, w);
  if (std::string(pd.impl_info_str()).find("wino") != std::string::npos) ++out_.winograd_convolutions;
  std::vector<std::pair<int, int>> args = {
      {DNNL_ARG_SRC, input(x, pd.src_desc())},
      {DNNL_ARG_WEIGHTS, constant(w, plain(grouped), pd.weights_desc())}};
  if (has_bias) args.emplace_back(DNNL_ARG_BIAS, constant(in->Get(2), plain({wd[0]}), pd.bias_desc()));
  args.emplace_back(DNNL_ARG_DST, place(node, pd.dst_desc()));
  describe(pd);
  add_step(made_for_group<dnnl::convolution_forward>(pd), pd, std::move(args));
  finish_output(y);
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
  dnnl::pooling_v2_forward::primitive_desc pd;
  try {
    pd = make(held_desc(x));
  } catch (const dnnl::error&) {
    pd = make(plain(tensor(x).dims));
  }
  std::vector<std::pair<int, int>> args = {{DNNL_ARG_SRC, input(x, pd.src_desc())},
                                           {DNNL_ARG_DST, place_output(y, pd.dst_desc())}};
  describe(pd);
  add_step(dnnl::pooling_v2_forward(pd), pd, std::move(args));
  finish_output(y);
}

void Builder::binary(const fb::Node& node) {
  const uint32_t a = node.inputs()->Get(0), b = node.inputs()->Get(1), y = node.outputs()->Get(0);
  const bool same = tensor(a).dims == tensor(b).dims;
  const auto make = [&](const md& first, const md& second) {
    dnnl::binary::desc d(to_dnnl(node.algorithm()), first, second, any(tensor(y).dims));
    return dnnl::binary::primitive_desc(d, attr(post_ops(node)), out_.engine);
  };
  dnnl::binary::primitive_desc pd;
  try {
    const md first = held_desc(a);
    pd = make(first, same ? first : held_desc(b));
  } catch (const dnnl::error&) {
    pd = make(plain(tensor(a).dims), plain(tensor(b).dims));
  }
  std::vector<std::pair<int, int>> args = {{DNNL_ARG_SRC_0, input(a, pd.src_desc(0))},
                                           {DNNL_ARG_SRC_1, input(b, pd.src_desc(1))},
                                           {DNNL_ARG_DST, place_output(y, pd.dst_desc())}};
  describe(pd);
  add_step(dnnl::binary(pd), pd, std::move(args));
  finish_output(y);
}

void Builder::eltwise(const fb::Node& node) {
  const uint32_t x = node.inputs()->Get(0), y = node.outputs()->Get(0);
  dnnl::eltwise_forward::desc d(kInference, to_dnnl(node.algorithm()), held_desc(x), node.alpha(),
                                node.beta());
  dnnl::eltwise_forward::primitive_desc pd(d, attr(), out_.engine);
  std::vector<std::pair<int, int>> args = {{DNNL_ARG_SRC, input(x, pd.src_desc())},
                                           {DNNL_ARG_DST, place_output(y, pd.dst_desc())}};
  describe(pd);
  add_step(dnnl::eltwise_forward(pd), pd, std::move(args));
  finish_output(y);
}

void Builder::concat(const fb::Node& node) {
  const auto* in = node.inputs();
  const uint32_t y = node.outputs()->Get(0);
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
  std::vector<std::pair<int, int>> args;
  for (uint32_t i = 0; i < in->size(); ++i)
    args.emplace_back(DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i),
                      input(in->Get(i), pd.src_desc(static_cast<int>(i))));
  args.emplace_back(DNNL_ARG_DST, place_output(y, pd.dst_desc()));
  describe(pd);
  add_step(dnnl::concat(pd), pd, std::move(args));
  finish_output(y);
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
  std::vector<std::pair<int, int>> args = {{DNNL_ARG_SRC, input(x, pd.src_desc())},
                                           {DNNL_ARG_WEIGHTS, constant(w, plain(wd), pd.weights_desc())}};
  if (has_bias) args.emplace_back(DNNL_ARG_BIAS, constant(in->Get(2), plain({wd[0]}), pd.bias_desc()));
  args.emplace_back(DNNL_ARG_DST, place_output(y, pd.dst_desc()));
  describe(pd);
  add_step(made_for_group<dnnl::inner_product_forward>(pd), pd, std::move(args));
  finish_output(y);
}

void Builder::softmax(const fb::Node& node) {
  const uint32_t x = node.inputs()->Get(0), y = node.outputs()->Get(0);
  const auto run = [&](const md& src) {
    if (node.log()) {
      dnnl::logsoftmax_forward::primitive_desc pd(
          dnnl::logsoftmax_forward::desc(kInference, src, node.axis()), attr(), out_.engine);
      std::vector<std::pair<int, int>> args = {{DNNL_ARG_SRC, input(x, pd.src_desc())},
                                               {DNNL_ARG_DST, place_output(y, pd.dst_desc())}};
      describe(pd);
      add_step(dnnl::logsoftmax_forward(pd), pd, std::move(args));
    } else {
      dnnl::softmax_forward::primitive_desc pd(dnnl::softmax_forward::desc(kInference, src, node.axis()),
                                               attr(), out_.engine);
      std::vector<std::pair<int, int>> args = {{DNNL_ARG_SRC, input(x, pd.src_desc())},
                                               {DNNL_ARG_DST, place_output(y, pd.dst_desc())}};
      describe(pd);
      add_step(dnnl::softmax_forward(pd), pd, std::move(args));
    }
  };
  try {
    run(held_desc(x));
  } catch (const dnnl::error&) {
    run(plain(tensor(x).dims));
  }
  finish_output(y);
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
    held_[y] = new_memory(dst, plan_.memories[static_cast<size_t>(to)].buffer);
    return;
  }
  const int from = input(x, src);
  const int buffer = plan_.memories[static_cast<size_t>(from)].buffer;
  held_[y] = new_memory(dst, buffer);
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
  std::vector<std::pair<int, int>> args = {
      {DNNL_ARG_SRC, input(x, pd.src_desc())}, {DNNL_ARG_SCALE, held(in->Get(1))},
      {DNNL_ARG_SHIFT, held(in->Get(2))},      {DNNL_ARG_MEAN, held(in->Get(3))},
      {DNNL_ARG_VARIANCE, held(in->Get(4))},   {DNNL_ARG_DST, place_output(y, pd.dst_desc())}};
  describe(pd);
  add_step(dnnl::batch_normalization_forward(pd), pd, std::move(args));
  finish_output(y);
}

}  // namespace

Status build_partition(const BlobView& view, const CompileOptions& options, CompiledPartition& out,
                       PartitionPlan& plan) {
  return Builder(view, options, out, plan).build();
}

}  // namespace etc::onednn
