#pragma once
// The runtime half of a backend (ExecuTorch's BackendInterface).
//
// Life cycle, per call_delegate instruction of a Method:
//   init     once, when the Method is created: parse and compile the
//            processed bytes; may free them (processed->free()) once it no
//            longer needs them. Returns an opaque handle.
//   execute  every run: args are the delegate's inputs, then its outputs,
//            already typed and sized as the program declares.
//   resize   when an input of the Method changes shape (bounded dynamic
//            shapes, Method::resize_input): args are typed with the new
//            shapes of the delegate's inputs, and the backend sets the
//            specs of its outputs (within the memory the program planned for
//            them). May allocate. The default refuses: NotSupported.
//   destroy  once, when the Method is destroyed (after a successful init).
//
// A backend must not throw, must not allocate in execute beyond its temp
// allocator, and reports failures as Error with a message.

#include <cstdint>
#include <optional>
#include <string_view>

#include "runtime/backend/context.h"
#include "runtime/core/evalue.h"
#include "runtime/core/freeable_buffer.h"
#include "runtime/core/result.h"
#include "runtime/core/span.h"

namespace etc {

// A compile spec as stored in the program: views into the program mapping,
// valid for the duration of init.
struct CompileSpecView {
  std::string_view key;
  Span<const uint8_t> value;
};

using DelegateHandle = void;

class BackendInterface {
 public:
  virtual ~BackendInterface() = default;
  // Whether this machine can run the backend (CPU features, drivers).
  virtual bool is_available() const = 0;
  // Why is_available() is false, when the backend can say (null otherwise).
  virtual const char* why_unavailable() const { return nullptr; }
  virtual Result<DelegateHandle*> init(BackendInitContext& context, FreeableBuffer* processed,
                                       Span<const CompileSpecView> compile_specs) const = 0;
  virtual Status execute(BackendExecutionContext& context, DelegateHandle* handle,
                         Span<EValue*> args) const = 0;
  virtual Status resize(DelegateHandle* /*handle*/, Span<EValue*> /*args*/) const {
    return fail(Error::NotSupported, "this backend cannot resize a delegate to new input shapes");
  }
  virtual void destroy(DelegateHandle* /*handle*/) const {}
  // Bytes of activations an initialised delegate holds in memory of its
  // own, beyond the program's arena: the intermediates (and scratch) it
  // plans between and inside its nodes and the buffers converting layouts
  // at its edges (every size it keeps, for a delegate that resizes): a
  // run's working memory beside the arena (`etc run` reports both).
  // nullopt when the backend does not say.
  virtual std::optional<size_t> activation_bytes(const DelegateHandle* /*handle*/) const {
    return std::nullopt;
  }
};

struct Backend {
  const char* name = nullptr;
  BackendInterface* interface = nullptr;  // must outlive every Method using it
};

inline constexpr size_t kMaxRegisteredBackends = 16;

// The process-wide registry (runtime/backend/registry.h); the built-in
// backends are added by register_builtin_backends()
// (runtime/backends/register_builtin.h). `backend.name` is borrowed and must
// outlive the registry (a string literal does).
// Errors: AlreadyRegistered (same name), RegistryFull, InvalidArgument (null
// or empty name, null interface).
Status register_backend(const Backend& backend);
// nullptr when no backend has that name.
BackendInterface* get_backend_class(std::string_view name);
size_t get_num_registered_backends();
// Precondition: index < get_num_registered_backends().
Backend get_backend(size_t index);

}  // namespace etc
