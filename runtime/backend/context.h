#pragma once
// What the executor hands a backend at init and at each execute.
// Every pointer is owned by the executor and outlives the call it is passed
// to. A backend allocates what its handle keeps itself (AlignedBuffer, the
// heap); init is the place to do it, and allocation failure there is
// reported as DelegateMemoryAllocationFailed (a std::bad_alloc that escapes
// init becomes MemoryAllocationFailed naming the delegate).

#include <cstdint>
#include <string_view>

#include "runtime/backend/options.h"
#include "runtime/core/memory_allocator.h"
#include "runtime/devtools/event_tracer.h"

namespace etc {

class BackendInitContext {
 public:
  BackendInitContext(EventTracer* event_tracer, std::string_view method_name, const RuntimeOptions* options,
                     bool may_resize = false)
      : event_tracer_(event_tracer), method_name_(method_name), options_(options), may_resize_(may_resize) {}

  // nullptr when tracing is off.
  EventTracer* event_tracer() const { return event_tracer_; }
  std::string_view get_method_name() const { return method_name_; }
  const RuntimeOptions& options() const { return *options_; }
  // Whether the method has an input compiled with a range of sizes, so
  // BackendInterface::resize may be called: a backend that resizes from
  // its processed bytes keeps them (does not free them at init).
  bool may_resize() const { return may_resize_; }

 private:
  EventTracer* event_tracer_;
  std::string_view method_name_;
  const RuntimeOptions* options_;
  bool may_resize_;
};

class BackendExecutionContext {
 public:
  BackendExecutionContext(MemoryAllocator* temp_allocator, EventTracer* event_tracer,
                          std::string_view method_name)
      : temp_allocator_(temp_allocator), event_tracer_(event_tracer), method_name_(method_name) {}

  // Scratch memory for this call only: reset after every execute.
  MemoryAllocator* get_temp_allocator() const { return temp_allocator_; }
  void* allocate(size_t size, size_t alignment = alignof(std::max_align_t)) const {
    return temp_allocator_ ? temp_allocator_->allocate(size, alignment) : nullptr;
  }
  EventTracer* event_tracer() const { return event_tracer_; }
  std::string_view get_method_name() const { return method_name_; }

  // A backend whose execute fails names the node that failed by its key in
  // the delegate's debug handle map (a string identifier, or an integer one
  // with `name` empty, as for profiling events), so the executor's error can
  // name the ONNX node(s) behind it. `name` must outlive the execute call.
  void set_failed_node(std::string_view name, int64_t delegate_debug_id) {
    failed_node_name_ = name;
    failed_node_id_ = delegate_debug_id;
    has_failed_node_ = true;
  }
  bool has_failed_node() const { return has_failed_node_; }
  std::string_view failed_node_name() const { return failed_node_name_; }
  int64_t failed_node_id() const { return failed_node_id_; }

 private:
  MemoryAllocator* temp_allocator_;
  EventTracer* event_tracer_;
  std::string_view method_name_;
  std::string_view failed_node_name_;
  int64_t failed_node_id_ = kUnsetDelegateDebugIntId;
  bool has_failed_node_ = false;
};

}  // namespace etc
