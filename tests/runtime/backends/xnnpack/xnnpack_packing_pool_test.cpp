// XNNPACK's allocations while a delegate's runtimes are created come from
// the instance's pool (packing_pool.h): aligned requests from the pool active
// on the thread, bump-allocated and aligned, the rest and what does not fit
// from the C library; pool memory is released with the pool, not one
// allocation at a time. A delegate whose XNNPACK weights take a pool runs
// as XNNPACK alone does, and can be destroyed and created again.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "runtime/backends/xnnpack/packing_pool.h"
#include "tests/support/native_conv_fixtures.h"
#include "tests/support/xnnpack_blob_builder.h"

namespace etc {
namespace {

using namespace testing::native_conv;
using xnnpack::PackingPool;

bool aligned_to(const void* p, uintptr_t alignment) {
  return reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

TEST_CASE("xnnpack packing pool hands out aligned room until it is full", "[xnnpack]") {
  PackingPool none(0);
  CHECK(none.capacity() == 0);
  CHECK(none.take(64, 16) == nullptr);

  PackingPool pool(size_t{3} << 20);
  REQUIRE(pool.capacity() == size_t{3} << 20);
  void* a = pool.take(64, 100);
  void* b = pool.take(16, 10);
  void* c = pool.take(64, 1);
  REQUIRE(a != nullptr);
  REQUIRE(b != nullptr);
  REQUIRE(c != nullptr);
  CHECK(aligned_to(a, 64));
  CHECK(aligned_to(b, 16));
  CHECK(aligned_to(c, 64));
  CHECK(static_cast<char*>(b) >= static_cast<char*>(a) + 100);
  CHECK(static_cast<char*>(c) >= static_cast<char*>(b) + 10);
  CHECK(pool.owns(a));
  CHECK(pool.owns(c));
  CHECK_FALSE(pool.owns(&pool));
  CHECK(pool.used() == 129);                         // a [0, 100), b [112, 122), c [128, 129)
  CHECK(pool.take(64, pool.capacity()) == nullptr);  // does not fit: left for the C library
  CHECK(pool.take(3, 8) == nullptr);                 // not a power of two
  CHECK(pool.take(128, 8) == nullptr);               // beyond the block's own alignment
  CHECK(pool.used() == 129);                         // a [0, 100), b [112, 122), c [128, 129)
}

TEST_CASE("xnnpack packing pool hands disjoint room to threads taking at once", "[xnnpack]") {
  // A delegate's stages are created on its thread pool, each thread with the
  // instance's pool active: two threads, 2000 allocations each, every byte
  // of every allocation written with its thread's mark, then checked.
  PackingPool pool(size_t{4} << 20);
  REQUIRE(pool.capacity() == size_t{4} << 20);
  constexpr int kTakes = 2000;
  std::vector<std::vector<unsigned char*>> taken(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      const PackingPool::Scope scope(pool);
      for (int i = 0; i < kTakes; ++i) {
        auto* p = static_cast<unsigned char*>(
            xnnpack::packing_allocator()->aligned_allocate(nullptr, 64, 100 + static_cast<size_t>(i % 7)));
        if (p != nullptr) std::memset(p, t + 1, 100 + static_cast<size_t>(i % 7));
        taken[t].push_back(p);
      }
    });
  for (std::thread& thread : threads) thread.join();
  size_t wrong = 0, outside = 0;
  for (int t = 0; t < 2; ++t)
    for (int i = 0; i < kTakes; ++i) {
      unsigned char* p = taken[t][i];
      REQUIRE(p != nullptr);
      if (!pool.owns(p) || !aligned_to(p, 64)) ++outside;
      for (size_t k = 0; k < 100 + static_cast<size_t>(i % 7); ++k) wrong += p[k] != t + 1;
    }
  CHECK(outside == 0);
  CHECK(wrong == 0);  // no two allocations overlap
  CHECK(pool.used() >= 2 * kTakes * 100);
}

TEST_CASE("xnnpack packing allocator serves the active pool, then the C library", "[xnnpack]") {
  const xnn_allocator& xa = *xnnpack::packing_allocator();
  PackingPool outer(size_t{2} << 20), inner(size_t{2} << 20);
  void* from_library = xa.aligned_allocate(xa.context, 64, 256);
  REQUIRE(from_library != nullptr);
  CHECK_FALSE(outer.owns(from_library));
  {
    const PackingPool::Scope scope(outer);
    void* p = xa.aligned_allocate(xa.context, 64, 1000);
    CHECK(outer.owns(p));
    {
      const PackingPool::Scope nested(inner);
      CHECK(inner.owns(xa.aligned_allocate(xa.context, 32, 64)));
    }
    CHECK(outer.owns(xa.aligned_allocate(xa.context, 64, 64)));  // the outer pool again
    // Too large for the pool: from the C library, and freed there.
    void* big = xa.aligned_allocate(xa.context, 64, size_t{4} << 20);
    REQUIRE(big != nullptr);
    CHECK_FALSE(outer.owns(big));
    xa.aligned_deallocate(xa.context, big);
    const size_t used = outer.used();
    xa.aligned_deallocate(xa.context, p);  // pool memory: released with the pool
    CHECK(outer.used() == used);
  }
  void* after = xa.aligned_allocate(xa.context, 64, 64);  // no pool active
  CHECK_FALSE(outer.owns(after));
  xa.aligned_deallocate(xa.context, after);
  xa.aligned_deallocate(xa.context, from_library);
  xa.aligned_deallocate(xa.context, nullptr);
}

TEST_CASE("xnnpack delegate whose XNNPACK weights take a pool runs as XNNPACK computes", "[xnnpack]") {
  // A 3x3 256->256 convolution left to XNNPACK: 2.4 MB of weights to pack.
  const Geometry g{.h = 6, .w = 5, .c = 256, .o = 256, .kh = 3, .kw = 3, .pad = {1, 1, 1, 1}};
  const ConvData d = random_data(g, 91);
  const std::vector<uint8_t> blob = conv_blob(g, d);
  {
    auto view = xnnpack::read_xnnpack_blob(blob.data(), blob.size());
    REQUIRE(view.ok());
    CHECK(xnnpack::packing_pool_bytes(view.get(), {false}) >= g.filter_numel() * sizeof(float));
    CHECK(xnnpack::packing_pool_bytes(view.get(), {true}) ==
          0);  // the kernel's own: nothing packed by XNNPACK
  }
  const std::vector<float> want = reference(g, d.x, d.filter, d.bias);
  for (int round = 0; round < 2; ++round)  // destroyed, then created again
    for (int threads : {1, 2}) {
      INFO("round " << round << ", " << threads << " thread(s)");
      CHECK(count_far(run_conv(g, d, kOff, threads), want, 1e-4) == 0);
    }
}

}  // namespace
}  // namespace etc
