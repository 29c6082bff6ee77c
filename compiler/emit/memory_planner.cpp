#include "compiler/emit/memory_planner.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace etc::emit {
namespace {

size_t align_up(size_t n) { return (n + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment; }

bool overlap_in_time(const BufferRequest& a, const BufferRequest& b) {
  return a.first <= b.last && b.first <= a.last;
}

size_t lower_bound_of(const std::vector<BufferRequest>& requests) {
  // Sweep over step boundaries: +size at first, -size after last.
  std::map<int64_t, int64_t> delta;
  for (const BufferRequest& r : requests) {
    delta[r.first] += static_cast<int64_t>(align_up(r.size));
    delta[static_cast<int64_t>(r.last) + 1] -= static_cast<int64_t>(align_up(r.size));
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
  plan.offsets.assign(requests.size(), 0);
  plan.lower_bound = lower_bound_of(requests);

  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return requests[a].size > requests[b].size; });
  std::vector<size_t> placed;
  for (size_t i : order) {
    const BufferRequest& r = requests[i];
    const size_t size = align_up(r.size);
    // Placed buffers alive at the same time, by offset.
    std::vector<std::pair<size_t, size_t>> busy;
    for (size_t j : placed)
      if (overlap_in_time(r, requests[j])) busy.emplace_back(plan.offsets[j], align_up(requests[j].size));
    std::sort(busy.begin(), busy.end());
    size_t offset = 0;
    for (const auto& [start, len] : busy) {
      if (offset + size <= start) break;
      offset = std::max(offset, start + len);
    }
    plan.offsets[i] = offset;
    plan.arena_size = std::max(plan.arena_size, offset + size);
    placed.push_back(i);
  }
  return plan;
}

}  // namespace etc::emit
