#include "runtime/core/large_block.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

namespace etc {
namespace {

size_t round_up(size_t bytes) { return (bytes + kLargeBlock - 1) / kLargeBlock * kLargeBlock; }

}  // namespace

bool large_blocks_mapped() {
#if defined(__SANITIZE_ADDRESS__)
  return false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return false;
#else
  return true;
#endif
#else
  return true;
#endif
}

void* map_large_block(size_t bytes) noexcept {
  const size_t length = round_up(bytes);
  if (length < bytes || length + kLargeBlock < length) return nullptr;
  // Over-map by one huge page, then trim both ends to the aligned block.
  void* raw =
      ::mmap(nullptr, length + kLargeBlock, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const auto start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + kLargeBlock - 1) / kLargeBlock * kLargeBlock;
  if (aligned > start) ::munmap(raw, aligned - start);
  const uintptr_t end = start + length + kLargeBlock;
  if (end > aligned + length) ::munmap(reinterpret_cast<void*>(aligned + length), end - (aligned + length));
#ifdef MADV_HUGEPAGE
  ::madvise(reinterpret_cast<void*>(aligned), length, MADV_HUGEPAGE);  // advice: failure changes nothing
#endif
  return reinterpret_cast<void*>(aligned);
}

void populate_for_writing(void* data, size_t bytes) noexcept {
#ifdef MADV_POPULATE_WRITE
  static const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = (reinterpret_cast<uintptr_t>(data) + page - 1) & ~(page - 1);
  const auto end = (reinterpret_cast<uintptr_t>(data) + bytes) & ~(page - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);  // advice
#else
  (void)data, (void)bytes;
#endif
}

void unmap_large_block(void* block, size_t bytes) noexcept {
  if (block != nullptr) ::munmap(block, round_up(bytes));
}

}  // namespace etc
