#pragma once
// NCHW <-> NHWC conversion at the partition boundary. Each image is one
// matrix transpose: NCHW holds a C x (H*W) matrix per image, NHWC its
// (H*W) x C transpose. Blocked so that both sides are walked in cache-sized
// tiles with contiguous inner loops. No allocation; src and dst must not
// overlap.

#include <cstddef>

namespace etc::xnnpack {

// dst (cols x rows, row-major) = transpose of src (rows x cols, row-major).
void transpose_plane(const float* src, float* dst, size_t rows, size_t cols);

// src [n, c, hw] -> dst [n, hw, c].
void nchw_to_nhwc(const float* src, float* dst, size_t n, size_t c, size_t hw);
// src [n, hw, c] -> dst [n, c, hw].
void nhwc_to_nchw(const float* src, float* dst, size_t n, size_t c, size_t hw);

}  // namespace etc::xnnpack
