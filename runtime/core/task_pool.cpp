#include "runtime/core/task_pool.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__)
#include <immintrin.h>
#define ETC_TASK_POOL_X86 1
#endif

namespace etc {
namespace {

// How long a worker looks for the next loop before it sleeps. The loops of
// one inference follow each other within microseconds; between them the
// caller may run portable kernels for a while. A worker that has gone to
// sleep costs nothing but its share of the next loops until it wakes.
constexpr auto kSpinBeforeSleep = std::chrono::microseconds(1000);

void relax() {
#if defined(ETC_TASK_POOL_X86)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Denormals as zero (the inputs) and flushed to zero (the results) while it
// lives, as pthreadpool's PTHREADPOOL_FLAG_DISABLE_DENORMALS does.
class FlushDenormals {
 public:
  explicit FlushDenormals(bool on) : on_(on) {
    if (!on_) return;
#if defined(ETC_TASK_POOL_X86)
    saved_ = _mm_getcsr();
    _mm_setcsr(saved_ | 0x8040u);  // FTZ | DAZ
#elif defined(__aarch64__)
    asm volatile("mrs %0, fpcr" : "=r"(saved_));
    asm volatile("msr fpcr, %0" : : "r"(saved_ | (uint64_t{1} << 24) | (uint64_t{1} << 19)));  // FZ | FZ16
#elif defined(__arm__) && defined(__ARM_FP)
    uint32_t fpscr;
    asm volatile("vmrs %0, fpscr" : "=r"(fpscr));
    saved_ = fpscr;
    asm volatile("vmsr fpscr, %0" : : "r"(fpscr | (uint32_t{1} << 24)));  // FZ
#endif
  }
  ~FlushDenormals() {
    if (!on_) return;
#if defined(ETC_TASK_POOL_X86)
    _mm_setcsr(saved_);
#elif defined(__aarch64__)
    asm volatile("msr fpcr, %0" : : "r"(saved_));
#elif defined(__arm__) && defined(__ARM_FP)
    asm volatile("vmsr fpscr, %0" : : "r"(static_cast<uint32_t>(saved_)));
#endif
  }
  FlushDenormals(const FlushDenormals&) = delete;
  FlushDenormals& operator=(const FlushDenormals&) = delete;

 private:
  bool on_;
#if defined(ETC_TASK_POOL_X86)
  unsigned saved_ = 0;
#else
  uint64_t saved_ = 0;
#endif
};

// Where workers start. A new thread is queued on its creator's CPU when the
// scheduler takes the other CPUs for busy or does not look at them (a VM's
// halted vCPUs), and does not run there while the caller computes: on a
// 2-vCPU VM the worker shared the caller's vCPU in half of the processes,
// through a whole first run. Started on the other CPUs the process may use,
// and free to move once running.
class Placement {
 public:
  Placement() {
#if defined(__linux__)
    const int here = sched_getcpu();
    if (here < 0 || here >= CPU_SETSIZE || sched_getaffinity(0, sizeof allowed_, &allowed_) != 0) return;
    others_ = allowed_;
    CPU_CLR(here, &others_);
    useful_ = CPU_ISSET(here, &allowed_) && CPU_COUNT(&others_) > 0;
#endif
  }
  // No restriction: a thread starts anywhere.
  static Placement none() { return Placement(false); }
  // Restricts where a thread created with `attr` starts.
  void restrict(pthread_attr_t* attr) const {
#if defined(__linux__)
    if (useful_) pthread_attr_setaffinity_np(attr, sizeof others_, &others_);
#else
    (void)attr;
#endif
  }
  // Called by the started thread: every CPU the process may use, again.
  void release() const {
#if defined(__linux__)
    if (useful_) pthread_setaffinity_np(pthread_self(), sizeof allowed_, &allowed_);
#endif
  }

 private:
  explicit Placement(bool) {}
#if defined(__linux__)
  cpu_set_t allowed_{}, others_{};
#endif
  bool useful_ = false;
};

struct WorkerStart {
  TaskPool* pool;
  size_t own;
  Placement placement;
};

}  // namespace

void* TaskPool::worker_main(void* start) {
  const std::unique_ptr<WorkerStart> s(static_cast<WorkerStart*>(start));
  s->placement.release();
  s->pool->work(s->own);
  return nullptr;
}

size_t TaskPool::usable_cpus() {
#if defined(__linux__)
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) == 0 && CPU_COUNT(&allowed) > 0)
    return static_cast<size_t>(CPU_COUNT(&allowed));
#endif
  return std::max(1u, std::thread::hardware_concurrency());
}

