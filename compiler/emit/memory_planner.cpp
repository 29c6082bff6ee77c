#include "compiler/emit/memory_planner.h"

#include <algorithm>
#include <map>
#include <utility>

namespace etc::emit {
namespace {

size_t lower_bound_of(const std::vector<BufferRequest>& requests) {
  // Sweep over step boundaries: +size at first, -size after last.
  std::map<int64_t, int64_t> delta;
  for (const BufferRequest& r : requests) {
    delta[r.first] += static_cast<int64_t>(align_to_arena(r.size));
    delta[static_cast<int64_t>(r.last) + 1] -= static_cast<int64_t>(align_to_arena(r.size));
  }
  int64_t live = 0, peak = 0;
  for (const auto& [step, d] : delta) {
    live += d;
    peak = std::max(peak, live);
  }
  return static_cast<size_t>(peak);
}

}  // namespace

MemoryPlan plan_memory(const std::vector<BufferRequest>& requests) {
  MemoryPlan plan;
  plan.lower_bound = lower_bound_of(requests);
  ArenaPlacement placement = place_in_arena(requests);
  plan.offsets = std::move(placement.offsets);
  plan.arena_size = placement.arena_size;
  return plan;
}

}  // namespace etc::emit
