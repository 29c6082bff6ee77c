#pragma once
// Lifetime-based placement of buffers in one arena: greedy by size, largest
// first, each at the lowest 64-byte-aligned offset that overlaps no placed
// buffer whose lifetime [first, last] meets its own. The compiler plans a
// program's arena with it (compiler/emit/memory_planner.h), the XNNPACK
// backend its delegate's activations.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace etc {

inline constexpr size_t kArenaAlignment = 64;

struct BufferRequest {
  size_t size = 0;    // bytes
  int32_t first = 0;  // step that defines it (-1: before the first step)
  int32_t last = 0;   // last step that reads it (INT32_MAX: lives to the end)
};

struct ArenaPlacement {
  std::vector<size_t> offsets;  // one per request, in bytes
  size_t arena_size = 0;
};

size_t align_to_arena(size_t bytes);

// Ties in size keep the requests' order.
ArenaPlacement place_in_arena(const std::vector<BufferRequest>& requests);

}  // namespace etc