std::unique_ptr<TaskPool> TaskPool::create(size_t threads) {
  if (threads == 0) threads = usable_cpus();
  std::unique_ptr<TaskPool> pool(new TaskPool);
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) return nullptr;
  try {
    pool->ranges_ = std::make_unique<Range[]>(threads);
    pool->workers_.reserve(threads - 1);
    const Placement placement;
    placement.restrict(&attr);
    for (size_t w = 1; w < threads; ++w) {
      auto start = std::make_unique<WorkerStart>(WorkerStart{pool.get(), w, placement});
      pthread_t thread;
      int failed = pthread_create(&thread, &attr, worker_main, start.get());
      if (failed != 0) {  // the placement refused (a CPU set the system will not take): anywhere
        start->placement = Placement::none();
        failed = pthread_create(&thread, nullptr, worker_main, start.get());
      }
      if (failed != 0) {
        pool.reset();  // stops the workers started
        break;
      }
      start.release();  // the worker's now
      pool->workers_.push_back(thread);
    }
  } catch (const std::bad_alloc&) {
    pool.reset();
  }
  pthread_attr_destroy(&attr);
  return pool;
}

TaskPool::~TaskPool() {
  {
    const std::lock_guard<std::mutex> run(run_mutex_);
    const std::lock_guard<std::mutex> join(join_mutex_);
    stop_ = true;
  }
  generation_.fetch_add(1, std::memory_order_seq_cst);
  generation_.notify_all();
  for (pthread_t t : workers_) pthread_join(t, nullptr);
}

void TaskPool::run_inline(size_t count, Body body, const void* context, bool flush_denormals) {
  if (count == 0) return;
  const FlushDenormals flush(flush_denormals);
  body(context, 0, count);
}

void TaskPool::run(size_t count, Body body, const void* context, bool flush_denormals) {
  if (workers_.empty() || count <= 1 || count > UINT32_MAX)
    return run_inline(count, body, context, flush_denormals);
  const std::lock_guard<std::mutex> run(run_mutex_);
  Loop loop{count, body, context, flush_denormals};
  {
    const std::lock_guard<std::mutex> join(join_mutex_);
    loop_ = loop;
    const size_t n = threads();
    for (size_t t = 0; t < n; ++t) {
      const Owned own = owned_range(count, n, t);
      ranges_[t].span.store(uint64_t{own.first} | uint64_t{own.end} << 32, std::memory_order_relaxed);
    }
    open_ = true;
    failure_ = nullptr;
  }
  // Seen by a worker about to sleep, or the worker sees the new generation
  // (both sides use sequentially consistent operations).
  generation_.fetch_add(1, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) != 0) generation_.notify_all();
  run_chunks(loop, 0);
  std::exception_ptr failure;
  {
    // No worker joins after this; those that joined have taken their last
    // chunk or will find none left.
    const std::lock_guard<std::mutex> join(join_mutex_);
    open_ = false;
  }
  for (unsigned spins = 0; active_.load(std::memory_order_acquire) != 0; ++spins) {
    if (spins < 4096)
      relax();
    else
      std::this_thread::yield();  // a worker descheduled inside its chunk
  }
  {
    const std::lock_guard<std::mutex> join(join_mutex_);
    failure = std::exchange(failure_, nullptr);
  }
  if (failure) std::rethrow_exception(failure);
}

namespace {

// A quarter of what is left of a range (at least one item), from its front
// (the owner) or its back (another thread): few atomic operations for many
// small items, and small pieces at the end, so the threads finish together
// when items differ in cost.
bool take(std::atomic<uint64_t>& span, bool front, size_t& begin, size_t& end) {
  uint64_t s = span.load(std::memory_order_relaxed);
  for (;;) {
    const uint64_t first = s & 0xffffffffu, last = s >> 32;
    if (first >= last) return false;
    const uint64_t n = std::max<uint64_t>(1, (last - first) / 4);
    const uint64_t taken = front ? (first + n) | last << 32 : first | (last - n) << 32;
    if (span.compare_exchange_weak(s, taken, std::memory_order_relaxed)) {
      begin = front ? first : last - n;
      end = begin + n;
      return true;
    }
  }
}

}  // namespace

