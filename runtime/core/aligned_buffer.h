#pragma once
// AlignedBuffer: the runtime's one owning block of raw memory. 64-byte
// aligned (a cache line, and the widest vector load), with optional tail
// padding: bytes past size() that vectorized kernels may read (never write)
// without leaving the allocation. Move-only; frees on destruction.
//
// allocate() never throws: out of memory, or a size that overflows, gives an
// empty buffer (data() null), which callers turn into MemoryAllocationFailed
// naming what they were allocating.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <utility>

namespace etc {

class AlignedBuffer {
 public:
  static constexpr size_t kAlignment = 64;

  AlignedBuffer() = default;
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  AlignedBuffer(AlignedBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  AlignedBuffer& operator=(AlignedBuffer&& o) noexcept {
    if (this != &o) {
      std::free(data_);
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  ~AlignedBuffer() { std::free(data_); }

  // `bytes` usable bytes and `tail_padding` readable ones after them, the
  // whole rounded up to kAlignment (at least one block, so a zero-byte
  // buffer still has a valid address).
  static AlignedBuffer allocate(size_t bytes, size_t tail_padding = 0) noexcept {
    AlignedBuffer b;
    if (bytes > SIZE_MAX - tail_padding - kAlignment) return b;
    size_t total = (bytes + tail_padding + kAlignment - 1) / kAlignment * kAlignment;
    if (total == 0) total = kAlignment;
    b.data_ = static_cast<uint8_t*>(std::aligned_alloc(kAlignment, total));
    if (b.data_ != nullptr) b.size_ = bytes;
    return b;
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
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace etc
