#include "compiler/emit/memory_planner.h"

#include <catch2/catch.hpp>

using etc::emit::BufferRequest;
using etc::emit::plan_memory;

namespace {

bool overlaps(size_t a_off, size_t a_size, size_t b_off, size_t b_size) {
  return a_off < b_off + b_size && b_off < a_off + a_size;
}

}  // namespace

TEST_CASE("buffers with disjoint lifetimes share memory", "[memory_planner]") {
  // a chain: x0 -> x1 -> x2 -> x3, each read only by the next step.
  std::vector<BufferRequest> reqs = {{1024, -1, 0}, {1024, 0, 1}, {1024, 1, 2}, {1024, 2, 3}};
  const auto plan = plan_memory(reqs);
  CHECK(plan.lower_bound == 2048);
  CHECK(plan.arena_size == 2048);
  CHECK(plan.offsets[0] == plan.offsets[2]);
  CHECK(plan.offsets[1] == plan.offsets[3]);
}

TEST_CASE("buffers alive at the same step never overlap", "[memory_planner]") {
  std::vector<BufferRequest> reqs = {{100, -1, 5}, {3000, 0, 2}, {64, 1, 4},
                                     {700, 2, 3},  {50, 3, 5},   {4096, 4, 5}};
  const auto plan = plan_memory(reqs);
  for (size_t i = 0; i < reqs.size(); ++i)
    for (size_t j = i + 1; j < reqs.size(); ++j) {
      const bool same_time = reqs[i].first <= reqs[j].last && reqs[j].first <= reqs[i].last;
      if (same_time) CHECK_FALSE(overlaps(plan.offsets[i], reqs[i].size, plan.offsets[j], reqs[j].size));
    }
  CHECK(plan.arena_size >= plan.lower_bound);
  for (size_t off : plan.offsets) CHECK(off % etc::emit::kArenaAlignment == 0);
}

TEST_CASE("lower bound is the peak of live bytes", "[memory_planner]") {
  std::vector<BufferRequest> reqs = {{64, 0, 0}, {128, 0, 1}, {256, 1, 1}};
  CHECK(plan_memory(reqs).lower_bound == 128 + 256);
}
