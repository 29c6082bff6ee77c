#include "runtime/backends/xnnpack/threadpool.h"

#include <map>
#include <mutex>
#include <string>

#include "runtime/backends/xnnpack/task_pool.h"
#include "runtime/core/log.h"

namespace etc::xnnpack {
namespace {

struct PoolEntry {
  pthreadpool_t pool = nullptr;
  size_t references = 0;
};

std::mutex& pools_mutex() {
  static std::mutex mutex;
  return mutex;
}

// Keyed by the requested thread count. Few keys ever exist, so a map is fine.
std::map<int, PoolEntry>& pools() {
  static std::map<int, PoolEntry> map;
  return map;
}

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
  std::lock_guard<std::mutex> lock(pools_mutex());
  PoolEntry& entry = pools()[num_threads];
  if (entry.pool == nullptr) {
    // A TaskPool (task_pool.h): its workers start while the caller goes on.
    entry.pool = pthreadpool_create(static_cast<size_t>(num_threads));
    if (entry.pool == nullptr) {
      pools().erase(num_threads);
      return fail(Error::MemoryAllocationFailed, "xnnpack: cannot create a pool of ",
                  std::to_string(num_threads), " threads");
    }
  }
  ++entry.references;
  SharedThreadpool result;
  result.pool_ = entry.pool;
  result.key_ = num_threads;
  return result;
}

SharedThreadpool& SharedThreadpool::operator=(SharedThreadpool&& o) noexcept {
  if (this != &o) {
    release();
    pool_ = o.pool_;
    key_ = o.key_;
    o.pool_ = nullptr;
  }
  return *this;
}

void SharedThreadpool::release() {
  if (pool_ == nullptr) return;
  std::lock_guard<std::mutex> lock(pools_mutex());
  auto it = pools().find(key_);
  if (it != pools().end() && --it->second.references == 0) {
    pthreadpool_destroy(it->second.pool);
    pools().erase(it);
  }
  pool_ = nullptr;
}

size_t live_threadpool_count() {
  std::lock_guard<std::mutex> lock(pools_mutex());
  return pools().size();
}

}  // namespace etc::xnnpack