size_t TaskPool::run_chunks(const Loop& loop, size_t own) {
  const FlushDenormals flush(loop.flush_denormals);
  const size_t n = threads();
  size_t ran = 0, begin = 0, end = 0;
  try {
    for (size_t k = 0; k < n; ++k) {
      std::atomic<uint64_t>& span = ranges_[(own + k) % n].span;
      while (take(span, k == 0, begin, end)) {
        loop.body(loop.context, begin, end);
        ran += end - begin;
      }
    }
  } catch (...) {
    // The loop stops: nobody takes more, the first exception reaches the
    // caller once every thread inside has left (run()).
    for (size_t t = 0; t < n; ++t) ranges_[t].span.store(0, std::memory_order_relaxed);
    const std::lock_guard<std::mutex> join(join_mutex_);
    if (!failure_) failure_ = std::current_exception();
  }
  return ran;
}

void TaskPool::wait_for_loop(uint32_t seen) {
  const auto deadline = std::chrono::steady_clock::now() + kSpinBeforeSleep;
  for (unsigned i = 1;; ++i) {
    if (generation_.load(std::memory_order_acquire) != seen) return;
    relax();
    if (i % 256 == 0) {
      if (std::chrono::steady_clock::now() > deadline) break;
      std::this_thread::yield();  // to the caller, where the two share a core
    }
  }
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
  while (generation_.load(std::memory_order_seq_cst) == seen)
    generation_.wait(seen, std::memory_order_seq_cst);
  sleepers_.fetch_sub(1, std::memory_order_relaxed);
}

void TaskPool::work(size_t own) {
  // The generation the pool was created with, not the one this thread
  // finds: a loop, or the pool's destruction, may come before it runs.
  uint32_t seen = 0;
  for (;;) {
    wait_for_loop(seen);
    seen = generation_.load(std::memory_order_acquire);
    Loop loop;
    {
      const std::lock_guard<std::mutex> join(join_mutex_);
      if (stop_) return;
      if (!open_ || held_.load(std::memory_order_relaxed)) continue;
      active_.fetch_add(1, std::memory_order_relaxed);
      loop = loop_;
    }
    worker_items_.fetch_add(run_chunks(loop, own), std::memory_order_relaxed);
    active_.fetch_sub(1, std::memory_order_release);
  }
}

namespace {

struct SharedEntry {
  std::unique_ptr<TaskPool> pool;
  size_t references = 0;
};

std::mutex& shared_mutex() {
  static std::mutex mutex;
  return mutex;
}

// Keyed by the requested thread count. Few keys ever exist, so a map is fine.
std::map<size_t, SharedEntry>& shared_pools() {
  static std::map<size_t, SharedEntry> map;
  return map;
}

}  // namespace

SharedTaskPool SharedTaskPool::acquire(size_t threads) {
  std::lock_guard<std::mutex> lock(shared_mutex());
  SharedEntry& entry = shared_pools()[threads];
  if (entry.pool == nullptr) {
    // Its workers start while the caller goes on.
    entry.pool = TaskPool::create(threads);
    if (entry.pool == nullptr) {
      shared_pools().erase(threads);
      return {};
    }
  }
  ++entry.references;
  SharedTaskPool result;
  result.pool_ = entry.pool.get();
  result.key_ = threads;
  return result;
}

SharedTaskPool& SharedTaskPool::operator=(SharedTaskPool&& o) noexcept {
  if (this != &o) {
    release();
    pool_ = o.pool_;
    key_ = o.key_;
    o.pool_ = nullptr;
  }
  return *this;
}

void SharedTaskPool::release() {
  if (pool_ == nullptr) return;
  std::unique_ptr<TaskPool> last;  // joined outside the lock
  {
    std::lock_guard<std::mutex> lock(shared_mutex());
    auto it = shared_pools().find(key_);
    if (it != shared_pools().end() && --it->second.references == 0) {
      last = std::move(it->second.pool);
      shared_pools().erase(it);
    }
  }
  pool_ = nullptr;
}

size_t SharedTaskPool::live_count() {
  std::lock_guard<std::mutex> lock(shared_mutex());
  return shared_pools().size();
}

}  // namespace etc
