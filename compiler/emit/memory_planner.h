#pragma once
// Lifetime-based activation placement into one arena.
//
// Steps, in order:
//   1. lifetimes   first definition and last use of each buffer (in step order)
//   2. lower bound the largest sum of bytes live at one step
//   3. placement   greedy by size: largest first, each at the lowest aligned
//                  offset that overlaps no placed buffer whose lifetime it meets

#include <cstddef>
#include <cstdint>
#include <vector>

namespace etc::emit {

inline constexpr size_t kArenaAlignment = 64;

struct BufferRequest {
  size_t size = 0;
  int32_t first = 0;  // step that defines it (-1: before the first step)
  int32_t last = 0;   // last step that reads it (INT32_MAX: lives to the end)
};

struct MemoryPlan {
  std::vector<size_t> offsets;  // one per request
  size_t arena_size = 0;
  size_t lower_bound = 0;
};

MemoryPlan plan_memory(const std::vector<BufferRequest>& requests);

}  // namespace etc::emit
