#pragma once
// EventTracer: where the runtime and delegates report profiling events and
// intermediate outputs. The executor passes the tracer (or nullptr: no
// tracing) to backends through their contexts. The free functions below are
// what delegates call; each is a no-op when `tracer` is null, so a backend
// never branches on whether tracing is on.
//
// Delegate events are identified by name (string identifiers) or by id
// (integer identifiers), matching the identifiers in the delegate's debug
// handle map. Timestamps are nanoseconds from a steady clock.

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace etc {

struct EventTracerEntry {
  int64_t event_id = -1;
  uint64_t start_time = 0;
  int64_t delegate_debug_id = -1;  // -1: the event is named
  std::string_view name;
};

class EventTracer {
 public:
  virtual ~EventTracer() = default;
  virtual EventTracerEntry start_profiling_delegate(std::string_view name, int64_t delegate_debug_id) = 0;
  virtual void end_profiling_delegate(const EventTracerEntry& entry, const void* metadata,
                                      size_t metadata_len) = 0;
  virtual void log_profiling_delegate(std::string_view name, int64_t delegate_debug_id, uint64_t start_time,
                                      uint64_t end_time, const void* metadata, size_t metadata_len) = 0;
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

}  // namespace etc
