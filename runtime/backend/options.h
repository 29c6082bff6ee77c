#pragma once
// Runtime options: settings chosen when a program is loaded (by `etc run`
// flags or an embedding application), visible to every backend at init.

#include <cstddef>

namespace etc {

struct RuntimeOptions {
  int num_threads = 0;  // 0: one per core of this machine
  // Bytes of per-call scratch each Method offers its delegates
  // (BackendExecutionContext::get_temp_allocator).
  size_t temp_allocator_bytes = 1 << 20;
};

}  // namespace etc
