#pragma once
// A backend whose is_available/init/execute/destroy each test swaps, to test
// the executor's delegate path (after ExecuTorch's backend_integration_test).
// One instance is registered once, under kStubBackendId, in the process-wide
// registry; stub_backend() hands it back with the default behaviour:
// available, init returns a fresh handle, execute succeeds, destroy frees.

#include <functional>
#include <vector>

#include "runtime/backend/interface.h"

namespace etc::testing {

inline constexpr char kStubBackendId[] = "stub";

class StubBackend final : public BackendInterface {
 public:
  using InitFn = std::function<Result<DelegateHandle*>(BackendInitContext&, FreeableBuffer*,
                                                       Span<const CompileSpecView>)>;
  using ExecuteFn = std::function<Status(BackendExecutionContext&, DelegateHandle*, Span<EValue*>)>;
  using DestroyFn = std::function<void(DelegateHandle*)>;

  std::function<bool()> available;
  InitFn on_init;
  ExecuteFn on_execute;
  DestroyFn on_destroy;

  // Back to the default behaviour.
  void reset() {
    available = [] { return true; };
    on_init = [](BackendInitContext&, FreeableBuffer*,
                 Span<const CompileSpecView>) -> Result<DelegateHandle*> {
      return static_cast<DelegateHandle*>(new int(0));
    };
    on_execute = [](BackendExecutionContext&, DelegateHandle*, Span<EValue*>) { return Status::Ok(); };
    on_destroy = [](DelegateHandle* handle) { delete static_cast<int*>(handle); };
  }

  bool is_available() const override { return available(); }
  Result<DelegateHandle*> init(BackendInitContext& context, FreeableBuffer* processed,
                               Span<const CompileSpecView> compile_specs) const override {
    return on_init(context, processed, compile_specs);
  }
  Status execute(BackendExecutionContext& context, DelegateHandle* handle,
                 Span<EValue*> args) const override {
    return on_execute(context, handle, args);
  }
  void destroy(DelegateHandle* handle) const override { on_destroy(handle); }
};

// The registered stub, reset to its defaults.
inline StubBackend& stub_backend() {
  static StubBackend stub;
  static const bool registered = [] { return register_backend(Backend{kStubBackendId, &stub}).ok(); }();
  (void)registered;
  stub.reset();
  return stub;
}

}  // namespace etc::testing
