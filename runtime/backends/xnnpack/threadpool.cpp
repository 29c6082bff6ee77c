#include "runtime/backends/xnnpack/threadpool.h"

#include <string>

#include "runtime/core/log.h"

namespace etc::xnnpack {
namespace {

// Whether XNNPACK's pthreadpool calls reach the functions the backend
// calls; where they do not (the backend linked into a library that binds
// its own calls locally and is loaded with RTLD_LOCAL, say), a pool made by
// one would be handed to the other, so every delegate runs on its calling
// thread instead.
bool pools_usable() {
  static const bool usable = [] {
    const bool served = task_pool_serves_pthreadpool();
    if (!served)
      ETC_LOG(Warning,
              "xnnpack: XNNPACK's pthreadpool functions are not the backend's (link the XNNPACK backend "
              "into the executable): delegates run on the calling thread alone");
    return served;
  }();
  return usable;
}

}  // namespace

Result<SharedThreadpool> SharedThreadpool::acquire(int num_threads) {
  if (num_threads < 0)
    return fail(Error::InvalidArgument, "xnnpack: num_threads ", std::to_string(num_threads),
                " (expected 0 for one per core, or a positive count)");
  if (!pools_usable()) return SharedThreadpool();  // a null pool: the calling thread
  SharedThreadpool result;
  result.pool_ = SharedTaskPool::acquire(static_cast<size_t>(num_threads));
  if (result.pool_.get() == nullptr)
    return fail(Error::MemoryAllocationFailed, "xnnpack: cannot create a pool of ",
                std::to_string(num_threads), " threads");
  return result;
}

}  // namespace etc::xnnpack
