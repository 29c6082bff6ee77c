#pragma once
// The thread pools shared by every XNNPACK delegate of the process: one per
// thread count, created on first use and destroyed when the last handle
// using it lets go. Each is a TaskPool (task_pool.h) behind pthreadpool's
// interface, which XNNPACK and the native kernels call. Thread-safe.

#include <pthreadpool.h>

#include "runtime/core/result.h"

namespace etc::xnnpack {

// A counted reference to the pool of `num_threads` threads (0: one per CPU
// this process may run on). Move-only; releases its reference on destruction.
class SharedThreadpool {
 public:
  SharedThreadpool() = default;
  // Errors: InvalidArgument (num_threads < 0), MemoryAllocationFailed. An
  // empty handle (get() null: the calling thread alone, with a warning
  // logged once) where XNNPACK's pthreadpool calls would not reach the
  // backend's pool (task_pool_serves_pthreadpool()).
  static Result<SharedThreadpool> acquire(int num_threads);
  SharedThreadpool(SharedThreadpool&& o) noexcept : pool_(o.pool_), key_(o.key_) { o.pool_ = nullptr; }
  SharedThreadpool& operator=(SharedThreadpool&& o) noexcept;
  SharedThreadpool(const SharedThreadpool&) = delete;
  SharedThreadpool& operator=(const SharedThreadpool&) = delete;
  ~SharedThreadpool() { release(); }

  pthreadpool_t get() const { return pool_; }
  void release();

 private:
  pthreadpool_t pool_ = nullptr;
  int key_ = 0;
};

// Pools alive now (for tests).
size_t live_threadpool_count();

}  // namespace etc::xnnpack
