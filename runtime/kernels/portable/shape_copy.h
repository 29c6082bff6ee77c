#pragma once
// Strided gather-copy shared by the data-movement kernels of the 'shape'
// family (transpose, depth/space reorders, slice, expand, tile).
//
// A plan describes a contiguous output of `dims` whose element at multi-index
// i reads the input element at `base + sum(i[d] * strides[d])` (strides in
// elements, possibly zero or negative). make_copy_plan drops unit dims and
// merges dims that are contiguous in both tensors, so run_copy moves whole
// contiguous runs with memcpy whenever the innermost input stride is 1.

#include <array>
#include <cstddef>
#include <cstdint>

#include "runtime/core/shape.h"
#include "runtime/core/span.h"

namespace etc {

// Twice the max tensor rank: tile views each dim as (repeat, dim).
inline constexpr int kMaxCopyRank = 2 * kMaxRank;

struct CopyPlan {
  int rank = 0;
  std::array<int64_t, kMaxCopyRank> dims{};
  std::array<int64_t, kMaxCopyRank> strides{};
  int64_t base = 0;
  size_t elem_size = 0;
  int64_t numel = 0;
};

// dims.size() == strides.size() <= kMaxCopyRank; the caller guarantees every
// addressed input element is in bounds.
CopyPlan make_copy_plan(Span<const int64_t> dims, Span<const int64_t> strides, int64_t base,
                        size_t elem_size);

// Copies per the plan; in and out must not overlap. No allocation.
void run_copy(const CopyPlan& plan, const void* in, void* out);

}  // namespace etc
