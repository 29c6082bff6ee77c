// populate_large_buffers (instance.h): an instance's buffers of 2 MiB or
// more are mapped before its first run, on the delegate's pool, contents
// unchanged; on a pool of one thread they are left to fault in as they are
// written. Residency is checked where the
// buffers are the runtime's own mappings (not under AddressSanitizer, whose
// allocator hands out memory already touched): also built into
// etc_threads_test, which CI runs (under ThreadSanitizer).
#include <sys/mman.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <vector>

#include "runtime/backends/xnnpack/instance.h"
#include "runtime/backends/xnnpack/threadpool.h"
#include "runtime/core/aligned_buffer.h"
#include "runtime/core/large_block.h"

namespace etc {
namespace {

// Pages of the buffer (those wholly inside it) resident now.
size_t resident_pages(const AlignedBuffer& b) {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(b.data()) + page - 1) & ~(page - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(b.data()) + b.size()) & ~(page - 1);
  std::vector<unsigned char> in_core((end - begin) / page);
  REQUIRE(mincore(reinterpret_cast<void*>(begin), end - begin, in_core.data()) == 0);
  size_t resident = 0;
  for (unsigned char c : in_core) resident += c & 1;
  return resident;
}

size_t whole_pages(const AlignedBuffer& b) {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(b.data()) + page - 1) & ~(page - 1);
  return ((reinterpret_cast<uintptr_t>(b.data()) + b.size()) & ~(page - 1)) / page - begin / page;
}

bool kernel_populates() {
#ifdef MADV_POPULATE_WRITE
  void* probe = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  const bool ok = probe != MAP_FAILED && madvise(probe, 4096, MADV_POPULATE_WRITE) == 0;
  if (probe != MAP_FAILED) munmap(probe, 4096);
  return ok;
#else
  return false;
#endif
}

TEST_CASE("xnnpack: an instance's large buffers are mapped ahead on its pool, contents unchanged",
          "[xnnpack]") {
  std::vector<AlignedBuffer> buffers;
  buffers.push_back(AlignedBuffer::allocate(size_t{6} << 20));          // large, fresh
  buffers.push_back(AlignedBuffer::allocate((size_t{5} << 20) + 100));  // large, partly written already
  for (const AlignedBuffer& b : buffers) REQUIRE(b);
  std::memset(buffers[1].data(), 0x5a, 4096);
  // Read back after: buffer 1 sampled now (reading buffer 0 would map its
  // pages), buffer 0 zeros where the runtime mapped it.
  std::vector<uint8_t> before;
  for (size_t i = 4096; i < buffers[1].size(); i += 4093) before.push_back(buffers[1].data()[i]);
  const bool own_mappings = large_blocks_mapped();
  if (own_mappings) REQUIRE(resident_pages(buffers[0]) == 0);

  SECTION("one thread: left to the run") {
    Result<xnnpack::SharedThreadpool> pool = xnnpack::SharedThreadpool::acquire(1);
    REQUIRE(pool.ok());
    xnnpack::populate_large_buffers(buffers, pool->get());
    if (own_mappings) CHECK(resident_pages(buffers[0]) == 0);
  }
  SECTION("two threads") {
    Result<xnnpack::SharedThreadpool> pool = xnnpack::SharedThreadpool::acquire(2);
    REQUIRE(pool.ok());
    xnnpack::populate_large_buffers(buffers, pool->get());
    if (own_mappings && kernel_populates()) {
      CHECK(resident_pages(buffers[0]) == whole_pages(buffers[0]));
      CHECK(resident_pages(buffers[1]) == whole_pages(buffers[1]));
    }
  }
  for (size_t i = 0; i < 4096; ++i) REQUIRE(buffers[1].data()[i] == 0x5a);
  for (size_t i = 4096, k = 0; i < buffers[1].size(); i += 4093, ++k)
    REQUIRE(buffers[1].data()[i] == before[k]);
  if (own_mappings)
    for (size_t i = 0; i < buffers[0].size(); i += 4093) REQUIRE(buffers[0].data()[i] == 0);
}

}  // namespace
}  // namespace etc
