#pragma once
// One delegate blob handed straight to a backend's init (and destroy), as
// Method::init does after the program is verified: the backend alone must
// refuse a blob it cannot run.

#include <cstdint>
#include <cstdlib>

#include "runtime/backend/interface.h"
#include "runtime/backend/options.h"
#include "runtime/backends/register_builtin.h"

namespace etc::fuzz {

inline void init_blob(const char* backend_name, const uint8_t* data, size_t size) {
  static const bool registered = register_builtin_backends().ok();
  if (!registered) std::abort();
  BackendInterface* backend = get_backend_class(backend_name);
  if (!backend) std::abort();
  RuntimeOptions options;
  options.num_threads = 1;
  BackendInitContext context(nullptr, "forward", &options);
  FreeableBuffer processed(data, size);
  auto handle = backend->init(context, &processed, {});
  if (handle.ok()) backend->destroy(handle.get());
}

}  // namespace etc::fuzz
