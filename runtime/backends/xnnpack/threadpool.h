#pragma once
// The thread pools shared by every XNNPACK delegate of the process (and the
// portable kernels of methods with the same thread count): one per thread
// count, created on first use and destroyed when the last handle using it
// lets go (runtime/core/task_pool.h SharedTaskPool), behind pthreadpool's
// interface, which XNNPACK and the native kernels call. Thread-safe.

#include <pthreadpool.h>

#include "runtime/core/result.h"
#include "runtime/core/task_pool.h"

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

  pthreadpool_t get() const { return reinterpret_cast<pthreadpool_t>(pool_.get()); }
  void release() { pool_.release(); }

 private:
  SharedTaskPool pool_;
};

// Pools alive now (for tests).
inline size_t live_threadpool_count() { return SharedTaskPool::live_count(); }

// Whether the process's pthreadpool_* symbols are the ones of
// pthreadpool_abi.cpp (and not libpthreadpool's, which would be handed a
// TaskPool it cannot read): true wherever the backend is linked into the
// executable, as CMake does.
bool task_pool_serves_pthreadpool();

}  // namespace etc::xnnpack
