#include "runtime/core/arena_plan.h"

#include <algorithm>
#include <numeric>
#include <utility>

namespace etc {

size_t align_to_arena(size_t bytes) {
  return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

ArenaPlacement place_in_arena(const std::vector<BufferRequest>& requests) {
  ArenaPlacement plan;
  plan.offsets.assign(requests.size(), 0);
  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return requests[a].size > requests[b].size; });
  std::vector<size_t> placed;
  std::vector<std::pair<size_t, size_t>> busy;  // placed buffers alive at the same time: offset, size
  for (size_t i : order) {
    const BufferRequest& r = requests[i];
    const size_t size = align_to_arena(r.size);
    busy.clear();
    for (size_t j : placed)
      if (r.first <= requests[j].last && requests[j].first <= r.last)
        busy.emplace_back(plan.offsets[j], align_to_arena(requests[j].size));
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

}  // namespace etc
