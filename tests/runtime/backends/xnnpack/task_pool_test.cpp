// The XNNPACK backend's thread pool (task_pool.h) and the pthreadpool
// interface it serves (pthreadpool_abi.cpp): every loop shape covers its grid
// exactly once with pthreadpool's tile sizes, on the caller alone and with
// workers; a loop finishes without workers that are not awake; workers do
// take part; loops from several threads at once; denormals flushed on
// request. Also built into etc_threads_test, which CI runs under
// ThreadSanitizer.
#include "runtime/core/task_pool.h"

#include <pthreadpool.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <vector>

#include "runtime/backends/xnnpack/threadpool.h"

namespace etc {
namespace {

// Counts, for every point of a grid of up to six dimensions, how many items
// covered it; an item is wrong when a tile does not start on a tile boundary
// or its size is not min(tile, range - start).
struct Coverage {
  std::vector<size_t> range, tile;  // tile 0: untiled
  std::vector<std::atomic<int>> hits;
  std::atomic<int> bad{0};
  uint32_t uarch = 0;
  std::atomic<int> bad_uarch{0};

  Coverage(std::vector<size_t> r, std::vector<size_t> t) : range(std::move(r)), tile(std::move(t)) {
    hits = std::vector<std::atomic<int>>(
        std::accumulate(range.begin(), range.end(), size_t{1}, std::multiplies<>()));
  }
  // `start` per dimension, `size` per tiled dimension (in order).
  void visit(const std::vector<size_t>& start, const std::vector<size_t>& size) {
    std::vector<size_t> extent(range.size(), 1);
    size_t s = 0;
    for (size_t d = 0; d < range.size(); ++d) {
      if (start[d] >= range[d]) return void(++bad);
      if (tile[d] == 0) continue;
      if (start[d] % tile[d] != 0 || size[s] != std::min(tile[d], range[d] - start[d])) return void(++bad);
      extent[d] = size[s++];
    }
    std::vector<size_t> at(range.size(), 0);
    for (;;) {
      size_t flat = 0;
      for (size_t d = 0; d < range.size(); ++d) flat = flat * range[d] + start[d] + at[d];
      ++hits[flat];
      size_t d = range.size();
      while (d-- > 0) {
        if (++at[d] < extent[d]) break;
        at[d] = 0;
      }
      if (d == static_cast<size_t>(-1)) return;
    }
  }
  bool each_point_once() const {
    for (const auto& h : hits)
      if (h.load() != 1) return false;
    return bad.load() == 0 && bad_uarch.load() == 0;
  }
};

Coverage& cov(void* c) { return *static_cast<Coverage*>(c); }

void check_every_loop_shape(pthreadpool_t pool) {
  SECTION("1d") {
    Coverage c({37}, {0});
    pthreadpool_parallelize_1d(
        pool, [](void* p, size_t i) { cov(p).visit({i}, {}); }, &c, 37, 0);
    CHECK(c.each_point_once());
  }
  SECTION("1d with uarch") {
    Coverage c({37}, {0});
    c.uarch = 3;
    pthreadpool_parallelize_1d_with_uarch(
        pool,
        [](void* p, uint32_t u, size_t i) {
          if (u != cov(p).uarch) ++cov(p).bad_uarch;
          cov(p).visit({i}, {});
        },
        &c, 3, 5, 37, 0);
    CHECK(c.each_point_once());
  }
  SECTION("1d tile 1d") {
    Coverage c({103}, {8});
    pthreadpool_parallelize_1d_tile_1d(
        pool, [](void* p, size_t i, size_t n) { cov(p).visit({i}, {n}); }, &c, 103, 8, 0);
    CHECK(c.each_point_once());
  }
  SECTION("2d") {
    Coverage c({5, 7}, {0, 0});
    pthreadpool_parallelize_2d(
        pool,
        [](void* p, size_t i, size_t j) {
          cov(p).visit({i, j}, {});
        },
        &c, 5, 7, 0);
    CHECK(c.each_point_once());
  }
  SECTION("2d tile 1d") {
    Coverage c({5, 19}, {0, 4});
    pthreadpool_parallelize_2d_tile_1d(
        pool,
        [](void* p, size_t i, size_t j, size_t nj) {
          cov(p).visit({i, j}, {nj});
        },
        &c, 5, 19, 4, 0);
    CHECK(c.each_point_once());
  }
  SECTION("2d tile 2d") {
    Coverage c({23, 19}, {5, 4});
    pthreadpool_parallelize_2d_tile_2d(
        pool,
        [](void* p, size_t i, size_t j, size_t ni, size_t nj) {
          cov(p).visit({i, j}, {ni, nj});
        },
        &c, 23, 19, 5, 4, 0);
    CHECK(c.each_point_once());
  }
  SECTION("2d tile 2d with uarch") {
    Coverage c({23, 19}, {5, 4});
    c.uarch = 1;
    pthreadpool_parallelize_2d_tile_2d_with_uarch(
        pool,
        [](void* p, uint32_t u, size_t i, size_t j, size_t ni, size_t nj) {
          if (u != cov(p).uarch) ++cov(p).bad_uarch;
          cov(p).visit({i, j}, {ni, nj});
        },
        &c, 1, 2, 23, 19, 5, 4, 0);
    CHECK(c.each_point_once());
  }
  SECTION("3d, tiled 0, 1 and 2") {
    Coverage a({3, 4, 5}, {0, 0, 0}), b({3, 4, 11}, {0, 0, 3}), d({3, 9, 11}, {0, 2, 3});
    pthreadpool_parallelize_3d(
        pool,
        [](void* p, size_t i, size_t j, size_t k) {
          cov(p).visit({i, j, k}, {});
        },
        &a, 3, 4, 5, 0);
    pthreadpool_parallelize_3d_tile_1d(
        pool,
        [](void* p, size_t i, size_t j, size_t k, size_t nk) {
          cov(p).visit({i, j, k}, {nk});
        },
        &b, 3, 4, 11, 3, 0);
    pthreadpool_parallelize_3d_tile_2d(
        pool,
        [](void* p, size_t i, size_t j, size_t k, size_t nj, size_t nk) {
          cov(p).visit({i, j, k}, {nj, nk});
        },
        &d, 3, 9, 11, 2, 3, 0);
    CHECK(a.each_point_once());
    CHECK(b.each_point_once());
    CHECK(d.each_point_once());
  }
  SECTION("4d, tiled 0, 1 and 2") {
    Coverage a({2, 3, 4, 5}, {0, 0, 0, 0}), b({2, 3, 4, 7}, {0, 0, 0, 3}), d({2, 3, 7, 9}, {0, 0, 2, 4});
    pthreadpool_parallelize_4d(
        pool,
        [](void* p, size_t i, size_t j, size_t k, size_t l) {
          cov(p).visit({i, j, k, l}, {});
        },
        &a, 2, 3, 4, 5, 0);
    pthreadpool_parallelize_4d_tile_1d(
        pool,
        [](void* p, size_t i, size_t j, size_t k, size_t l, size_t nl) {
          cov(p).visit({i, j, k, l}, {nl});
        },
        &b, 2, 3, 4, 7, 3, 0);
    pthreadpool_parallelize_4d_tile_2d(
        pool,
        [](void* p, size_t i, size_t j, size_t k, size_t l, size_t nk, size_t nl) {
          cov(p).visit({i, j, k, l}, {nk, nl});
        },
        &d, 2, 3, 7, 9, 2, 4, 0);
    CHECK(a.each_point_once());
    CHECK(b.each_point_once());
    CHECK(d.each_point_once());
  }
  SECTION("5d and 6d, tiled 0, 1 and 2") {
    Coverage a({2, 2, 3, 2, 3}, {0, 0, 0, 0, 0}), b({2, 2, 3, 2, 5}, {0, 0, 0, 0, 2}),
        d({2, 2, 3, 5, 5}, {0, 0, 0, 2, 3});
    Coverage e({2, 1, 2, 3, 2, 3}, {0, 0, 0, 0, 0, 0}), f({2, 1, 2, 3, 2, 5}, {0, 0, 0, 0, 0, 4}),
        g({2, 1, 2, 3, 5, 5}, {0, 0, 0, 0, 4, 2});
    pthreadpool_parallelize_5d(
        pool,
        [](void* p, size_t i, size_t j, size_t k, size_t l, size_t m) {
          cov(p).visit({i, j, k, l, m}, {});
        },
        &a, 2, 2, 3, 2, 3, 0);
    pthreadpool_parallelize_5d_tile_1d(
        pool,
        [](void* p, size_t i, size_t j, size_t k, size_t l, size_t m, size_t nm) {
          cov(p).visit({i, j, k, l, m}, {nm});
        },
        &b, 2, 2, 3, 2, 5, 2, 0);
    pthreadpool_parallelize_5d_tile_2d(
        pool,
        [](void* p, size_t i, size_t j, size_t k, size_t l, size_t m, size_t nl, size_t nm) {
          cov(p).visit({i, j, k, l, m}, {nl, nm});
        },
        &d, 2, 2, 3, 5, 5, 2, 3, 0);
    pthreadpool_parallelize_6d(
        pool,
        [](void* p, size_t i, size_t j, size_t k, size_t l, size_t m, size_t n) {
          cov(p).visit({i, j, k, l, m, n}, {});
        },
        &e, 2, 1, 2, 3, 2, 3, 0);
    pthreadpool_parallelize_6d_tile_1d(
        pool,
        [](void* p, size_t i, size_t j, size_t k, size_t l, size_t m, size_t n, size_t nn) {
          cov(p).visit({i, j, k, l, m, n}, {nn});
        },
        &f, 2, 1, 2, 3, 2, 5, 4, 0);
    pthreadpool_parallelize_6d_tile_2d(
        pool,
        [](void* p, size_t i, size_t j, size_t k, size_t l, size_t m, size_t n, size_t nm, size_t nn) {
          cov(p).visit({i, j, k, l, m, n}, {nm, nn});
        },
        &g, 2, 1, 2, 3, 5, 5, 4, 2, 0);
    for (Coverage* c : {&a, &b, &d, &e, &f, &g}) CHECK(c->each_point_once());
  }
  SECTION("a tile larger than its range, and a tile of 0 (taken as 1)") {
    Coverage big({5, 3}, {0, 8}), zero({4}, {1});
    pthreadpool_parallelize_2d_tile_1d(
        pool,
        [](void* p, size_t i, size_t j, size_t nj) {
          cov(p).visit({i, j}, {nj});
        },
        &big, 5, 3, 8, 0);
    pthreadpool_parallelize_1d_tile_1d(
        pool, [](void* p, size_t i, size_t n) { cov(p).visit({i}, {n}); }, &zero, 4, 0, 0);
    CHECK(big.each_point_once());
    CHECK(zero.each_point_once());
  }
  SECTION("an empty range runs nothing") {
    Coverage c({0, 4}, {0, 2});
    pthreadpool_parallelize_2d_tile_1d(
        pool, [](void* p, size_t, size_t, size_t) { ++cov(p).bad; }, &c, 0, 4, 2, 0);
    CHECK(c.bad.load() == 0);
  }
}

TEST_CASE("pthreadpool_abi: every loop shape covers its grid once, on the caller alone",
          "[xnnpack][threads]") {
  CHECK(pthreadpool_get_threads_count(nullptr) == 1);
  check_every_loop_shape(nullptr);
}

TEST_CASE("pthreadpool_abi: every loop shape covers its grid once, on a pool of 3", "[xnnpack][threads]") {
  pthreadpool_t pool = pthreadpool_create(3);
  REQUIRE(pool != nullptr);
  CHECK(pthreadpool_get_threads_count(pool) == 3);
  check_every_loop_shape(pool);
  pthreadpool_destroy(pool);
}

TEST_CASE("pthreadpool_abi: XNNPACK's pthreadpool calls reach the backend's pool", "[xnnpack][threads]") {
  CHECK(xnnpack::task_pool_serves_pthreadpool());
}

void add_items(const void* context, size_t begin, size_t end) {
  auto& sums = *static_cast<std::vector<std::atomic<size_t>>*>(const_cast<void*>(context));
  for (size_t i = begin; i < end; ++i) sums[i] += i + 1;
}

TEST_CASE("TaskPool: a loop finishes on the caller while the workers are not awake", "[xnnpack][threads]") {
  std::unique_ptr<TaskPool> pool = TaskPool::create(2);
  REQUIRE(pool != nullptr);
  REQUIRE(pool->threads() == 2);
  pool->hold_workers(true);
  std::vector<std::atomic<size_t>> sums(10000);
  for (int round = 0; round < 50; ++round) pool->run(sums.size(), add_items, &sums, false);
  CHECK(pool->items_run_by_workers() == 0);
  for (size_t i = 0; i < sums.size(); ++i) REQUIRE(sums[i].load() == 50 * (i + 1));
}

TEST_CASE("TaskPool: awake workers take part in loops", "[xnnpack][threads]") {
  std::unique_ptr<TaskPool> pool = TaskPool::create(2);
  REQUIRE(pool != nullptr);
  // Items that take a while, so that a worker woken by the loop finds some
  // left; bounded by wall time, not by a count that a slow machine might miss.
  const auto slow = [](const void*, size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) std::this_thread::sleep_for(std::chrono::microseconds(200));
  };
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (pool->items_run_by_workers() == 0 && std::chrono::steady_clock::now() < give_up)
    pool->run(64, slow, nullptr, false);
  CHECK(pool->items_run_by_workers() > 0);
}

TEST_CASE("TaskPool: loops from several threads at once each run in full", "[xnnpack][threads]") {
  std::unique_ptr<TaskPool> pool = TaskPool::create(3);
  REQUIRE(pool != nullptr);
  constexpr int kCallers = 4, kRounds = 200;
  std::vector<std::vector<std::atomic<size_t>>> sums(kCallers);
  for (auto& s : sums) s = std::vector<std::atomic<size_t>>(997);
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c)
    callers.emplace_back([&, c] {
      for (int r = 0; r < kRounds; ++r) pool->run(sums[c].size(), add_items, &sums[c], false);
    });
  for (std::thread& t : callers) t.join();
  for (const auto& s : sums)
    for (size_t i = 0; i < s.size(); ++i) REQUIRE(s[i].load() == kRounds * (i + 1));
}

