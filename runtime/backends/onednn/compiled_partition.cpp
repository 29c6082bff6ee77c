#include "runtime/backends/onednn/compiled_partition.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstring>
#include <exception>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>

#include "runtime/backends/onednn/builder.h"
#include "runtime/backends/onednn/partition_builder.h"
#include "runtime/core/arena_plan.h"

namespace etc::onednn {
namespace {

// The arena offsets of the buffers that are neither arguments nor owned
// (activations and each step's scratchpad), placed by size and life
// (runtime/core/arena_plan.h; ties in size by first use); returns the
// arena's size.
size_t plan_arena(std::vector<BufferPlan>& buffers) {
  std::vector<size_t> order;
  for (size_t b = 0; b < buffers.size(); ++b)
    if (buffers[b].arg < 0 && buffers[b].fixed == nullptr && buffers[b].bytes > 0) order.push_back(b);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return buffers[a].first < buffers[b].first; });
  std::vector<BufferRequest> requests;
  for (size_t b : order)
    requests.push_back(BufferRequest{buffers[b].bytes, buffers[b].first, buffers[b].last});
  const ArenaPlacement placement = place_in_arena(requests);
  for (size_t i = 0; i < order.size(); ++i) buffers[order[i]].offset = placement.offsets[i];
  return placement.arena_size;
}

// Makes every step's primitive, on up to `workers` threads at once:
// creating primitives (generating their code) is most of init, and they
// are independent. Each is made on its maker's thread with its own OpenMP
// thread count. A refusal names the first node (in blob order) refused.
Status create_primitives(const BlobView& view, PartitionPlan& plan, int workers) {
  std::vector<PlannedStep*> steps;
  for (PlannedGroup& g : plan.groups)
    for (PlannedStep& s : g.steps) steps.push_back(&s);
  std::atomic<size_t> next{0};
  std::mutex mutex;
  uint32_t failed_node = UINT32_MAX;
  std::string failure;
  const auto work = [&] {
    const int restore = omp_get_max_threads();
    for (size_t i = next.fetch_add(1); i < steps.size(); i = next.fetch_add(1)) {
      PlannedStep& s = *steps[i];
      try {
        const ThreadCount at(s.threads, restore);
        s.primitive = s.make();
      } catch (const std::exception& e) {  // dnnl::error, std::bad_alloc
        const std::lock_guard<std::mutex> lock(mutex);
        if (s.node < failed_node) failed_node = s.node, failure = e.what();
      } catch (...) {
        const std::lock_guard<std::mutex> lock(mutex);
        if (s.node < failed_node) failed_node = s.node, failure = "an unknown error";
      }
    }
  };
  std::vector<std::thread> makers;
  try {
    makers.reserve(static_cast<size_t>(std::max(workers, 1)));
    for (int t = 1; t < workers && static_cast<size_t>(t) < steps.size(); ++t) makers.emplace_back(work);
  } catch (...) {
    // std::system_error, std::bad_alloc: fewer makers.
  }
  work();
  for (std::thread& t : makers) t.join();
  if (failed_node == UINT32_MAX) return Status::Ok();
  return fail(Error::InvalidProgram, "onednn: node ", std::to_string(failed_node), " (",
              fb::EnumNameNodeKind(view.graph->nodes()->Get(failed_node)->kind()),
              "): oneDNN cannot create it: ", failure);
}

}  // namespace

int machine_threads() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

