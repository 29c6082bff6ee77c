// EventRecorder: identifiers, full buffers and what it keeps of each event.
#include "runtime/devtools/event_recorder.h"

#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

namespace etc {
namespace {

struct Buffers {
  std::vector<RecordedEvent> events;
  std::vector<uint8_t> data;
  EventRecorder recorder;
  Buffers(size_t num_events, size_t data_bytes)
      : events(num_events), data(data_bytes), recorder(Span<RecordedEvent>(events), Span<uint8_t>(data)) {}
};

TEST_CASE("the recorder keeps int and string identifiers as delegates pass them", "[devtools]") {
  Buffers b(16, 1024);
  EventRecorder& r = b.recorder;
  r.begin_run();
  r.set_instruction(3, 1);
  const EventTracerEntry by_int = event_tracer_start_profiling_delegate(&r, {}, 42);
  const uint8_t meta[3] = {1, 2, 3};
  event_tracer_end_profiling_delegate(&r, by_int, meta, sizeof(meta));
  const EventTracerEntry by_name =
      event_tracer_start_profiling_delegate(&r, "conv+relu", kUnsetDelegateDebugIntId);
  event_tracer_end_profiling_delegate(&r, by_name);
  event_tracer_log_profiling_delegate(&r, {}, 7, 100, 250);
  r.end_run();

  REQUIRE(r.num_events() == 4);  // the run, then three delegate events
  CHECK(r.event(0).kind == RecordedEventKind::kRun);
  CHECK(r.event(0).end_time >= r.event(0).start_time);
  const RecordedEvent& a = r.event(1);
  CHECK(a.kind == RecordedEventKind::kDelegate);
  CHECK(a.delegate_debug_id == 42);
  CHECK(r.name_of(a).empty());
  CHECK(a.instruction == 3);
  CHECK(a.delegate_index == 1);
  REQUIRE(r.bytes_of(a).size() == 3);
  CHECK(r.bytes_of(a)[2] == 3);
  CHECK(a.end_time >= a.start_time);
  CHECK(r.name_of(r.event(2)) == "conv+relu");
  CHECK(r.event(2).delegate_debug_id == kUnsetDelegateDebugIntId);
  CHECK(r.event(3).start_time == 100);
  CHECK(r.event(3).end_time == 250);
  CHECK(r.rejected_events() == 0);
}

TEST_CASE("delegate events with both identifiers or neither are rejected and counted", "[devtools]") {
  Buffers b(16, 1024);
  EventRecorder& r = b.recorder;
  r.begin_run();
  const EventTracerEntry both = event_tracer_start_profiling_delegate(&r, "conv", 4);
  event_tracer_end_profiling_delegate(&r, both);
  const EventTracerEntry neither = event_tracer_start_profiling_delegate(&r, {}, kUnsetDelegateDebugIntId);
  event_tracer_end_profiling_delegate(&r, neither);
  event_tracer_log_profiling_delegate(&r, "x", 1, 0, 1);
  const float value = 1.0f;
  event_tracer_log_output_delegate(&r, {}, kUnsetDelegateDebugIntId,
                                   Tensor{TensorSpec{DType::Float32, Shape{1}}, const_cast<float*>(&value)});
  r.end_run();
  CHECK(r.rejected_events() == 4);
  CHECK(r.num_events() == 1);  // only the run
}

TEST_CASE("a full event buffer drops later events and counts them, never more", "[devtools]") {
  Buffers b(5, 1024);
  EventRecorder& r = b.recorder;
  for (int run = 0; run < 3; ++run) {
    r.begin_run();
    for (int32_t i = 0; i < 10; ++i) {
      r.set_instruction(i, -1);
      r.end_profiling(r.start_profiling(i));
    }
    r.end_run();
  }
  CHECK(r.num_events() == 5);
  CHECK(r.dropped_events() == 3 * 11 - 5);
  CHECK(r.num_runs() == 3);
  // Recording goes on after reset.
  r.reset();
  r.begin_run();
  CHECK(r.num_events() == 1);
  CHECK(r.dropped_events() == 0);
}

TEST_CASE("a full data buffer keeps the events but drops their bytes", "[devtools]") {
  Buffers b(16, 64);
  EventRecorder& r = b.recorder;
  r.set_intermediate_outputs(true);
  r.begin_run();
  std::vector<float> small(4, 1.5f), large(100, 2.0f);
  r.log_instruction_output(0, 0, Tensor{TensorSpec{DType::Float32, Shape{2, 2}}, small.data()});
  r.log_instruction_output(1, 0, Tensor{TensorSpec{DType::Float32, Shape{100}}, large.data()});
  r.end_run();
  REQUIRE(r.num_events() == 3);
  const RecordedEvent& kept = r.event(1);
  CHECK(kept.kind == RecordedEventKind::kInstructionOutput);
  CHECK(kept.rank == 2);
  REQUIRE(r.bytes_of(kept).size() == 16);
  float first = 0;
  std::memcpy(&first, r.bytes_of(kept).data(), sizeof(float));
  CHECK(first == 1.5f);
  const RecordedEvent& dropped = r.event(2);
  CHECK(dropped.dims[0] == 100);
  CHECK(dropped.bytes_size == 0);
  CHECK(r.dropped_bytes() == 400);
}

}  // namespace
}  // namespace etc
