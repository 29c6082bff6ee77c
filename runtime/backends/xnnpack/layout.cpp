#include "runtime/backends/xnnpack/layout.h"

#if defined(__SSE__) || defined(_M_X64)
#include <xmmintrin.h>
#define ETC_XNNPACK_SSE 1
#endif

namespace etc::xnnpack {
namespace {

constexpr size_t kTile = 16;
// Tiles when rows kAliasingStride bytes apart would share cache sets: at most
// kNarrowTile of them at once, each kLongTile long.
constexpr size_t kAliasingStride = 4096;
constexpr size_t kNarrowTile = 8;
constexpr size_t kLongTile = 64;

#ifdef ETC_XNNPACK_SSE
// 4x4 block through registers: four row loads, four column stores.
inline void transpose_4x4(const float* src, size_t src_stride, float* dst, size_t dst_stride) {
  __m128 r0 = _mm_loadu_ps(src);
  __m128 r1 = _mm_loadu_ps(src + src_stride);
  __m128 r2 = _mm_loadu_ps(src + 2 * src_stride);
  __m128 r3 = _mm_loadu_ps(src + 3 * src_stride);
  _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
  _mm_storeu_ps(dst, r0);
  _mm_storeu_ps(dst + dst_stride, r1);
  _mm_storeu_ps(dst + 2 * dst_stride, r2);
  _mm_storeu_ps(dst + 3 * dst_stride, r3);
}
#endif

// One tile of at most kTile x kTile elements starting at (r0, c0).
inline void transpose_tile(const float* src, float* dst, size_t rows, size_t cols, size_t r0, size_t c0,
                           size_t r1, size_t c1) {
  size_t r = r0;
#ifdef ETC_XNNPACK_SSE
  for (; r + 4 <= r1; r += 4) {
    size_t c = c0;
    for (; c + 4 <= c1; c += 4) transpose_4x4(src + r * cols + c, cols, dst + c * rows + r, rows);
    for (; c < c1; ++c)
      for (size_t k = r; k < r + 4; ++k) dst[c * rows + k] = src[k * cols + c];
  }
#endif
  for (; r < r1; ++r)
    for (size_t c = c0; c < c1; ++c) dst[c * rows + r] = src[r * cols + c];
}

// Few rows (an image's 2 to 4 channels into NHWC): interleave them, one
// pass over each row. The tiled path would leave the SSE blocks unused and
// store one strided float at a time (mobilenet_v2's 3x224x224 input: 106 us).
template <size_t R>
void interleave_rows(const float* src, float* dst, size_t cols) {
  for (size_t c = 0; c < cols; ++c)
    for (size_t r = 0; r < R; ++r) dst[c * R + r] = src[r * cols + c];
}

}  // namespace

void transpose_plane(const float* src, float* dst, size_t rows, size_t cols) {
  if (rows == 1 || cols == 1) {
    for (size_t i = 0; i < rows * cols; ++i) dst[i] = src[i];
    return;
  }
  switch (rows) {
    case 2: return interleave_rows<2>(src, dst, cols);
    case 3: return interleave_rows<3>(src, dst, cols);
    case 4: return interleave_rows<4>(src, dst, cols);
    default: break;
  }
  // Square tiles, unless one side's row stride is a multiple of 4 KiB: then
  // the rows a tile touches on that side all fall in the same cache sets,
  // and 16 of them overflow the L1's ways (a 21x320x320 NHWC output: 1.8 ms
  // with 16x16 tiles, 0.65 ms with tiles 8 wide on the aliasing side).
  size_t tile_r = kTile, tile_c = kTile;
  if (rows * sizeof(float) % kAliasingStride == 0 && cols > kNarrowTile) {
    tile_r = kLongTile, tile_c = kNarrowTile;  // dst rows (one per src column) alias
  } else if (cols * sizeof(float) % kAliasingStride == 0 && rows > kNarrowTile) {
    tile_r = kNarrowTile, tile_c = kLongTile;  // src rows alias
  }
  for (size_t r0 = 0; r0 < rows; r0 += tile_r) {
    const size_t r1 = r0 + tile_r < rows ? r0 + tile_r : rows;
    for (size_t c0 = 0; c0 < cols; c0 += tile_c) {
      const size_t c1 = c0 + tile_c < cols ? c0 + tile_c : cols;
      transpose_tile(src, dst, rows, cols, r0, c0, r1, c1);
    }
  }
}

void nchw_to_nhwc(const float* src, float* dst, size_t n, size_t c, size_t hw) {
  for (size_t i = 0; i < n; ++i) transpose_plane(src + i * c * hw, dst + i * c * hw, c, hw);
}

void nhwc_to_nchw(const float* src, float* dst, size_t n, size_t c, size_t hw) {
  for (size_t i = 0; i < n; ++i) transpose_plane(src + i * c * hw, dst + i * c * hw, hw, c);
}

}  // namespace etc::xnnpack
