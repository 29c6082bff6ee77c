#pragma once
// EventRecorder: an EventTracer that records into memory its owner provides
// (ExecuTorch's ETDumpGen). Recording never allocates: each event is one
// fixed-size RecordedEvent, and everything of variable size — names, delegate
// metadata, the bytes of intermediate outputs — is copied into the data
// buffer. When either buffer is full, later events (or their bytes) are
// dropped and counted, and one warning is logged the first time; recording
// never fails and never crashes. write_etdump (etdump_writer.h) turns the
// recording into an ETDump file. (Registering a load-time delegate, at
// init, is the one call that allocates.)
//
// Events that break the identifier rule of event_tracer.h (a delegate event
// with both a name and an integer id, or with neither) are rejected: counted
// in rejected_events(), never recorded.
//
// Not thread-safe: the executor and backends log from the thread that calls
// Method::execute (work a backend spreads over a thread pool is timed from
// that thread). Both buffers must outlive the recorder.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/dtype.h"
#include "runtime/core/shape.h"
#include "runtime/core/span.h"
#include "runtime/devtools/event_tracer.h"

namespace etc {

enum class RecordedEventKind : uint8_t {
  kRun,                // one Method::execute: start and end
  kInstruction,        // one instruction (kernel or delegate call)
  kDelegate,           // an event a backend reported inside a delegate call
  kInstructionOutput,  // an output of an instruction
  kDelegateOutput,     // an output of a node inside a delegate
};

struct RecordedEvent {
  RecordedEventKind kind = RecordedEventKind::kRun;
  DType dtype = DType::Invalid;  // outputs
  uint8_t rank = 0;              // outputs
  uint32_t run = 0;              // index of the run it belongs to
  int32_t instruction = -1;      // -1: outside any instruction
  int32_t delegate_index = -1;   // program delegate index, for delegate calls
  int32_t output_index = -1;     // kInstructionOutput
  int64_t delegate_debug_id = kUnsetDelegateDebugIntId;
  uint64_t start_time = 0, end_time = 0;  // profiling events, ns
  // Into data(): the string identifier (delegate events), then the metadata
  // (profiling) or the tensor's bytes (outputs).
  uint64_t name_offset = 0;
  uint32_t name_size = 0;
  uint64_t bytes_offset = 0;
  uint64_t bytes_size = 0;
  int64_t dims[kMaxRank] = {};
};

class EventRecorder final : public EventTracer {
 public:
  EventRecorder(Span<RecordedEvent> events, Span<uint8_t> data);

  // Whether intermediate outputs are logged (off by default).
  void set_intermediate_outputs(bool on) { intermediate_outputs_ = on; }
  bool intermediate_outputs() const override { return intermediate_outputs_; }

  EventTracerEntry start_profiling_delegate(std::string_view name, int64_t delegate_debug_id) override;
  void end_profiling_delegate(const EventTracerEntry& entry, const void* metadata,
                              size_t metadata_len) override;
  void log_profiling_delegate(std::string_view name, int64_t delegate_debug_id, uint64_t start_time,
                              uint64_t end_time, const void* metadata, size_t metadata_len) override;
  void log_output_delegate(std::string_view name, int64_t delegate_debug_id, const Tensor& output) override;

  void begin_run() override;
  void end_run() override;
  void set_instruction(int32_t instruction, int32_t delegate_index) override;
  EventTracerEntry start_profiling(int32_t instruction) override;
  void end_profiling(const EventTracerEntry& entry) override;
  void log_instruction_output(int32_t instruction, int32_t output_index, const Tensor& output) override;
  void register_load_time_delegate(const LoadTimeDelegateView& delegate) override;

  // The load-time delegated ranges registered (kept across reset()).
  struct LoadTimeDelegate {
    int32_t delegate_index = -1;
    std::string backend_id;
    uint32_t first_instruction = 0, last_instruction = 0;
    struct Entry {
      int64_t id = kUnsetDelegateDebugIntId;
      std::string name;
      std::vector<int32_t> handles;
    };
    std::vector<Entry> map;
  };
  const std::vector<LoadTimeDelegate>& load_time_delegates() const { return load_time_delegates_; }

  size_t num_events() const { return num_events_; }
  const RecordedEvent& event(size_t i) const { return events_[i]; }
  Span<const uint8_t> data() const { return {data_.data(), data_used_}; }
  std::string_view name_of(const RecordedEvent& e) const;
  Span<const uint8_t> bytes_of(const RecordedEvent& e) const;
  uint32_t num_runs() const { return num_runs_; }

  // Events not recorded because the event buffer was full.
  uint64_t dropped_events() const { return dropped_events_; }
  // Bytes (names, metadata, tensor data) not recorded because the data
  // buffer was full; their events are kept, marked by bytes_size 0.
  uint64_t dropped_bytes() const { return dropped_bytes_; }
  // Delegate events that broke the identifier rule.
  uint64_t rejected_events() const { return rejected_events_; }

  // Forgets every event and run; the counters too.
  void reset();

 private:
  RecordedEvent* append(RecordedEventKind kind);
  // Copies `size` bytes into the data buffer; false (and counted) when full.
  bool store(const void* bytes, size_t size, uint64_t& offset);
  bool valid_identifier(std::string_view name, int64_t delegate_debug_id);
  void record_delegate(std::string_view name, int64_t delegate_debug_id, uint64_t start, uint64_t end,
                       const void* metadata, size_t metadata_len);
  void record_output(const Tensor& output, RecordedEvent& e);

  Span<RecordedEvent> events_;
  Span<uint8_t> data_;
  size_t num_events_ = 0;
  size_t data_used_ = 0;
  uint32_t num_runs_ = 0;
  int64_t current_run_event_ = -1;
  int32_t instruction_ = -1;
  int32_t delegate_index_ = -1;
  bool intermediate_outputs_ = false;
  uint64_t dropped_events_ = 0, dropped_bytes_ = 0, rejected_events_ = 0;
  bool warned_events_ = false, warned_bytes_ = false, warned_rejected_ = false;
  std::vector<LoadTimeDelegate> load_time_delegates_;
};

}  // namespace etc
