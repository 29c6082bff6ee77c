#pragma once
// Large blocks of memory mapped on their own: aligned to kLargeBlock (2 MiB,
// the x86-64 and arm64 huge page) and marked MADV_HUGEPAGE, so that where
// the kernel has transparent huge pages (enabled "always" or "madvise") the
// first touch of each 2 MiB maps one huge page: one fault instead of 512.
// A program's first run writes its whole arena, staging and outputs; at
// 4 KiB pages that was ~2.5 µs of fault per page here (lraspp: 11,700
// faults). Elsewhere (no THP, other systems) they are plain mappings.

#include <cstddef>

namespace etc {

inline constexpr size_t kLargeBlock = size_t{2} << 20;

// False under AddressSanitizer (its allocator checks overflows; mappings of
// our own it cannot see).
bool large_blocks_mapped();

// `bytes` (a multiple of 64) mapped readable and writable, zero-filled,
// aligned to kLargeBlock; null when the system refuses.
void* map_large_block(size_t bytes) noexcept;
void unmap_large_block(void* block, size_t bytes) noexcept;

// Maps the whole pages inside [data, data + bytes) for writing now, in one
// call (MADV_POPULATE_WRITE), contents unchanged: for memory about to be
// written whole. A first write takes a page fault per page; on a 2-vCPU
// Firecracker VM ~11 us each, against ~5.5 us a page populated at once
// (1 MiB: 2.8 against 1.4 ms). Where the kernel lacks it (before Linux
// 5.14, other systems) the pages fault in as they are written.
void populate_for_writing(void* data, size_t bytes) noexcept;

}  // namespace etc
