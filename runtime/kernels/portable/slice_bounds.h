#pragma once
// ONNX Slice's bounds on one axis, shared by the compiler (constant
// starts/ends, folded at import) and the run-time slice kernel: negative
// start and end count from the end, then clamp as the spec says — [0, dim]
// going forward, [0, dim-1] / [-1, dim-1] going backward. Values are
// saturated first, so INT64_MIN / INT64_MAX (ONNX's "to the end") never
// overflow; a step longer than the axis takes at most one element either
// way, so it saturates too.

#include <algorithm>
#include <cstdint>

namespace etc {

struct SliceBounds {
  int64_t start = 0, end = 0, step = 1;
};

// `step` must not be 0.
inline SliceBounds resolve_slice_bounds(int64_t dim, int64_t start, int64_t end, int64_t step) {
  SliceBounds b;
  b.step = std::clamp<int64_t>(step, -dim - 1, dim + 1);
  b.start = std::clamp<int64_t>(start, -dim - 1, dim + 1);
  b.end = std::clamp<int64_t>(end, -dim - 1, dim + 1);
  if (b.start < 0) b.start += dim;
  if (b.end < 0) b.end += dim;
  if (b.step > 0) {
    b.start = std::min(std::max<int64_t>(b.start, 0), dim);
    b.end = std::min(std::max<int64_t>(b.end, 0), dim);
  } else {
    b.start = std::min(std::max<int64_t>(b.start, 0), dim - 1);
    b.end = std::min(std::max<int64_t>(b.end, -1), dim - 1);
  }
  return b;
}

}  // namespace etc
