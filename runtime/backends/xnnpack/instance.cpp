#include "runtime/backends/xnnpack/instance.h"

#include <xnnpack.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "runtime/backends/xnnpack/native_matmul.h"
#include "runtime/backends/xnnpack/node_checks.h"
#include "runtime/backends/xnnpack/profiling_metadata.h"
#include "runtime/backends/xnnpack/subgraph_builder.h"
#include "runtime/core/large_block.h"

namespace etc::xnnpack {

Failure out_of_memory(const std::string& what) {
  return fail(Error::DelegateMemoryAllocationFailed, "xnnpack: cannot allocate ", what);
}

namespace {

// Keeps a buffer of activations or scratch with the instance, counted in
// its activation_bytes.
void keep_activations(XnnpackHandle& handle, AlignedBuffer buffer) {
  handle.activation_bytes += buffer.size();
  handle.owned.push_back(std::move(buffer));
}

// XNNPACK packs convolution, fully-connected and prelu weights when the
// runtime is created, but other nodes (e.g. add with a constant operand)
// read their static inputs in place at every run. Those constants are copied
// here so the processed bytes can be freed after init. A filter packed ahead
// of time for the native kernel (WeightPacking NativePanels) stays in the
// blob where that kernel runs its node, and is unpacked here for XNNPACK
// where it does not (a CPU without AVX-512F or AVX2, native_convolution=off, or
// another size of a resizable delegate); handle.blob_reads lists the
// first.
Result<std::vector<const void*>> place_constants(const BlobView& view, const StagePlan& plan,
                                                 XnnpackHandle& handle) {
  const auto* nodes = view.graph->nodes();
  const size_t num_nodes = nodes == nullptr ? 0 : nodes->size();
  std::vector<bool> native(num_nodes, false);
  for (const Stage& stage : plan.stages)
    for (size_t n = stage.first_node; n < stage.end_node; ++n) native[n] = stage.native;
  std::vector<bool> read_at_run_time(view.tensors.size(), false), read_by_xnnpack(view.tensors.size(), false);
  for (size_t n = 0; n < num_nodes; ++n) {
    const fb::Node& node = *nodes->Get(static_cast<flatbuffers::uoffset_t>(n));
    for (size_t i = 0; i < node.inputs()->size(); ++i) {
      const uint32_t t = node.inputs()->Get(static_cast<flatbuffers::uoffset_t>(i));
      if (is_native_node(node.type()) || !input_is_packed(node, i)) read_at_run_time[t] = true;
      if (!native[n]) read_by_xnnpack[t] = true;
    }
  }
  std::vector<const void*> data(view.tensors.size(), nullptr);
  for (size_t t = 0; t < view.tensors.size(); ++t) {
    const TensorInfo& info = view.tensors[t];
    if (!info.is_constant()) continue;
    data[t] = info.constant;
    if (info.packing == fb::WeightPacking::NativePanels) {
      if (!read_by_xnnpack[t]) {
        const size_t bytes = native_panels_floats(info.dims[0], info.numel / info.dims[0]) * sizeof(float);
        handle.blob_reads.emplace_back(info.constant, info.constant + bytes);
        continue;
      }
      AlignedBuffer filter = allocate_floats(info.numel);
      if (!filter) return out_of_memory("an unpacked filter for tensor " + std::to_string(t));
      unpack_native_panels(reinterpret_cast<const float*>(info.constant), info.dims[0],
                           info.numel / info.dims[0], filter.as<float>());
      data[t] = filter.as<float>();
      handle.owned.push_back(std::move(filter));
      continue;
    }
    if (!read_at_run_time[t]) continue;
    AlignedBuffer copy = allocate_floats(info.numel);
    if (!copy) return out_of_memory("constant tensor " + std::to_string(t));
    std::memcpy(copy.data(), info.constant, info.numel * sizeof(float));
    data[t] = copy.as<float>();
    handle.owned.push_back(std::move(copy));
  }
  return data;
}

Status prepare_arguments(const BlobView& view, const StagePlan& plan, XnnpackHandle& handle) {
  const size_t num_inputs = view.input_tensors.size();
  const size_t num_args = num_inputs + view.output_tensors.size();
  handle.args.resize(num_args);
  for (size_t a = 0; a < num_args; ++a) {
    Argument& arg = handle.args[a];
    arg.is_input = a < num_inputs;
    arg.index = arg.is_input ? a : a - num_inputs;
    arg.tensor_id = arg.is_input ? view.input_tensors[a] : view.output_tensors[a - num_inputs];
    arg.tensor = view.tensors[arg.tensor_id];
    if (arg.tensor.layout == fb::BoundaryLayout::Same) continue;
    // XNNPACK dims are [N, H, W, C]; with one channel or one pixel NCHW and
    // NHWC hold the same bytes, so the argument is bound directly.
    arg.n = arg.tensor.dims[0];
    arg.hw = arg.tensor.dims[1] * arg.tensor.dims[2];
    arg.c = arg.tensor.dims[3];
    if (arg.c == 1 || arg.hw == 1 || plan.nchw_output[arg.tensor_id] || plan.nchw_input[arg.tensor_id])
      continue;
    arg.layout = arg.tensor.layout;
    AlignedBuffer staging = allocate_floats(arg.tensor.numel);
    if (!staging) return out_of_memory("a staging buffer for argument " + std::to_string(a));
    arg.staging = staging.as<float>();
    handle.data[arg.tensor_id] = arg.staging;
    keep_activations(handle, std::move(staging));
  }
  return Status::Ok();
}

// The arena of the shared intermediates, and constants read by native nodes.
Status place_shared_tensors(const StagePlan& plan, const std::vector<const void*>& constant_data,
                            XnnpackHandle& handle) {
  float* arena = nullptr;
  if (plan.arena_elements > 0) {
    AlignedBuffer buffer = allocate_floats(plan.arena_elements);
    if (!buffer)
      return out_of_memory("an arena of " + std::to_string(plan.arena_elements) + " floats between stages");
    arena = buffer.as<float>();
    keep_activations(handle, std::move(buffer));
  }
  handle.data.assign(plan.shared.size(), nullptr);
  for (size_t t = 0; t < plan.shared.size(); ++t) {
    if (plan.offset_of[t] != kNoOffset) handle.data[t] = arena + plan.offset_of[t];
    if (constant_data[t] != nullptr)
      handle.data[t] = static_cast<float*>(const_cast<void*>(constant_data[t]));
  }
  return Status::Ok();
}

// What developer tools see of a stage: its debug id (the one all its nodes
// share) and its profiling metadata.
// `folded_by[n]`: the nodes folded into node n (StagePlan::folded_into, inverted).
void describe_stage(const BlobView& view, const StagePlan& plan,
                    const std::vector<std::vector<size_t>>& folded_by, const Stage& stage,
                    StageRunsOn runs_on, StageRun& run) {
  const auto* nodes = view.graph->nodes();
  const auto node_at = [&](size_t n) -> const fb::Node& {
    return *nodes->Get(static_cast<flatbuffers::uoffset_t>(n));
  };
  StageMetadata meta;
  meta.runs_on = runs_on;
  meta.node_type = static_cast<uint16_t>(node_at(stage.first_node).type());
  meta.num_nodes = 0;
  bool shared_id = true;
  uint32_t id = kNoDebugId;
  for (size_t n = stage.first_node; n < stage.end_node; ++n) {
    if (plan.elided[n]) continue;
    ++meta.num_nodes;
    if (meta.num_nodes == 1) id = node_at(n).debug_id();
    shared_id = shared_id && node_at(n).debug_id() == id;
  }
  if (shared_id && id != kNoDebugId) run.debug_id = id;
  for (size_t into = stage.first_node; into < stage.end_node; ++into)
    for (size_t n : folded_by[into]) {
      const uint32_t folded = node_at(n).debug_id();
      const auto folded_id = static_cast<int32_t>(folded);
      if (folded != kNoDebugId && folded != id &&
          std::find(meta.folded_ids.begin(), meta.folded_ids.end(), folded_id) == meta.folded_ids.end())
        meta.folded_ids.push_back(folded_id);
    }
  run.metadata = encode_stage_metadata(meta);
}

// With outputs logged, every stage is one node: its outputs, and a buffer
// for the largest rank-4 one (turned to NCHW before it is logged).
Status prepare_output_logging(const BlobView& view, const StagePlan& plan, XnnpackHandle& handle) {
  size_t largest = 0;
  for (size_t s = 0; s < plan.stages.size(); ++s) {
    StageRun& run = handle.runs[s];
    if (run.debug_id == kUnsetDelegateDebugIntId) continue;
    const fb::Node& node =
        *view.graph->nodes()->Get(static_cast<flatbuffers::uoffset_t>(plan.stages[s].first_node));
    for (uint32_t t : *node.outputs()) {
      const TensorInfo& info = view.tensors[t];
      LoggedOutput out{t, info.rank, {}, info.nhwc};
      std::copy(info.dims, info.dims + info.rank, out.dims);
      run.outputs.push_back(out);
      if (info.nhwc) largest = std::max(largest, info.numel);
    }
  }
  AlignedBuffer buffer = allocate_floats(std::max<size_t>(largest, 1));
  if (!buffer) return out_of_memory("a buffer for logged outputs");
  handle.log_buffer = buffer.as<float>();
  keep_activations(handle, std::move(buffer));
  return Status::Ok();
}

// A native stage's node, compiled, with what the plan folded into it.
Result<NativeOp> create_native_stage(const BlobView& view, const StagePlan& plan, size_t n,
                                     const NativeConvOptions& conv_options) {
  const fb::Node& node = *view.graph->nodes()->Get(static_cast<flatbuffers::uoffset_t>(n));
  if (plan.swish_input[n] >= 0)
    return swish_op(view, static_cast<uint32_t>(plan.swish_input[n]), node.outputs()->Get(0));
  if (plan.expands_into[n] >= 0) {
    const auto d = static_cast<size_t>(plan.expands_into[n]);
    const fb::Node& dw = *view.graph->nodes()->Get(static_cast<flatbuffers::uoffset_t>(d));
    ETC_ASSIGN_OR_RETURN(NativeConvPtr expand, compile_native_conv(view, node, conv_options));
    ETC_ASSIGN_OR_RETURN(NativeDepthwisePtr depthwise, compile_native_depthwise(view, dw));
    if (!is_pointwise(*expand))
      return fail(Error::Internal, "xnnpack: node ", std::to_string(n), " is not a pointwise convolution");
    apply_conv_output(plan.writes_into[n], epilogue(*expand));
    apply_conv_output(plan.writes_into[d], epilogue(*depthwise));
    ETC_ASSIGN_OR_RETURN(
        ExpandDepthwiseOp op,
        compile_expand_depthwise(std::move(expand), std::move(depthwise), conv_options.threads));
    return NativeOp(std::move(op));
  }
  const int64_t scale = plan.input_scale[n];
  NativeConvOptions options = conv_options;
  if (scale >= 0) options.winograd = WinogradMode::kOff;  // scales direct weights only
  ETC_ASSIGN_OR_RETURN(NativeOp op, compile_native_op(view, node, options));
  if (auto* conv = std::get_if<ConvolutionOp>(&op); conv != nullptr && scale >= 0) {
    const fb::Node& gate = *view.graph->nodes()->Get(static_cast<flatbuffers::uoffset_t>(scale));
    ETC_TRY(scale_input(*conv->conv, gate.inputs()->Get(0), gate.inputs()->Get(1)));
  }
  if (plan.nchw_input[node.inputs()->Get(0)]) {
    auto* conv = std::get_if<ConvolutionOp>(&op);
    if (conv == nullptr)
      return fail(Error::Internal, "xnnpack: node ", std::to_string(n), " cannot read its input as NCHW");
    ETC_TRY(read_input_as_nchw(*conv->conv));
  }
  const ConvOutput& out = plan.writes_into[n];
  if (auto* conv = std::get_if<ConvolutionOp>(&op)) apply_conv_output(out, epilogue(*conv->conv));
  if (auto* conv = std::get_if<DepthwiseOp>(&op)) apply_conv_output(out, epilogue(*conv->conv));
  if (auto* conv = std::get_if<GroupedOp>(&op)) apply_conv_output(out, epilogue(*conv->conv));
  if (auto* resize = std::get_if<ResizeNearestOp>(&op); resize != nullptr && out.active) {
    resize->output = out.tensor;
    resize->addend = out.residual;
    resize->lo = out.residual_lo;
    resize->hi = out.residual_hi;
  }
  if (auto* concatenate = std::get_if<ConcatenateOp>(&op)) concatenate->in_place = plan.in_place[n];
  return op;
}

// An XNNPACK stage's runtime, on the shared pool unless the stage is serial.
Result<XnnpackStage> create_xnnpack_stage(const BlobView& view, const std::vector<const void*>& constant_data,
                                          const StagePlan& plan, size_t s, const XnnpackHandle& handle) {
  XnnpackStage stage;
  ETC_ASSIGN_OR_RETURN(SubgraphPtr subgraph, build_subgraph(view, constant_data, plan, s, stage.externals));
  xnn_runtime_t runtime = nullptr;
  pthreadpool_t pool = plan.stages[s].serial ? nullptr : handle.pool.get();
  if (xnn_status st = xnn_create_runtime_v2(subgraph.get(), pool, 0, &runtime); st != xnn_status_success)
    return fail(Error::DelegateInvalidCompatibility,
                "xnnpack: XNNPACK cannot create a runtime for this blob (", xnn_status_name(st), ")");
  stage.runtime.reset(runtime);
  stage.bound.resize(stage.externals.size());
  for (size_t k = 0; k < stage.externals.size(); ++k)
    stage.bound[k] = xnn_external_value{static_cast<uint32_t>(k), nullptr};
  return stage;
}

// Every stage created on the pool, a stage per task: packing and
// Winograd's weight transforms are most of a native stage's init
// (googlenet's, resnet's), XNNPACK packing its weights most of its own
// stage's (lraspp's depthwise and squeeze-excite convolutions), and
// stages share neither. results[s] is stage s's.
struct StageCompile {
  const BlobView* view;
  const StagePlan* plan;
  const std::vector<const void*>* constant_data;
  const XnnpackHandle* handle;
  WinogradMode winograd;
  bool native_kernels;
  size_t pool_threads;
  std::vector<std::optional<Result<StageWork>>> results;
  // Tasks finished, each counted with release order after writing its
  // result and read with acquire order once the pool returns: a check that
  // every stage was created, which does not rest on the pool's own
  // completion.
  std::atomic<size_t> done{0};
};

Result<StageWork> compile_stage(const StageCompile& c, size_t s) {
  const Stage& stage = c.plan->stages[s];
  if (!stage.native) {
    // What XNNPACK packs for the stage goes to the instance's pool, from
    // whichever thread creates it.
    const PackingPool::Scope scope(*c.handle->packing);
    ETC_ASSIGN_OR_RETURN(XnnpackStage created,
                         create_xnnpack_stage(*c.view, *c.constant_data, *c.plan, s, *c.handle));
    return StageWork(std::move(created));
  }
  const NativeConvOptions options{c.winograd, stage.serial ? size_t{1} : c.pool_threads, c.native_kernels};
  ETC_ASSIGN_OR_RETURN(NativeOp op, create_native_stage(*c.view, *c.plan, stage.first_node, options));
  return StageWork(std::move(op));
}

void compile_stage_task(void* context, size_t s) {
  auto& c = *static_cast<StageCompile*>(context);
  // Nothing may leave a pool task (it would stop the stages after it): an
  // allocation that throws is reported, as is any other exception.
  try {
    c.results[s].emplace(compile_stage(c, s));
  } catch (const std::bad_alloc&) {
    c.results[s].emplace(fail(Error::DelegateMemoryAllocationFailed, "xnnpack: out of memory compiling node ",
                              std::to_string(c.plan->stages[s].first_node)));
  } catch (const std::exception& e) {
    c.results[s].emplace(fail(Error::Internal, "xnnpack: compiling node ",
                              std::to_string(c.plan->stages[s].first_node), " failed: ", e.what()));
  }
  c.done.fetch_add(1, std::memory_order_release);
}

Status create_stages(const BlobView& view, const std::vector<const void*>& constant_data,
                     const StagePlan& plan, WinogradMode winograd, bool native_kernels,
                     XnnpackHandle& handle) {
  std::vector<std::vector<size_t>> folded_by(plan.folded_into.size());
  for (size_t n = 0; n < plan.folded_into.size(); ++n)
    if (plan.folded_into[n] >= 0) folded_by[static_cast<size_t>(plan.folded_into[n])].push_back(n);
  StageCompile compile{.view = &view,
                       .plan = &plan,
                       .constant_data = &constant_data,
                       .handle = &handle,
                       .winograd = winograd,
                       .native_kernels = native_kernels,
                       .pool_threads = std::max<size_t>(pthreadpool_get_threads_count(handle.pool.get()), 1),
                       .results = std::vector<std::optional<Result<StageWork>>>(plan.stages.size())};
  pthreadpool_parallelize_1d(handle.pool.get(), compile_stage_task, &compile, plan.stages.size(), 0);
  if (compile.done.load(std::memory_order_acquire) != plan.stages.size())
    return fail(Error::Internal, "xnnpack: the thread pool left stages uncreated");
  handle.runs.resize(plan.stages.size());
  for (size_t s = 0; s < plan.stages.size(); ++s) {
    StageRun& run = handle.runs[s];
    run.serial = plan.stages[s].serial;
    // The first failure in stage order is the one reported.
    ETC_ASSIGN_OR_RETURN(run.work, std::move(*compile.results[s]));
    StageRunsOn runs_on = plan.stages[s].native ? StageRunsOn::kNative : StageRunsOn::kXnnpack;
    if (const auto* op = std::get_if<NativeOp>(&run.work))
      if (const auto* conv = std::get_if<ConvolutionOp>(op); conv != nullptr) {
        if (const size_t tile = winograd_tile_of(*conv->conv); tile != 0)
          runs_on = tile == 2 ? StageRunsOn::kWinograd2x2 : StageRunsOn::kWinograd;
        // Weights it reads in place: the blob keeps those pages.
        if (const std::span<const float> in_place = weights_read_in_place(*conv->conv); !in_place.empty()) {
          const auto* bytes = reinterpret_cast<const uint8_t*>(in_place.data());
          handle.blob_reads.emplace_back(bytes, bytes + in_place.size_bytes());
        }
      }
    describe_stage(view, plan, folded_by, plan.stages[s], runs_on, run);
  }
  return Status::Ok();
}

// Memory the native convolutions write as they run and do not keep between
// runs: the weights scaled by a folded gate, and Winograd's transformed
// input and products. The stages run one at a time, so each kind is one
// buffer for the delegate, as large as its largest user needs, not one
// buffer each (resnet50's eleven Winograd layers kept ~13 MB of scratch,
// ~1.8 MB is enough).
template <typename Op, typename Floats, typename Share>
Status share_buffer(XnnpackHandle& handle, Floats floats_of, Share share, const char* what) {
  std::vector<Op*> users;
  size_t floats = 0;
  for (StageRun& run : handle.runs)
    if (auto* native = std::get_if<NativeOp>(&run.work))
      if (auto* op = std::get_if<Op>(native); op != nullptr && floats_of(*op) > 0) {
        users.push_back(op);
        floats = std::max(floats, floats_of(*op));
      }
  if (users.empty()) return Status::Ok();
  AlignedBuffer buffer = zeroed_floats(floats);
  if (!buffer) return out_of_memory(what);
  for (Op* op : users) share(*op, buffer.as<float>());
  keep_activations(handle, std::move(buffer));
  return Status::Ok();
}

// Bytes of scratch the native stages keep for themselves: the padded
// input bands of convolutions with few input channels, and the row rings
// of expand -> depthwise chains.
size_t native_scratch_bytes(const XnnpackHandle& handle) {
  size_t bytes = 0;
  for (const StageRun& run : handle.runs)
    if (const auto* native = std::get_if<NativeOp>(&run.work)) {
      if (const auto* conv = std::get_if<ConvolutionOp>(native)) bytes += padded_band_bytes(*conv->conv);
      if (const auto* chain = std::get_if<ExpandDepthwiseOp>(native))
        for (const AlignedBuffer& ring : chain->rings) bytes += ring.size();
    }
  return bytes;
}

Status share_run_buffers(XnnpackHandle& handle) {
  ETC_TRY(share_buffer<ConvolutionOp>(
      handle, [](const ConvolutionOp& c) { return scaled_weights_floats(*c.conv); },
      [](ConvolutionOp& c, float* m) { share_scaled_weights(*c.conv, m); }, "scaled convolution weights"));
  ETC_TRY(share_buffer<ConvolutionOp>(
      handle, [](const ConvolutionOp& c) { return winograd_scratch_floats(*c.conv); },
      [](ConvolutionOp& c, float* m) { share_winograd_scratch(*c.conv, m); }, "Winograd scratch"));
  return share_buffer<BatchMatMulOp>(
      handle, [](const BatchMatMulOp& op) { return op.on_kernel ? matmul_scratch_floats(op) : 0; },
      [](BatchMatMulOp& op, float* m) { op.packed = m; }, "packed matrix products");
}

}  // namespace

Result<std::unique_ptr<XnnpackHandle>> create_instance(const BlobView& view, const InstanceOptions& options) {
  auto handle = std::make_unique<XnnpackHandle>();
  const StagePlan plan = plan_stages(view, options.convolutions, options.detail);
  ETC_ASSIGN_OR_RETURN(std::vector<const void*> constant_data, place_constants(view, plan, *handle));
  ETC_TRY(place_shared_tensors(plan, constant_data, *handle));
  ETC_TRY(prepare_arguments(view, plan, *handle));
  ETC_ASSIGN_OR_RETURN(handle->pool, SharedThreadpool::acquire(options.num_threads));
  // What XNNPACK packs while its runtimes are created goes to the pool.
  std::vector<bool> not_xnnpack(plan.elided);
  for (const Stage& stage : plan.stages)
    if (stage.native)
      for (size_t n = stage.first_node; n < stage.end_node; ++n) not_xnnpack[n] = true;
  handle->packing = std::make_unique<PackingPool>(packing_pool_bytes(view, not_xnnpack));
  ETC_TRY(create_stages(view, constant_data, plan, options.winograd,
                        options.convolutions != NativeConvolutions::kOff, *handle));
  ETC_TRY(share_run_buffers(*handle));
  handle->activation_bytes += native_scratch_bytes(*handle);
  populate_large_buffers(handle->owned, handle->pool.get());
  if (options.detail == DelegateDetail::kNodeOutputs) ETC_TRY(prepare_output_logging(view, plan, *handle));
  return handle;
}

// A first run wrote these buffers fresh, and the kernel's zeroing of each
// page then fell inside some thread's chunk of a layer, where the other
// thread waited for it (15-29% of a ppocr_det process's samples in
// clear_page). At one thread populating ahead gained nothing (it is the
// same zeroing), so it is left to the run.
void populate_large_buffers(std::span<const AlignedBuffer> buffers, pthreadpool_t pool) {
  if (pthreadpool_get_threads_count(pool) < 2) return;
  struct Piece {
    uint8_t* data;
    size_t bytes;
  };
  std::vector<Piece> pieces;
  for (const AlignedBuffer& b : buffers)
    if (b.size() >= kLargeBlock)
      for (size_t at = 0; at < b.size(); at += kLargeBlock)
        pieces.push_back({b.data() + at, std::min(kLargeBlock, b.size() - at)});
  pthreadpool_parallelize_1d(
      pool,
      [](void* context, size_t i) {
        const Piece& p = (*static_cast<const std::vector<Piece>*>(context))[i];
        populate_for_writing(p.data, p.bytes);
      },
      &pieces, pieces.size(), 0);
}

}  // namespace etc::xnnpack
