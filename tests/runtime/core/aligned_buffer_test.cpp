// AlignedBuffer: small blocks from the allocator, large ones mapped on their
// own at a 2 MiB boundary (runtime/core/large_block.h).
#include "runtime/core/aligned_buffer.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>

#include "runtime/core/large_block.h"

namespace {

uintptr_t address(const void* p) { return reinterpret_cast<uintptr_t>(p); }

}  // namespace

TEST_CASE("a small buffer is 64-byte aligned with its tail padding usable", "[aligned_buffer]") {
  etc::AlignedBuffer b = etc::AlignedBuffer::allocate(100, 64);
  REQUIRE(b);
  CHECK(b.size() == 100);
  CHECK(address(b.data()) % etc::AlignedBuffer::kAlignment == 0);
  std::memset(b.data(), 0x5a, 164);  // size and tail padding
  CHECK(b.data()[163] == 0x5a);
}

TEST_CASE("a large buffer is usable to its end, and moves without copying", "[aligned_buffer]") {
  const size_t bytes = 5 * etc::kLargeBlock + 12345;
  etc::AlignedBuffer b = etc::AlignedBuffer::allocate(bytes, 64);
  REQUIRE(b);
  CHECK(b.size() == bytes);
  CHECK(address(b.data()) % etc::AlignedBuffer::kAlignment == 0);
  if (etc::large_blocks_mapped()) CHECK(address(b.data()) % etc::kLargeBlock == 0);
  b.data()[0] = 1;
  b.data()[bytes + 63] = 2;  // the last byte of the tail padding
  const uint8_t* where = b.data();
  etc::AlignedBuffer moved = std::move(b);
  CHECK(moved.data() == where);
  CHECK(moved.size() == bytes);
  CHECK(b.empty());
  CHECK(moved.data()[bytes + 63] == 2);
  moved = etc::AlignedBuffer::allocate(etc::kLargeBlock);  // frees the first block
  REQUIRE(moved);
  CHECK(moved.size() == etc::kLargeBlock);
}

TEST_CASE("a size that overflows gives an empty buffer", "[aligned_buffer]") {
  CHECK(etc::AlignedBuffer::allocate(SIZE_MAX - 10, 64).empty());
  // A size the mapping cannot round up to whole huge pages. (Under
  // AddressSanitizer the allocator would be asked, and it aborts on sizes
  // this large rather than return null.)
  if (etc::large_blocks_mapped()) CHECK(etc::AlignedBuffer::allocate(SIZE_MAX - etc::kLargeBlock).empty());
}

TEST_CASE("map_large_block gives zeroed memory on a 2 MiB boundary", "[aligned_buffer]") {
  const size_t bytes = 3 * etc::kLargeBlock + 64;
  auto* p = static_cast<uint8_t*>(etc::map_large_block(bytes));
  REQUIRE(p != nullptr);
  CHECK(address(p) % etc::kLargeBlock == 0);
  bool zero = true;
  for (size_t i = 0; i < bytes; i += 4096) zero = zero && p[i] == 0;
  CHECK(zero);
  CHECK(p[bytes - 1] == 0);
  std::memset(p, 7, bytes);
  CHECK(p[bytes - 1] == 7);
  etc::unmap_large_block(p, bytes);
  CHECK(etc::map_large_block(SIZE_MAX - 100) == nullptr);
}

TEST_CASE("populating a buffer's pages keeps what it holds", "[aligned_buffer]") {
  // Sizes below a page, across pages, and a large (mapped) block; what is
  // written before stays, and the pages take writes after.
  for (size_t bytes : {size_t{100}, size_t{3 * 4096 + 200}, size_t{300} << 10, etc::kLargeBlock + 64}) {
    INFO("bytes " << bytes);
    etc::AlignedBuffer b = etc::AlignedBuffer::allocate(bytes);
    REQUIRE(b);
    for (size_t i = 0; i < bytes; ++i) b.data()[i] = static_cast<uint8_t>(i * 7 + 3);
    b.populate();
    bool same = true;
    for (size_t i = 0; i < bytes; ++i) same = same && b.data()[i] == static_cast<uint8_t>(i * 7 + 3);
    CHECK(same);
    std::memset(b.data(), 9, bytes);
    CHECK(b.data()[bytes - 1] == 9);
  }
  etc::AlignedBuffer().populate();  // an empty buffer: nothing to do
}
