#pragma once
// EventTracer: where the runtime and delegates report profiling events and
// intermediate outputs (ExecuTorch's EventTracer). The executor passes the
// tracer (or nullptr: no tracing) to backends through their contexts. The
// free functions below are what delegates call; each is a no-op when
// `tracer` is null, so a backend never branches on whether tracing is on.
//
// Identifiers (ExecuTorch's rule): a delegate event names the entry of its
// delegate's debug handle map it belongs to, either by a string identifier in
// `name` with `delegate_debug_id` left at kUnsetDelegateDebugIntId, or by an
// integer identifier in `delegate_debug_id` with an empty `name`. A tracer
// rejects (and counts) events that set both or neither.
//
// Who calls what:
//   Method::execute   begin_run, then per instruction set_instruction and
//                     start_profiling / end_profiling around the kernel or
//                     delegate call, and log_instruction_output for each
//                     output when intermediate_outputs() is on.
//   backends          the event_tracer_*_delegate functions, during
//                     execute, for the work inside one delegate call.
// Timestamps are nanoseconds from a steady clock (event_tracer_now).
// A tracer must not throw; it may drop events when full, but must say so.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runtime/core/span.h"
#include "runtime/core/tensor.h"

namespace etc {

// ExecuTorch's kUnsetDelegateDebugIntId: the event carries a string identifier.
inline constexpr int64_t kUnsetDelegateDebugIntId = -1;

struct EventTracerEntry {
  int64_t event_id = -1;  // tracer-defined; -1 when the tracer keeps nothing
  uint64_t start_time = 0;
  int64_t delegate_debug_id = kUnsetDelegateDebugIntId;
  std::string_view name;  // must stay valid until the matching end call
  int32_t instruction = -1;
};

// One entry of a delegate's debug handle map: an integer identifier (`id`)
// or a string one (`name`), and the program's debug handles it stands for.
struct DelegateMapEntryView {
  int64_t id = kUnsetDelegateDebugIntId;
  std::string_view name;
  Span<const int32_t> handles;
};

// A delegate a load-time delegate (runtime/delegate/delegate.h) made of
// instructions [first_instruction, last_instruction]: its call's events
// carry `delegate_index` (numbered after the program's own delegates) and
// its backend's events the identifiers of `map`, which the program itself
// does not hold. Valid only during register_load_time_delegate.
struct LoadTimeDelegateView {
  int32_t delegate_index = -1;
  std::string_view backend_id;
  uint32_t first_instruction = 0, last_instruction = 0;
  Span<const DelegateMapEntryView> map;
};

class EventTracer {
 public:
  virtual ~EventTracer() = default;

  // Delegate events (ExecuTorch's shapes).
  virtual EventTracerEntry start_profiling_delegate(std::string_view name, int64_t delegate_debug_id) = 0;
  virtual void end_profiling_delegate(const EventTracerEntry& entry, const void* metadata,
                                      size_t metadata_len) = 0;
  virtual void log_profiling_delegate(std::string_view name, int64_t delegate_debug_id, uint64_t start_time,
                                      uint64_t end_time, const void* metadata, size_t metadata_len) = 0;
  // One intermediate output of a delegate's node, in the layout of the
  // program (the backend converts from its own). Copied before returning.
  virtual void log_output_delegate(std::string_view /*name*/, int64_t /*delegate_debug_id*/,
                                   const Tensor& /*output*/) {}

  // Executor events. A run is one Method::execute.
  virtual void begin_run() {}
  virtual void end_run() {}
  // The instruction (and, for a delegate call, the index of the delegate in
  // the program) that the events until the next call belong to.
  virtual void set_instruction(int32_t /*instruction*/, int32_t /*delegate_index*/) {}
  virtual EventTracerEntry start_profiling(int32_t instruction) {
    return EventTracerEntry{-1, 0, kUnsetDelegateDebugIntId, {}, instruction};
  }
  virtual void end_profiling(const EventTracerEntry& /*entry*/) {}
  virtual void log_instruction_output(int32_t /*instruction*/, int32_t /*output_index*/,
                                      const Tensor& /*output*/) {}

  // Once per load-time delegated range, when the Method is initialised (a
  // tracer that writes ETDumps keeps the map so the inspector can resolve
  // those events). May allocate.
  virtual void register_load_time_delegate(const LoadTimeDelegateView& /*delegate*/) {}

  // Whether the executor and backends should log intermediate outputs;
  // read once per run, so it must not change during one.
  virtual bool intermediate_outputs() const { return false; }
};

// Steady-clock nanoseconds, the time base of every event.
uint64_t event_tracer_now();

inline EventTracerEntry event_tracer_start_profiling_delegate(EventTracer* tracer, std::string_view name,
                                                              int64_t delegate_debug_id) {
  if (tracer == nullptr) return {};
  return tracer->start_profiling_delegate(name, delegate_debug_id);
}

inline void event_tracer_end_profiling_delegate(EventTracer* tracer, const EventTracerEntry& entry,
                                                const void* metadata = nullptr, size_t metadata_len = 0) {
  if (tracer != nullptr) tracer->end_profiling_delegate(entry, metadata, metadata_len);
}

inline void event_tracer_log_profiling_delegate(EventTracer* tracer, std::string_view name,
                                                int64_t delegate_debug_id, uint64_t start_time,
                                                uint64_t end_time, const void* metadata = nullptr,
                                                size_t metadata_len = 0) {
  if (tracer != nullptr)
    tracer->log_profiling_delegate(name, delegate_debug_id, start_time, end_time, metadata, metadata_len);
}

// ExecuTorch's event_tracer_log_output_delegate, for one tensor.
inline void event_tracer_log_output_delegate(EventTracer* tracer, std::string_view name,
                                             int64_t delegate_debug_id, const Tensor& output) {
  if (tracer != nullptr) tracer->log_output_delegate(name, delegate_debug_id, output);
}

// Whether a delegate should log its nodes' outputs during this execute.
inline bool event_tracer_logs_intermediate_outputs(const EventTracer* tracer) {
  return tracer != nullptr && tracer->intermediate_outputs();
}

}  // namespace etc
