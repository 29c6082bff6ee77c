#include "runtime/backends/onednn/partition_builder.h"

#include <cstddef>
#include <cstring>
#include <stdexcept>

#include "runtime/backends/onednn/builder.h"
#include "runtime/backends/onednn/prepack.h"

namespace etc::onednn {

using dnnl::memory;
using tag = dnnl::memory::format_tag;

memory::dims to_dims(const std::vector<int64_t>& dims) { return memory::dims(dims.begin(), dims.end()); }

std::vector<int64_t> vec(const flatbuffers::Vector<int64_t>* v) {
  return v == nullptr ? std::vector<int64_t>{} : std::vector<int64_t>(v->begin(), v->end());
}

md plain(const std::vector<int64_t>& dims) {
  // Up to 6-D: a grouped 3-D convolution's weights [g, O/g, I/g, kd, kh, kw].
  static const tag kTags[] = {tag::a, tag::ab, tag::abc, tag::abcd, tag::abcde, tag::abcdef};
  return md(to_dims(dims), memory::data_type::f32, kTags[dims.size() - 1]);
}

md any(const std::vector<int64_t>& dims) { return md(to_dims(dims), memory::data_type::f32, tag::any); }

bool is_plain(const md& desc) {
  const memory::dims dims = desc.dims();
  return desc == plain(std::vector<int64_t>(dims.begin(), dims.end()));
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

Builder::Builder(const BlobView& view, const CompileOptions& options, CompiledPartition& out,
                 PartitionPlan& plan)
    : view_(view),
      options_(options),
      out_(out),
      plan_(plan),
      held_(view.tensors.size(), -1),
      converted_(view.tensors.size()),
      slice_of_(view.tensors.size(), -1) {}

Status Builder::build() {
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
  plan_concat_slices();
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

int Builder::new_buffer(size_t bytes, int64_t arg, void* fixed) {
  plan_.buffers.push_back(BufferPlan{bytes, INT32_MAX, -1, 0, arg, fixed});
  return static_cast<int>(plan_.buffers.size() - 1);
}

int Builder::new_memory(const md& desc, int buffer, size_t offset) {
  plan_.memories.push_back(MemoryPlan{desc, buffer, offset});
  return static_cast<int>(plan_.memories.size() - 1);
}

int64_t Builder::output_arg(uint32_t t) const {
  const int32_t j = tensor(t).external_output;
  return j < 0 ? -1 : static_cast<int64_t>(view_.input_tensors.size()) + j;
}

void Builder::add_step(std::function<dnnl::primitive()> make, const dnnl::primitive_desc_base& pd,
                       StepArgs args, int threads) {
  const int index = steps_++;
  for (const auto& [arg, memory] : args) {
    BufferPlan& b = buffer_of(memory);
    b.first = std::min(b.first, index);
    b.last = std::max(b.last, index);
  }
  const md scratch = pd.scratchpad_desc();
  int scratch_buffer = -1;
  if (scratch.get_size() > 0) {
    scratch_buffer = new_buffer(scratch.get_size());
    plan_.buffers[static_cast<size_t>(scratch_buffer)].first = index;
    plan_.buffers[static_cast<size_t>(scratch_buffer)].last = index;
  }
  group_->steps.push_back(PlannedStep{std::move(make), threads != 0 ? threads : out_.num_threads, node_,
                                      dnnl::primitive(), std::move(args), scratch, scratch_buffer});
}

dnnl::primitive_attr Builder::attr(const dnnl::post_ops& post) {
  dnnl::primitive_attr a;
  a.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  a.set_post_ops(post);
  return a;
}

void Builder::reorder(int from, int to) {
  dnnl::reorder::primitive_desc pd(out_.engine, desc_of(from), out_.engine, desc_of(to), attr());
  add_step([pd]() -> dnnl::primitive { return dnnl::reorder(pd); }, pd,
           {{DNNL_ARG_SRC, from}, {DNNL_ARG_DST, to}});
  ++reorders_;
}

int Builder::input(uint32_t t, const md& want) {
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

int Builder::constant(uint32_t t, const md& source, const md& want) {
  for (int c : converted_[t])
    if (desc_of(c) == want) return c;
  const TensorInfo& info = tensor(t);
  void* blob = const_cast<float*>(info.constant);  // read only: in place or a reorder's source
  if (info.packed_desc != nullptr) {
    // Used only where it is exactly the layout this primitive chose here;
    // the descriptor is never trusted to describe anything else.
    if (packed_matches(info, want)) return in_place(t, want, blob);
    throw std::runtime_error("tensor " + std::to_string(t) + ": weights were packed in a layout this CPU's " +
                             "primitive does not use (" + info.packed_for + ", here " +
                             packing_target(out_.num_threads) +
                             "); compile without onednn:prepack=on, or on this machine");
  }
  if (view_.has_packed && source == want) return in_place(t, want, blob);
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

// The stored descriptor's enum fields are read as plain integers: a
// damaged blob may hold values no enumerator has.
bool Builder::packed_matches(const TensorInfo& info, const md& want) const {
  dnnl_memory_desc_t stored;
  std::memcpy(&stored, info.packed_desc, sizeof(stored));
  int32_t ndims = 0, kind = 0;
  std::memcpy(&ndims, info.packed_desc + offsetof(dnnl_memory_desc_t, ndims), sizeof(ndims));
  std::memcpy(&kind, info.packed_desc + offsetof(dnnl_memory_desc_t, format_kind), sizeof(kind));
  return ndims == want.data.ndims && kind == static_cast<int32_t>(want.data.format_kind) &&
         dnnl_memory_desc_equal(&stored, &want.data) && want.get_size() == info.constant_bytes;
}

int Builder::in_place(uint32_t t, const md& want, void* blob) {
  out_.reads_blob = true;
  const int m = new_memory(want, new_buffer(want.get_size(), -1, blob));
  converted_[t].push_back(m);
  return m;
}

int Builder::held(uint32_t t) { return tensor(t).is_constant() ? input(t, plain(tensor(t).dims)) : held_[t]; }

bool slice_tag(const md& desc, tag& out) {
  const memory::dims dims = desc.dims();
  static const tag k3[] = {tag::abc, tag::aBc16b, tag::aBc8b};
  static const tag k4[] = {tag::abcd, tag::aBcd16b, tag::aBcd8b};
  if (dims.size() != 3 && dims.size() != 4) return false;
  for (tag t : dims.size() == 3 ? k3 : k4)
    if (desc == md(dims, memory::data_type::f32, t)) {
      out = t;
      return true;
    }
  return false;
}

namespace {

int64_t channel_block(tag t) {
  return t == tag::aBc16b || t == tag::aBcd16b ? 16 : t == tag::aBc8b || t == tag::aBcd8b ? 8 : 1;
}

// Whether every slice of channel counts `channels` starts on a block of
// `block` and all but the last fill whole blocks.
bool slices_fit(const std::vector<int64_t>& channels, int64_t block) {
  int64_t at = 0;
  for (size_t i = 0; i < channels.size(); ++i) {
    if (at % block != 0 || (i + 1 < channels.size() && channels[i] % block != 0)) return false;
    at += channels[i];
  }
  return true;
}

}  // namespace

void Builder::plan_concat_slices() {
  // The channel block of this CPU's fastest blocked layouts.
  const bool avx512 = dnnl::get_effective_cpu_isa() >= dnnl::cpu_isa::avx512_core;
  const int64_t block = avx512 ? 16 : 8;
  const tag blocked4 = avx512 ? tag::aBcd16b : tag::aBcd8b, blocked3 = avx512 ? tag::aBc16b : tag::aBc8b;
  const auto* nodes = view_.graph->nodes();
  for (uint32_t n = 0; n < nodes->size(); ++n) {
    const fb::Node& node = *nodes->Get(n);
    if (node.kind() != fb::NodeKind::Concat || node.axis() != 1) continue;
    const uint32_t y = node.outputs()->Get(0);
    const std::vector<int64_t>& yd = tensor(y).dims;
    if ((yd.size() != 3 && yd.size() != 4) || yd[0] != 1) continue;
    // Where every slice fits the CPU's blocks, producers are asked for the
    // blocked layout; else they choose, and the first one's layout is kept
    // if every slice fits it (row-major always does).
    std::vector<int64_t> channels;
    for (uint32_t t : *node.inputs()) channels.push_back(tensor(t).dims[1]);
    const bool aligned = slices_fit(channels, block);
    const int concat = static_cast<int>(concats_.size());
    concats_.push_back(ConcatPlan{y, aligned ? (yd.size() == 4 ? blocked4 : blocked3) : tag::any, channels});
    int64_t channel = 0;
    // A slice for each input written by a node of this partition, the
    // first time it appears here, in no other concatenation; the rest are
    // copied into theirs.
    for (uint32_t i = 0; i < node.inputs()->size(); ++i) {
      const uint32_t t = node.inputs()->Get(i);
      const TensorInfo& info = tensor(t);
      if (!info.is_constant() && info.external_input < 0 && info.external_output < 0 && slice_of_[t] < 0) {
        slice_of_[t] = static_cast<int>(slices_.size());
        slices_.push_back(ConcatSlice{concat, channel, false});
      }
      channel += info.dims[1];
    }
  }
}

md Builder::output_desc(uint32_t t) const {
  const int s = slice_of_[t];
  if (s < 0) return any(tensor(t).dims);
  const ConcatPlan& concat = concats_[static_cast<size_t>(slices_[static_cast<size_t>(s)].concat)];
  tag layout = concat.preferred;
  if (held_[concat.output] >= 0) slice_tag(desc_of(held_[concat.output]), layout);
  return layout == tag::any ? any(tensor(t).dims)
                            : md(to_dims(tensor(t).dims), memory::data_type::f32, layout);
}

int Builder::place_in_concat(uint32_t t, const md& desc) {
  const int s = slice_of_[t];
  if (s < 0) return -1;
  ConcatSlice& slice = slices_[static_cast<size_t>(s)];
  const uint32_t y = concats_[static_cast<size_t>(slice.concat)].output;
  tag layout{};
  if (!slice_tag(desc, layout) ||
      !slices_fit(concats_[static_cast<size_t>(slice.concat)].channels, channel_block(layout)))
    return -1;
  int& whole = held_[y];
  if (whole < 0) {
    const md full(to_dims(tensor(y).dims), memory::data_type::f32, layout);
    whole = new_memory(full, new_buffer(full.get_size()));
    shared_.insert(buffer_index(whole));
  } else if (desc != output_desc(t)) {
    return -1;
  }
  slice.written = true;
  return new_memory(desc, buffer_index(whole), slice_offset(t, slice.channel));
}

bool Builder::written_in_place(uint32_t t, uint32_t y, int64_t channel) const {
  if (slice_of_[t] < 0) return false;
  const ConcatSlice& slice = slices_[static_cast<size_t>(slice_of_[t])];
  return slice.written && concats_[static_cast<size_t>(slice.concat)].output == y && slice.channel == channel;
}

size_t Builder::slice_offset(uint32_t t, int64_t channel) const {
  // One image: the slice starts `channel` planes in, whatever the block.
  int64_t plane = 1;
  for (size_t d = 2; d < tensor(t).dims.size(); ++d) plane *= tensor(t).dims[d];
  return static_cast<size_t>(channel * plane) * sizeof(float);
}

int Builder::place_output(uint32_t t, const md& desc) {
  if (const int m = place_in_concat(t, desc); m >= 0) {
    held_[t] = m;
    return m;
  }
  const int64_t arg = output_arg(t);
  const int m = arg >= 0 && desc == plain(tensor(t).dims) ? new_memory(desc, new_buffer(0, arg))
                                                          : new_memory(desc, new_buffer(desc.get_size()));
  held_[t] = m;
  return m;
}

int Builder::place(const fb::Node& node, const md& desc) {
  const uint32_t t = node.outputs()->Get(0);
  const fb::PostOp* sum = nullptr;
  if (node.post_ops() != nullptr)
    for (const fb::PostOp* p : *node.post_ops())
      if (p->kind() == fb::PostOpKind::Sum && sum == nullptr) sum = p;
  if (sum == nullptr) return place_output(t, desc);
  const uint32_t residual = sum->operand();
  const TensorInfo& r = tensor(residual);
  const int buffer = buffer_index(held_[residual]);
  const bool dies_here = view_.last_reader[residual] == static_cast<int32_t>(node_) && !r.is_constant() &&
                         r.external_input < 0 && r.external_output < 0 && output_arg(t) < 0;
  if (dies_here && desc_of(held_[residual]) == desc && !shared_.count(buffer)) {
    held_[t] = new_memory(desc, buffer);
    return held_[t];
  }
  const int m = place_output(t, desc);
  reorder(held(residual), m);
  return m;
}

void Builder::log_output(uint32_t t) {
  const md row_major = plain(tensor(t).dims);
  reorder(held_[t], new_memory(row_major, new_buffer(row_major.get_size(), -1, out_.log_buffer.data())));
  --reorders_;  // not the node's own
  group_->logs_output = true;
  group_->output_shape = Shape(Span<const int64_t>(tensor(t).dims.data(), tensor(t).dims.size()));
}

void Builder::finish_output(uint32_t t) {
  const int64_t arg = output_arg(t);
  if (arg < 0 || buffer_of(held_[t]).arg >= 0) return;
  reorder(held_[t], new_memory(plain(tensor(t).dims), new_buffer(0, arg)));
}

dnnl::post_ops Builder::post_ops(const fb::Node& node) const {
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

void Builder::describe(const dnnl::primitive_desc_base& pd) {
  group_->metadata = std::string("impl=") + pd.impl_info_str() + group_->metadata_suffix;
}

Status build_partition(const BlobView& view, const CompileOptions& options, CompiledPartition& out,
                       PartitionPlan& plan) {
  return Builder(view, options, out, plan).build();
}

}  // namespace etc::onednn