TEST_CASE("TaskPool: denormals are flushed inside a loop that asks, and only there", "[xnnpack][threads]") {
  std::unique_ptr<TaskPool> pool = TaskPool::create(2);
  REQUIRE(pool != nullptr);
  struct Products {
    std::vector<std::atomic<int>> flushed = std::vector<std::atomic<int>>(256);
  } p;
  const auto multiply = [](const void* c, size_t begin, size_t end) {
    auto& out = const_cast<Products*>(static_cast<const Products*>(c))->flushed;
    for (size_t i = begin; i < end; ++i) {
      volatile float tiny = 1e-40f;  // a denormal
      const float product = tiny * 2.0f;
      out[i] = product == 0.0f ? 1 : 0;
    }
  };
  pool->run(p.flushed.size(), multiply, &p, true);
  for (const auto& f : p.flushed) CHECK(f.load() == 1);
  pool->run(p.flushed.size(), multiply, &p, false);
  for (const auto& f : p.flushed) CHECK(f.load() == 0);
  volatile float tiny = 1e-40f;
  CHECK(tiny * 2.0f != 0.0f);  // the caller's own setting was restored
}

// Items that take a while, so that a worker woken by the loop finds some
// left; each records whether a worker ran it and whether denormals were
// flushed there.
struct SlowItems {
  std::thread::id caller = std::this_thread::get_id();
  std::vector<std::atomic<int>> by_worker = std::vector<std::atomic<int>>(48);
  std::vector<std::atomic<int>> flushed = std::vector<std::atomic<int>>(48);
};

