#pragma once
// NCHW <-> NHWC conversion at the partition boundary. Each image is one
// matrix transpose: NCHW holds a C x (H*W) matrix per image, NHWC its
// (H*W) x C transpose. Blocked so that each block reads and writes whole
// cache lines (16x16 with AVX-512, else 4x4 blocks in tiles);
// a large plane is split between the threads of `pool` (none: the caller's
// thread). No allocation; src and dst must not overlap.

#include <pthreadpool.h>

#include <cstddef>

namespace etc::xnnpack {

// dst (cols x rows, row-major) = transpose of src (rows x cols, row-major).
void transpose_plane(const float* src, float* dst, size_t rows, size_t cols, pthreadpool_t pool = nullptr);

// src [n, c, hw] -> dst [n, hw, c].
void nchw_to_nhwc(const float* src, float* dst, size_t n, size_t c, size_t hw, pthreadpool_t pool = nullptr);
// src [n, hw, c] -> dst [n, c, hw].
void nhwc_to_nchw(const float* src, float* dst, size_t n, size_t c, size_t hw, pthreadpool_t pool = nullptr);

}  // namespace etc::xnnpack
