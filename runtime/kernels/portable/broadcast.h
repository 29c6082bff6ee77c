#pragma once
// Numpy-style broadcasting for elementwise kernels with up to three inputs.
// A plan is computed once at init; run() walks the output with per-input
// strides (0 on broadcast dims) and a contiguous innermost loop.

#include <array>
#include <cstdint>

#include "runtime/core/result.h"
#include "runtime/core/shape.h"

namespace etc {

// Output shape of broadcasting a and b, or InvalidShape naming both shapes.
Result<Shape> broadcast_shapes(const Shape& a, const Shape& b);

template <int N>
struct BroadcastPlan {
  Shape out;
  std::array<std::array<int64_t, kMaxRank>, N> strides{};  // element strides per input
  bool all_same = true;  // every input has the output's shape: one flat loop
};

template <int N>
BroadcastPlan<N> make_broadcast_plan(const Shape& out, const std::array<Shape, N>& in) {
  BroadcastPlan<N> plan;
  plan.out = out;
  for (int k = 0; k < N; ++k) {
    if (in[k] != out) plan.all_same = false;
    const int offset = out.rank() - in[k].rank();
    int64_t acc = 1;
    for (int d = out.rank() - 1; d >= 0; --d) {
      const int id = d - offset;
      const int64_t dim = id >= 0 ? in[k][id] : 1;
      plan.strides[k][d] = dim == 1 ? 0 : acc;
      acc *= dim;
    }
  }
  return plan;
}

// Calls f(out_index, idx[0..N-1]) for every output element in row-major order.
template <int N, typename F>
void for_each_broadcast(const BroadcastPlan<N>& plan, F&& f) {
  const Shape& out = plan.out;
  const int64_t total = out.numel();
  if (total == 0) return;
  std::array<int64_t, N> idx{};
  if (plan.all_same || out.rank() == 0) {
    for (int64_t i = 0; i < total; ++i) {
      for (int k = 0; k < N; ++k) idx[k] = plan.all_same ? i : 0;
      f(i, idx);
    }
    return;
  }
  const int r = out.rank();
  const int64_t inner = out[r - 1];
  std::array<int64_t, kMaxRank> counter{};
  std::array<int64_t, N> base{};
  for (int64_t o = 0; o < total; o += inner) {
    for (int64_t j = 0; j < inner; ++j) {
      for (int k = 0; k < N; ++k) idx[k] = base[k] + j * plan.strides[k][r - 1];
      f(o + j, idx);
    }
    // Advance the multi-index over all dims but the innermost.
    for (int d = r - 2; d >= 0; --d) {
      for (int k = 0; k < N; ++k) base[k] += plan.strides[k][d];
      if (++counter[d] < out[d]) break;
      for (int k = 0; k < N; ++k) base[k] -= plan.strides[k][d] * out[d];
      counter[d] = 0;
    }
  }
}

}  // namespace etc