void slow_item(const void* context, size_t begin, size_t end) {
  auto& s = *const_cast<SlowItems*>(static_cast<const SlowItems*>(context));
  for (size_t i = begin; i < end; ++i) {
    std::this_thread::sleep_for(std::chrono::microseconds(100));
    volatile float tiny = 1e-40f;
    const float product = tiny * 2.0f;
    s.flushed[i] = product == 0.0f ? 1 : 0;
    s.by_worker[i] = std::this_thread::get_id() != s.caller ? 1 : 0;
  }
}

// Runs slow loops until a worker has taken part in one (bounded by wall
// time, not by a count that a slow machine might miss); returns whether
// one did, and leaves that loop's record in `s`.
bool run_until_a_worker_helps(TaskPool& pool, SlowItems& s, bool flush) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < give_up) {
    pool.run(s.by_worker.size(), slow_item, &s, flush);
    for (const auto& w : s.by_worker)
      if (w.load() == 1) return true;
  }
  return false;
}

TEST_CASE("TaskPool: workers that went to sleep wake for later loops", "[xnnpack][threads]") {
  std::unique_ptr<TaskPool> pool = TaskPool::create(2);
  REQUIRE(pool != nullptr);
  for (int cycle = 0; cycle < 3; ++cycle) {
    // Longer than a worker spins before it sleeps.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    SlowItems s;
    CHECK(run_until_a_worker_helps(*pool, s, false));
  }
}

