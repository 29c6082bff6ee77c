#include "runtime/devtools/event_recorder.h"

#include <cstring>

#include "runtime/core/log.h"

namespace etc {
namespace {

// Tensor bytes start 8-byte aligned in the data buffer, so a reader can view
// int64 and float64 data in place.
constexpr size_t kDataAlign = 8;

}  // namespace

EventRecorder::EventRecorder(Span<RecordedEvent> events, Span<uint8_t> data) : events_(events), data_(data) {}

void EventRecorder::reset() {
  num_events_ = 0;
  data_used_ = 0;
  num_runs_ = 0;
  current_run_event_ = -1;
  instruction_ = -1;
  delegate_index_ = -1;
  dropped_events_ = dropped_bytes_ = rejected_events_ = 0;
  warned_events_ = warned_bytes_ = warned_rejected_ = false;
}

RecordedEvent* EventRecorder::append(RecordedEventKind kind) {
  if (num_events_ == events_.size()) {
    ++dropped_events_;
    if (!warned_events_) {
      warned_events_ = true;
      ETC_LOG(Warning, "event recorder: the event buffer is full (%zu events); later events are dropped",
              events_.size());
    }
    return nullptr;
  }
  RecordedEvent& e = events_[num_events_++];
  e = RecordedEvent{};
  e.kind = kind;
  e.run = num_runs_ == 0 ? 0 : num_runs_ - 1;
  e.instruction = instruction_;
  e.delegate_index = delegate_index_;
  return &e;
}

bool EventRecorder::store(const void* bytes, size_t size, uint64_t& offset) {
  if (size == 0) return true;
  const size_t start = (data_used_ + kDataAlign - 1) / kDataAlign * kDataAlign;
  if (start > data_.size() || data_.size() - start < size) {
    dropped_bytes_ += size;
    if (!warned_bytes_) {
      warned_bytes_ = true;
      ETC_LOG(Warning,
              "event recorder: the data buffer is full (%zu bytes); later names, metadata and tensor "
              "data are dropped",
              data_.size());
    }
    return false;
  }
  std::memcpy(data_.data() + start, bytes, size);
  offset = start;
  data_used_ = start + size;
  return true;
}

bool EventRecorder::valid_identifier(std::string_view name, int64_t delegate_debug_id) {
  if (name.empty() != (delegate_debug_id == kUnsetDelegateDebugIntId)) return true;
  ++rejected_events_;
  if (!warned_rejected_) {
    warned_rejected_ = true;
    ETC_LOG(Warning,
            "event recorder: a delegate event in instruction %d has %s; it needs a string identifier "
            "or an integer one, not both (rejected)",
            instruction_, name.empty() ? "neither a name nor an id" : "both a name and an id");
  }
  return false;
}

std::string_view EventRecorder::name_of(const RecordedEvent& e) const {
  if (e.name_size == 0) return {};
  return {reinterpret_cast<const char*>(data_.data() + e.name_offset), e.name_size};
}

Span<const uint8_t> EventRecorder::bytes_of(const RecordedEvent& e) const {
  if (e.bytes_size == 0) return {};
  return {data_.data() + e.bytes_offset, static_cast<size_t>(e.bytes_size)};
}

EventTracerEntry EventRecorder::start_profiling_delegate(std::string_view name, int64_t delegate_debug_id) {
  EventTracerEntry entry{-1, 0, delegate_debug_id, name, instruction_};
  if (!valid_identifier(name, delegate_debug_id)) return entry;
  entry.event_id = 0;
  entry.start_time = event_tracer_now();
  return entry;
}

void EventRecorder::end_profiling_delegate(const EventTracerEntry& entry, const void* metadata,
                                           size_t metadata_len) {
  if (entry.event_id < 0) return;  // rejected at start
  record_delegate(entry.name, entry.delegate_debug_id, entry.start_time, event_tracer_now(), metadata,
                  metadata_len);
}

void EventRecorder::log_profiling_delegate(std::string_view name, int64_t delegate_debug_id,
                                           uint64_t start_time, uint64_t end_time, const void* metadata,
                                           size_t metadata_len) {
  if (!valid_identifier(name, delegate_debug_id)) return;
  record_delegate(name, delegate_debug_id, start_time, end_time, metadata, metadata_len);
}

void EventRecorder::record_delegate(std::string_view name, int64_t delegate_debug_id, uint64_t start,
                                    uint64_t end, const void* metadata, size_t metadata_len) {
  RecordedEvent* e = append(RecordedEventKind::kDelegate);
  if (e == nullptr) return;
  e->delegate_debug_id = delegate_debug_id;
  e->start_time = start;
  e->end_time = end;
  if (store(name.data(), name.size(), e->name_offset)) e->name_size = static_cast<uint32_t>(name.size());
  if (metadata != nullptr && store(metadata, metadata_len, e->bytes_offset)) e->bytes_size = metadata_len;
}

void EventRecorder::record_output(const Tensor& output, RecordedEvent& e) {
  e.dtype = output.dtype();
  e.rank = static_cast<uint8_t>(output.rank());
  for (int d = 0; d < output.rank(); ++d) e.dims[d] = output.shape()[d];
  const size_t size = output.nbytes();
  if (output.data != nullptr && store(output.data, size, e.bytes_offset)) e.bytes_size = size;
}

void EventRecorder::log_output_delegate(std::string_view name, int64_t delegate_debug_id,
                                        const Tensor& output) {
  if (!valid_identifier(name, delegate_debug_id)) return;
  RecordedEvent* e = append(RecordedEventKind::kDelegateOutput);
  if (e == nullptr) return;
  e->delegate_debug_id = delegate_debug_id;
  if (store(name.data(), name.size(), e->name_offset)) e->name_size = static_cast<uint32_t>(name.size());
  record_output(output, *e);
}

void EventRecorder::begin_run() {
  ++num_runs_;
  instruction_ = -1;
  delegate_index_ = -1;
  RecordedEvent* e = append(RecordedEventKind::kRun);
  current_run_event_ = e == nullptr ? -1 : static_cast<int64_t>(num_events_ - 1);
  if (e != nullptr) e->start_time = event_tracer_now();
}

void EventRecorder::end_run() {
  if (current_run_event_ >= 0) events_[static_cast<size_t>(current_run_event_)].end_time = event_tracer_now();
  current_run_event_ = -1;
  instruction_ = -1;
  delegate_index_ = -1;
}

void EventRecorder::set_instruction(int32_t instruction, int32_t delegate_index) {
  instruction_ = instruction;
  delegate_index_ = delegate_index;
}

EventTracerEntry EventRecorder::start_profiling(int32_t instruction) {
  return EventTracerEntry{0, event_tracer_now(), kUnsetDelegateDebugIntId, {}, instruction};
}

void EventRecorder::end_profiling(const EventTracerEntry& entry) {
  const uint64_t end = event_tracer_now();
  RecordedEvent* e = append(RecordedEventKind::kInstruction);
  if (e == nullptr) return;
  e->instruction = entry.instruction;
  e->start_time = entry.start_time;
  e->end_time = end;
}

void EventRecorder::log_instruction_output(int32_t instruction, int32_t output_index, const Tensor& output) {
  RecordedEvent* e = append(RecordedEventKind::kInstructionOutput);
  if (e == nullptr) return;
  e->instruction = instruction;
  e->output_index = output_index;
  record_output(output, *e);
}

void EventRecorder::register_load_time_delegate(const LoadTimeDelegateView& delegate) {
  LoadTimeDelegate d;
  d.delegate_index = delegate.delegate_index;
  d.backend_id = std::string(delegate.backend_id);
  d.first_instruction = delegate.first_instruction;
  d.last_instruction = delegate.last_instruction;
  for (const DelegateMapEntryView& e : delegate.map)
    d.map.push_back({e.id, std::string(e.name), std::vector<int32_t>(e.handles.begin(), e.handles.end())});
  load_time_delegates_.push_back(std::move(d));
}

}  // namespace etc
