#pragma once
// What the native math nodes' files (native_math.cpp, native_resize.cpp)
// share: a task's context, a blob vector as sizes, and how work is cut into
// tiles for the thread pool.

#include <pthreadpool.h>

#include <algorithm>
#include <cstddef>
#include <vector>

namespace etc::xnnpack::math_tasks {

template <typename V>
std::vector<size_t> sizes(const V* v) {
  std::vector<size_t> out;
  if (v != nullptr)
    for (auto x : *v) out.push_back(static_cast<size_t>(x));
  return out;
}

template <typename Op>
struct Context {
  const Op* op;
  float* const* data;
};

// Splits items into tiles of about `work` elements' effort each.
inline size_t tile_for(size_t item_work, size_t work = 8192) {
  return std::max<size_t>(1, work / std::max<size_t>(1, item_work));
}

// Tiles of `items` such that each thread of `pool` has about eight: a
// thread slowed down finds its work taken over.
inline size_t eight_a_thread(pthreadpool_t pool, size_t items) {
  const size_t pieces = 8 * std::max<size_t>(1, pthreadpool_get_threads_count(pool));
  return std::max<size_t>(1, (items + pieces - 1) / pieces);
}

}  // namespace etc::xnnpack::math_tasks
