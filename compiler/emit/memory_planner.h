#pragma once
// Lifetime-based activation placement into one arena.
//
// Steps, in order:
//   1. lifetimes   first definition and last use of each buffer (in step order)
//   2. lower bound the largest sum of bytes live at one step
//   3. placement   runtime/core/arena_plan.h (greedy by size)

#include <cstddef>
#include <cstdint>
#include <vector>

#include "runtime/core/arena_plan.h"

namespace etc::emit {

using etc::BufferRequest;
using etc::kArenaAlignment;

struct MemoryPlan {
  std::vector<size_t> offsets;  // one per request
  size_t arena_size = 0;
  size_t lower_bound = 0;
};

MemoryPlan plan_memory(const std::vector<BufferRequest>& requests);

}  // namespace etc::emit
