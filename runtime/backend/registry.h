#pragma once
// BackendRegistry: a fixed-capacity table of runtime backends, looked up by
// name when a Method initialises its delegate calls. The free functions of
// runtime/backend/interface.h (register_backend, get_backend_class, ...) wrap
// one process-wide instance; tests use their own instances.
//
// Registration happens at start-up (register_builtin_backends() and any
// application backends), before Methods are created; it is not synchronised
// against concurrent lookups. Names and interfaces are borrowed: both must
// outlive the registry (string literals and static objects do).

#include <cstddef>
#include <string>
#include <string_view>

#include "runtime/backend/interface.h"
#include "runtime/core/result.h"

namespace etc {

class BackendRegistry {
 public:
  // `capacity` is clamped to kMaxRegisteredBackends.
  constexpr explicit BackendRegistry(size_t capacity = kMaxRegisteredBackends)
      : capacity_(capacity < kMaxRegisteredBackends ? capacity : kMaxRegisteredBackends) {}

  // Errors: InvalidArgument (null or empty name, null interface),
  // AlreadyRegistered (the name is taken), RegistryFull.
  Status register_backend(const Backend& backend);
  // nullptr when no backend has that name.
  BackendInterface* get_backend_class(std::string_view name) const;
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  // Precondition: index < size().
  Backend get(size_t index) const { return backends_[index]; }
  // Registered names in registration order, comma-separated ("none" when
  // empty): for messages that tell the user what this runtime offers.
  std::string names() const;

 private:
  Backend backends_[kMaxRegisteredBackends] = {};
  size_t capacity_;
  size_t size_ = 0;
};

// The process-wide registry behind register_backend() and friends.
BackendRegistry& global_backend_registry();

}  // namespace etc