TEST_CASE("TaskPool: a worker flushes denormals in a loop that asks", "[xnnpack][threads]") {
  std::unique_ptr<TaskPool> pool = TaskPool::create(2);
  REQUIRE(pool != nullptr);
  SlowItems s;
  REQUIRE(run_until_a_worker_helps(*pool, s, true));
  for (size_t i = 0; i < s.flushed.size(); ++i) CHECK(s.flushed[i].load() == 1);
}

TEST_CASE("TaskPool: loops of different bodies in turn each run their own items", "[xnnpack][threads]") {
  std::unique_ptr<TaskPool> pool = TaskPool::create(3);
  REQUIRE(pool != nullptr);
  std::vector<std::atomic<size_t>> a(61), b(7);
  const auto twice = [](const void* context, size_t begin, size_t end) {
    auto& sums = *static_cast<std::vector<std::atomic<size_t>>*>(const_cast<void*>(context));
    for (size_t i = begin; i < end; ++i) sums[i] += 2;
  };
  for (int round = 0; round < 500; ++round) {
    pool->run(a.size(), add_items, &a, false);
    pool->run(b.size(), twice, &b, false);
  }
  for (size_t i = 0; i < a.size(); ++i) REQUIRE(a[i].load() == 500 * (i + 1));
  for (size_t i = 0; i < b.size(); ++i) REQUIRE(b[i].load() == 1000);
}

