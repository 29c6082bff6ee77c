#pragma once
// AlignedBuffer: the runtime's one owning block of raw memory. 64-byte
// aligned (a cache line, and the widest vector load), with optional tail
// padding: bytes past size() that vectorized kernels may read (never write)
// without leaving the allocation. Move-only; frees on destruction.
//
// allocate() never throws: out of memory, or a size that overflows, gives an
// empty buffer (data() null), which callers turn into MemoryAllocationFailed
// naming what they were allocating.
//
// Blocks of kLargeBlock bytes or more (arenas, staging, packed weights) are
// mapped on their own, aligned to kLargeBlock and offered to the kernel for
// transparent huge pages (large_block.h): a first run then takes one page
// fault per 2 MiB instead of 512. Under AddressSanitizer every block comes
// from the allocator, so that overflows stay detected.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <utility>

#include "runtime/core/large_block.h"

namespace etc {

class AlignedBuffer {
 public:
  static constexpr size_t kAlignment = 64;

  AlignedBuffer() = default;
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  AlignedBuffer(AlignedBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)),
        size_(std::exchange(o.size_, 0)),
        mapped_(std::exchange(o.mapped_, 0)) {}
  AlignedBuffer& operator=(AlignedBuffer&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
      mapped_ = std::exchange(o.mapped_, 0);
    }
    return *this;
  }
  ~AlignedBuffer() { release(); }

  // `bytes` usable bytes and `tail_padding` readable ones after them, the
  // whole rounded up to kAlignment (at least one block, so a zero-byte
  // buffer still has a valid address).
  static AlignedBuffer allocate(size_t bytes, size_t tail_padding = 0) noexcept {
    AlignedBuffer b;
    if (bytes > SIZE_MAX - tail_padding - kAlignment) return b;
    size_t total = (bytes + tail_padding + kAlignment - 1) / kAlignment * kAlignment;
    if (total == 0) total = kAlignment;
    if (total >= kLargeBlock && large_blocks_mapped()) {
      b.data_ = static_cast<uint8_t*>(map_large_block(total));
      if (b.data_ != nullptr) b.mapped_ = total;
    } else {
      b.data_ = static_cast<uint8_t*>(std::aligned_alloc(kAlignment, total));
    }
    if (b.data_ != nullptr) b.size_ = bytes;
    return b;
  }

  // Maps every page of the buffer for writing now (populate_for_writing):
  // for a buffer about to be written whole.
  void populate() const noexcept {
    if (data_ != nullptr) populate_for_writing(data_, size_);
  }

  uint8_t* data() const { return data_; }
  template <typename T>
  T* as() const {
    return reinterpret_cast<T*>(data_);
  }
  size_t size() const { return size_; }
  bool empty() const { return data_ == nullptr; }
  explicit operator bool() const { return data_ != nullptr; }

 private:
  void release() noexcept {
    if (mapped_ != 0)
      unmap_large_block(data_, mapped_);
    else
      std::free(data_);
  }

  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t mapped_ = 0;  // bytes mapped by map_large_block, 0 for the allocator's blocks
};

}  // namespace etc
