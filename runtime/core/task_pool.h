#pragma once
// The runtime's thread pool: behind the XNNPACK backend's pthreadpool_t
// (runtime/backends/xnnpack/pthreadpool_abi.cpp implements pthreadpool's C
// interface on it, so XNNPACK's operators and the native kernels run their
// parallel loops here) and the portable kernels' parallel loops
// (KernelArgs::pool); one pool per thread count is shared by all of them
// (SharedTaskPool).
//
// Items are shared out as pthreadpool does: thread t (the caller is 0, the
// workers 1 and on) owns the t-th of `threads` equal contiguous ranges of
// every loop, takes its items from the front, and when it runs out takes
// from the back of the others'. The native kernels count on that: the same
// thread gets the same part of every layer, whose rows it then finds in its
// own cache.
//
// What it does differently from pthreadpool: nobody waits for a worker that
// is not awake. Creating a pool starts its workers and returns; a loop's
// caller works through its own range and then through the ranges of the
// workers that have not come, and a worker that wakes while items are left
// takes what remains of its range (and then others'). The caller waits only
// for items a worker has already taken. pthreadpool waits for every worker
// at creation and at the end of each loop, so a vCPU that is slow to wake
// (milliseconds in a VM's slow phases) stalls start-up and every loop; here
// it only means fewer hands for a while.
//
// Thread-safe: loops from several threads run one at a time, in full.

#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <vector>

namespace etc {

class TaskPool {
 public:
  // Runs items [begin, end) of a loop; `context` is what run() was given.
  using Body = void (*)(const void* context, size_t begin, size_t end);

  // A pool of `threads` threads, the caller included (threads - 1 workers);
  // 0 means one per CPU this process may run on (its affinity mask). Null
  // where a worker cannot be started. Returns before the workers have run.
  static std::unique_ptr<TaskPool> create(size_t threads);
  // Waits for a loop in progress, then stops and joins the workers.
  ~TaskPool();
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;

  size_t threads() const { return workers_.size() + 1; }

  // Runs body over [0, count) in chunks, on the calling thread and the
  // workers awake to help; returns when every item has run. A count above
  // 2^32 - 1 runs on the caller alone. With `flush_denormals`, every thread
  // that runs a chunk treats denormal floats as zero while it does
  // (restored after). Where an item throws, no further items start and the
  // first exception is rethrown here once every thread has left the loop.
  void run(size_t count, Body body, const void* context, bool flush_denormals);
  // The same on the calling thread alone (what a null pool does).
  static void run_inline(size_t count, Body body, const void* context, bool flush_denormals);

  // The CPUs this process may run on (its affinity mask, where the system
  // tells), at least 1.
  static size_t usable_cpus();

  // The items [first, end) thread t owns in a loop of `count` items on
  // `threads` threads. Every chunk a body is given lies in one thread's.
  struct Owned {
    size_t first, end;
  };
  static Owned owned_range(size_t count, size_t threads, size_t t) {
    return {static_cast<size_t>(uint64_t{count} * t / threads),
            static_cast<size_t>(uint64_t{count} * (t + 1) / threads)};
  }
  // Runs range(first, end) over items [0, count) in chunks: on the pool's
  // threads, each its own owned_range first, or on the calling thread alone
  // where `pool` is null. With `backward`, each chunk is mirrored within its
  // owner's range (and `range` walks it last to first), so the thread that
  // owns an item going forward owns it going backward too: a product walked
  // in alternate directions keeps each thread's part in its own cache.
  template <typename F>
  static void run_owned(TaskPool* pool, size_t count, bool backward, const F& range) {
    if (pool == nullptr) {
      range(size_t{0}, count);
      return;
    }
    struct Context {
      const F* range;
      size_t count, threads;
      bool backward;
    };
    const Context context{&range, count, pool->threads(), backward};
    pool->run(
        count,
        [](const void* c, size_t begin, size_t end) {
          const Context& x = *static_cast<const Context*>(c);
          const Owned chunk = x.backward ? mirrored(x.count, x.threads, begin, end) : Owned{begin, end};
          (*x.range)(chunk.first, chunk.end);
        },
        &context, false);
  }

  // Items run by workers since creation (for tests and diagnostics).
  size_t items_run_by_workers() const { return worker_items_.load(std::memory_order_relaxed); }

  // Test hook: while held, workers take no part in loops (as if asleep).
  void hold_workers(bool held) { held_.store(held, std::memory_order_relaxed); }

 private:
  TaskPool() = default;
  // A chunk [begin, end) mirrored within its owner's range.
  static Owned mirrored(size_t count, size_t threads, size_t begin, size_t end) {
    size_t t = 0;
    while (t + 1 < threads && owned_range(count, threads, t).end <= begin) ++t;
    const Owned own = owned_range(count, threads, t);
    return {own.first + own.end - end, own.first + own.end - begin};
  }
  struct Loop {
    size_t count = 0;
    Body body = nullptr;
    const void* context = nullptr;
    bool flush_denormals = false;
  };
  static void* worker_main(void* start);  // pthread entry: owns `start`
  void work(size_t own);
  // Returns once the generation is no longer `seen`: spins, then sleeps.
  void wait_for_loop(uint32_t seen);
  // Takes chunks of the open loop, from range `own` first, until none is
  // left; returns the items run.
  size_t run_chunks(const Loop& loop, size_t own);
  // Items [front, back) of a range, packed front | back << 32.
  struct alignas(64) Range {
    std::atomic<uint64_t> span{0};
  };

  std::vector<pthread_t> workers_;
  std::mutex run_mutex_;   // one loop at a time
  std::mutex join_mutex_;  // guards loop_, open_, stop_, failure_ and joining
  Loop loop_;
  bool open_ = false, stop_ = false;
  std::exception_ptr failure_;  // the open loop's first exception
  std::atomic<bool> held_{false};
  alignas(64) std::atomic<uint32_t> generation_{0};  // bumped per loop; workers wait on it
  std::atomic<uint32_t> sleepers_{0};
  std::unique_ptr<Range[]> ranges_;              // one per thread
  alignas(64) std::atomic<uint32_t> active_{0};  // workers inside the open loop
  std::atomic<size_t> worker_items_{0};
};

// A counted reference to the process's pool of `threads` threads (0: one
// per CPU this process may run on), created on first use and destroyed when
// the last reference lets go: every delegate and method asking for the same
// count shares its threads. Move-only. Thread-safe.
class SharedTaskPool {
 public:
  SharedTaskPool() = default;
  // Empty (get() null) where the pool cannot be created.
  static SharedTaskPool acquire(size_t threads);
  SharedTaskPool(SharedTaskPool&& o) noexcept : pool_(o.pool_), key_(o.key_) { o.pool_ = nullptr; }
  SharedTaskPool& operator=(SharedTaskPool&& o) noexcept;
  SharedTaskPool(const SharedTaskPool&) = delete;
  SharedTaskPool& operator=(const SharedTaskPool&) = delete;
  ~SharedTaskPool() { release(); }

  TaskPool* get() const { return pool_; }
  void release();

  // Pools alive now (for tests).
  static size_t live_count();

 private:
  TaskPool* pool_ = nullptr;
  size_t key_ = 0;
};

}  // namespace etc
