#include "runtime/kernels/portable/shape_copy.h"

#include <cstring>

namespace etc {
namespace {

// One row of n elements of N bytes read with a byte stride (may be 0 or negative).
template <size_t N>
void copy_row(const uint8_t* src, int64_t stride_bytes, uint8_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * N, src + i * stride_bytes, N);
}

void copy_strided_row(const uint8_t* src, int64_t stride, size_t elem_size, uint8_t* dst, int64_t n) {
  const int64_t sb = stride * static_cast<int64_t>(elem_size);
  switch (elem_size) {
    case 1: copy_row<1>(src, sb, dst, n); break;
    case 2: copy_row<2>(src, sb, dst, n); break;
    case 4: copy_row<4>(src, sb, dst, n); break;
    case 8: copy_row<8>(src, sb, dst, n); break;
    default:
      for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * elem_size, src + i * sb, elem_size);
  }
}

}  // namespace

CopyPlan make_copy_plan(Span<const int64_t> dims, Span<const int64_t> strides, int64_t base,
                        size_t elem_size) {
  CopyPlan p;
  p.base = base;
  p.elem_size = elem_size;
  p.numel = 1;
  for (int64_t d : dims) p.numel *= d;
  if (p.numel == 0) return p;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) continue;
    // Dim d continues the previous one when stepping the previous dim skips
    // exactly the span of d: the two walk memory as one dim.
    if (p.rank > 0 && p.strides[p.rank - 1] == strides[d] * dims[d]) {
      p.dims[p.rank - 1] *= dims[d];
      p.strides[p.rank - 1] = strides[d];
      continue;
    }
    p.dims[p.rank] = dims[d];
    p.strides[p.rank] = strides[d];
    ++p.rank;
  }
  return p;
}

void run_copy(const CopyPlan& plan, const void* in, void* out) {
  if (plan.numel == 0) return;
  const size_t es = plan.elem_size;
  const uint8_t* src = static_cast<const uint8_t*>(in) + plan.base * static_cast<int64_t>(es);
  uint8_t* dst = static_cast<uint8_t*>(out);
  if (plan.rank == 0) {
    std::memcpy(dst, src, es);
    return;
  }
  const int r = plan.rank;
  const int64_t inner = plan.dims[r - 1];
  const int64_t inner_stride = plan.strides[r - 1];
  const size_t row_bytes = static_cast<size_t>(inner) * es;
  std::array<int64_t, kMaxCopyRank> counter{};
  int64_t offset = 0;  // input element offset of the current row
  for (int64_t o = 0; o < plan.numel; o += inner) {
    const uint8_t* row = src + offset * static_cast<int64_t>(es);
    if (inner_stride == 1) {
      std::memcpy(dst, row, row_bytes);
    } else {
      copy_strided_row(row, inner_stride, es, dst, inner);
    }
    dst += row_bytes;
    for (int d = r - 2; d >= 0; --d) {
      offset += plan.strides[d];
      if (++counter[d] < plan.dims[d]) break;
      offset -= plan.strides[d] * plan.dims[d];
      counter[d] = 0;
    }
  }
}

}  // namespace etc
