#include "runtime/backends/xnnpack/threadpool.h"

#include <map>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>

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

// pthreadpool_create spins until its workers have started. Where the
// scheduler queues a new worker on the creating thread's own core, the
// worker waits out the spinner's time slice: on a 2-vCPU VM, 2 threads,
// the median creation took 12.5 ms over 40 processes. Created on a helper
// thread the caller waits for (blocking, which leaves the caller's core
// free), and given one empty task so every worker has run before the first
// real one, the pool was ready in 0.77 ms (median of 40; README).
pthreadpool_t create_pool(size_t num_threads) {
  // A pool of one thread is the caller alone: pthreadpool starts no worker,
  // and a helper thread would only cost its own start (0.4-0.9 ms of a
  // process's init here).
  if (num_threads == 1) return pthreadpool_create(1);
  pthreadpool_t pool = nullptr;
  try {
    std::thread([&pool, num_threads] {
      pool = pthreadpool_create(num_threads);
      if (pool != nullptr)
        pthreadpool_parallelize_1d(
            pool, [](void*, size_t) {}, nullptr, pthreadpool_get_threads_count(pool), 0);
    }).join();
  } catch (const std::system_error&) {  // no thread to spare: reported as a pool not created
  }
  return pool;
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