Result<std::unique_ptr<CompiledPartition>> compile_partition(const BlobView& view,
                                                             const CompileOptions& options) {
  auto out = std::make_unique<CompiledPartition>();
  out->num_threads = std::clamp(options.num_threads, 1, machine_threads());
  PartitionPlan plan;
  try {
    out->engine = dnnl::engine(dnnl::engine::kind::cpu, 0);
    out->stream = dnnl::stream(out->engine);
    // oneDNN's primitives run on the threads they were created for.
    omp_set_num_threads(out->num_threads);
    ETC_TRY(build_partition(view, options, *out, plan));
    ETC_TRY(create_primitives(view, plan, out->num_threads));
  } catch (const dnnl::error& e) {
    return fail(Error::InvalidProgram, "onednn: ", e.what());
  }
  const size_t arena_bytes = plan_arena(plan.buffers);
  out->arena = AlignedBuffer::allocate(arena_bytes);
  if (!out->arena)
    return fail(Error::DelegateMemoryAllocationFailed, "onednn: cannot allocate ",
                std::to_string(arena_bytes), " bytes of activations");
  // Every memory gets its data now; arguments get theirs at each execute.
  std::vector<dnnl::memory> memories;
  for (const MemoryPlan& m : plan.memories) {
    const BufferPlan& b = plan.buffers[static_cast<size_t>(m.buffer)];
    // Only arena buffers hold slices (offset > 0).
    void* data = b.fixed != nullptr ? b.fixed
                 : b.arg >= 0       ? DNNL_MEMORY_NONE
                                    : out->arena.as<uint8_t>() + b.offset + m.offset;
    memories.emplace_back(m.desc, out->engine, data);
    if (b.arg >= 0) out->bindings.emplace_back(memories.back(), static_cast<size_t>(b.arg));
  }
  for (PlannedGroup& g : plan.groups) {
    StepGroup group;
    group.debug_id = g.debug_id;
    group.metadata = std::move(g.metadata);
    group.logs_output = g.logs_output;
    group.threads = g.threads;
    group.output_shape = g.output_shape;
    for (PlannedStep& s : g.steps) {
      Step step{std::move(s.primitive), {}};
      for (const auto& [arg, memory] : s.args) step.args.emplace(arg, memories[static_cast<size_t>(memory)]);
      if (s.scratch_buffer >= 0)
        step.args.emplace(DNNL_ARG_SCRATCHPAD,
                          dnnl::memory(s.scratchpad, out->engine,
                                       out->arena.as<uint8_t>() +
                                           plan.buffers[static_cast<size_t>(s.scratch_buffer)].offset));
      group.steps.push_back(std::move(step));
    }
    out->groups.push_back(std::move(group));
  }
  for (uint32_t t : view.input_tensors) out->arg_numel.push_back(view.tensors[t].numel);
  for (uint32_t t : view.output_tensors) out->arg_numel.push_back(view.tensors[t].numel);
  return out;
}

Status run_partition(CompiledPartition& p, BackendExecutionContext& context, Span<EValue*> args) {
  if (args.size() != p.arg_numel.size())
    return fail(Error::InvalidArgument, "onednn: ", std::to_string(args.size()), " arguments, expected ",
                std::to_string(p.arg_numel.size()));
  for (size_t a = 0; a < args.size(); ++a) {
    const EValue* v = args[a];
    if (v == nullptr || !v->is_tensor() || v->to_tensor().dtype() != DType::Float32 ||
        v->to_tensor().numel() != p.arg_numel[a] || v->to_tensor().data == nullptr)
      return fail(Error::InvalidArgument, "onednn: argument ", std::to_string(a),
                  " is not a float32 tensor of ", std::to_string(p.arg_numel[a]), " elements");
  }
  for (auto& [memory, arg] : p.bindings) memory.set_data_handle(args[arg]->to_tensor().data);
  omp_set_num_threads(p.num_threads);
  EventTracer* tracer = context.event_tracer();
  const bool log = event_tracer_logs_intermediate_outputs(tracer);
  for (const StepGroup& g : p.groups) {
    try {
      const bool traced = tracer != nullptr && g.debug_id != kNoDebugId;
      const EventTracerEntry event =
          traced ? tracer->start_profiling_delegate({}, g.debug_id) : EventTracerEntry{};
      // oneDNN primitives run on the threads they were made for.
      if (g.threads != 0) omp_set_num_threads(g.threads);
      for (const Step& s : g.steps) s.primitive.execute(p.stream, s.args);
      if (g.threads != 0) omp_set_num_threads(p.num_threads);
      if (traced) {
        p.stream.wait();
        tracer->end_profiling_delegate(event, g.metadata.data(), g.metadata.size());
      }
      if (log && g.logs_output) {
        p.stream.wait();
        event_tracer_log_output_delegate(
            tracer, {}, g.debug_id, Tensor{TensorSpec{DType::Float32, g.output_shape}, p.log_buffer.data()});
      }
    } catch (const dnnl::error& e) {
      if (g.debug_id != kNoDebugId) context.set_failed_node({}, g.debug_id);
      return fail(Error::DelegateInvalidHandle, "onednn: a primitive failed: ", e.what());
    }
  }
  p.stream.wait();
  return Status::Ok();
}

}  // namespace etc::onednn
