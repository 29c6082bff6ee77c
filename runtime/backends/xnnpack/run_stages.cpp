#include "runtime/backends/xnnpack/run_stages.h"

#include "runtime/backends/xnnpack/layout.h"
#include "runtime/backends/xnnpack/subgraph_builder.h"

namespace etc::xnnpack {
namespace {

Status set_up(XnnpackHandle& handle, XnnpackStage& run, int64_t debug_id, BackendExecutionContext& context) {
  bool changed = !run.set_up;
  for (size_t k = 0; k < run.externals.size(); ++k) {
    float* data = handle.data[run.externals[k]];
    if (run.bound[k].data != data) changed = true;
    run.bound[k].data = data;
  }
  if (!changed) return Status::Ok();
  run.set_up = false;
  if (xnn_status s = xnn_setup_runtime(run.runtime.get(), run.bound.size(), run.bound.data());
      s != xnn_status_success) {
    if (debug_id != kUnsetDelegateDebugIntId) context.set_failed_node({}, debug_id);
    return fail(Error::Internal, "xnnpack: xnn_setup_runtime failed (", xnn_status_name(s), ")");
  }
  run.set_up = true;
  return Status::Ok();
}

void log_outputs(const XnnpackHandle& handle, const StageRun& run, EventTracer* tracer) {
  for (const LoggedOutput& out : run.outputs) {
    float* data = handle.data[out.tensor];
    Shape shape;
    for (size_t d = 0; d < out.rank; ++d) shape.push_back(static_cast<int64_t>(out.dims[d]));
    if (out.nhwc) {
      const size_t n = out.dims[0], hw = out.dims[1] * out.dims[2], c = out.dims[3];
      nhwc_to_nchw(data, handle.log_buffer, n, c, hw, handle.pool.get());
      data = handle.log_buffer;
      shape = Shape{static_cast<int64_t>(n), static_cast<int64_t>(c), static_cast<int64_t>(out.dims[1]),
                    static_cast<int64_t>(out.dims[2])};
    }
    event_tracer_log_output_delegate(tracer, {}, run.debug_id,
                                     Tensor{TensorSpec{DType::Float32, shape}, data});
  }
}

}  // namespace

Status run_stages(XnnpackHandle& handle, BackendExecutionContext& context) {
  for (StageRun& run : handle.runs)
    if (auto* stage = std::get_if<XnnpackStage>(&run.work))
      ETC_TRY(set_up(handle, *stage, run.debug_id, context));
  EventTracer* tracer = context.event_tracer();
  const bool log = handle.log_buffer != nullptr && event_tracer_logs_intermediate_outputs(tracer);
  for (StageRun& run : handle.runs) {
    const bool traced = tracer != nullptr && run.debug_id != kUnsetDelegateDebugIntId;
    const EventTracerEntry event =
        traced ? tracer->start_profiling_delegate({}, run.debug_id) : EventTracerEntry{};
    xnn_status status = xnn_status_success;
    if (auto* stage = std::get_if<XnnpackStage>(&run.work))
      status = xnn_invoke_runtime(stage->runtime.get());
    else
      run_native_op(std::get<NativeOp>(run.work), handle.data.data(),
                    run.serial ? nullptr : handle.pool.get());
    if (traced) tracer->end_profiling_delegate(event, run.metadata.data(), run.metadata.size());
    if (status != xnn_status_success) {
      if (run.debug_id != kUnsetDelegateDebugIntId) context.set_failed_node({}, run.debug_id);
      return fail(Error::Internal, "xnnpack: xnn_invoke_runtime failed (", xnn_status_name(status), ")");
    }
    if (log) log_outputs(handle, run, tracer);
  }
  return Status::Ok();
}

}  // namespace etc::xnnpack
