#pragma once
// MemoryAllocator: a bump allocator over a caller-owned buffer. allocate()
// never touches the heap; reset() releases everything at once. The buffer
// must outlive the allocator.

#include <cstddef>
#include <cstdint>

namespace etc {

class MemoryAllocator {
 public:
  MemoryAllocator() = default;
  MemoryAllocator(void* base, size_t size) : base_(static_cast<uint8_t*>(base)), size_(size) {}

  // nullptr when `size` bytes (at `alignment`, a power of two) do not fit.
  void* allocate(size_t size, size_t alignment = alignof(std::max_align_t)) {
    const uintptr_t start = reinterpret_cast<uintptr_t>(base_) + used_;
    const uintptr_t aligned = (start + alignment - 1) & ~(uintptr_t{alignment} - 1);
    const size_t padding = aligned - start;
    if (base_ == nullptr || padding > size_ - used_ || size > size_ - used_ - padding) return nullptr;
    used_ += padding + size;
    return reinterpret_cast<void*>(aligned);
  }
  void reset() { used_ = 0; }
  size_t used() const { return used_; }
  size_t capacity() const { return size_; }

 private:
  uint8_t* base_ = nullptr;
  size_t size_ = 0;
  size_t used_ = 0;
};

}  // namespace etc