TEST_CASE("TaskPool: an item's exception reaches the caller after the loop has stopped",
          "[xnnpack][threads]") {
  std::unique_ptr<TaskPool> pool = TaskPool::create(2);
  REQUIRE(pool != nullptr);
  // Items run after the throw (there may be some on the other thread, in
  // flight) still find their context alive: run() returns only once every
  // thread has left. ASan checks that, with the context freed on unwinding.
  struct Context {
    std::atomic<int> ran{0};
  };
  const auto throwing = [](const void* context, size_t begin, size_t end) {
    auto& c = *const_cast<Context*>(static_cast<const Context*>(context));
    for (size_t i = begin; i < end; ++i) {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
      ++c.ran;
      if (i == 3) throw std::runtime_error("item 3");
    }
  };
  for (int round = 0; round < 20; ++round) {
    auto c = std::make_unique<Context>();
    CHECK_THROWS_WITH(pool->run(200, throwing, c.get(), false), "item 3");
    CHECK(c->ran.load() < 200);  // the loop stopped early
  }
  // The pool still runs loops in full afterwards.
  std::vector<std::atomic<size_t>> sums(300);
  pool->run(sums.size(), add_items, &sums, false);
  for (size_t i = 0; i < sums.size(); ++i) REQUIRE(sums[i].load() == i + 1);
}

TEST_CASE("TaskPool: sizes, and pools destroyed before their workers ran", "[xnnpack][threads]") {
  std::unique_ptr<TaskPool> all = TaskPool::create(0);
  REQUIRE(all != nullptr);
  CHECK(all->threads() == TaskPool::usable_cpus());
  std::unique_ptr<TaskPool> one = TaskPool::create(1);
  REQUIRE(one != nullptr);
  CHECK(one->threads() == 1);
  std::vector<std::atomic<size_t>> sums(5);
  one->run(sums.size(), add_items, &sums, false);
  all->run(1, add_items, &sums, false);
  all->run(0, add_items, &sums, false);
  CHECK(sums[0].load() == 2);
  for (size_t i = 1; i < sums.size(); ++i) CHECK(sums[i].load() == i + 1);
  for (int k = 0; k < 100; ++k) CHECK(TaskPool::create(3) != nullptr);  // created and destroyed at once
}

}  // namespace
}  // namespace etc
