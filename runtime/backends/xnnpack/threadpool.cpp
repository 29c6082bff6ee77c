#include "runtime/backends/xnnpack/threadpool.h"

#include <map>
#include <mutex>
#include <string>

#include "runtime/backends/xnnpack/task_pool.h"

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

// A TaskPool (task_pool.h) through pthreadpool's interface: its workers
// start while the caller goes on. (pthreadpool's own creation waited for
// every worker to check in: 12-15 ms for 2 threads when the second vCPU of
// a VM was slow to wake.)
pthreadpool_t create_pool(size_t num_threads) {
  static const bool served = task_pool_serves_pthreadpool();
  if (!served) return nullptr;
  return pthreadpool_create(num_threads);
}

}  // namespace

Result<SharedThreadpool> SharedThreadpool::acquire(int num_threads) {
  if (num_threads < 0)
    return fail(Error::InvalidArgument, "xnnpack: num_threads ", std::to_string(num_threads),
                " (expected 0 for one per core, or a positive count)");
  std::lock_guard<std::mutex> lock(pools_mutex());
  PoolEntry& entry = pools()[num_threads];
  if (entry.pool == nullptr) {
    entry.pool = create_pool(static_cast<size_t>(num_threads));
    if (entry.pool == nullptr) {
      pools().erase(num_threads);
      if (!task_pool_serves_pthreadpool())
        return fail(Error::NotSupported,
                    "xnnpack: pthreadpool's calls do not reach the backend's thread pool (libpthreadpool's "
                    "symbols come first: link the backend into the executable)");
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
