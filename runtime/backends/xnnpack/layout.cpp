#include "runtime/backends/xnnpack/layout.h"

#include <algorithm>

#include "runtime/backends/xnnpack/native_isa.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define ETC_XNNPACK_X86 1
#endif

namespace etc::xnnpack {
namespace {

constexpr size_t kTile = 16;
// Tiles when rows kAliasingStride bytes apart would share cache sets: at most
// kNarrowTile of them at once, each kLongTile long.
constexpr size_t kAliasingStride = 4096;
constexpr size_t kNarrowTile = 8;
constexpr size_t kLongTile = 64;
// The part of a plane one thread transposes at a time (rows x columns of
// the source), and the smallest plane worth splitting between threads.
constexpr size_t kPartRows = 64;
constexpr size_t kPartCols = 256;
constexpr size_t kParallelFloats = size_t{32} << 10;

struct Plane {
  const float* src;
  float* dst;
  size_t rows, cols;
};

#ifdef ETC_XNNPACK_X86
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

// 16x16 block through registers: sixteen whole-line loads, sixteen
// whole-line stores. A block reads every line it touches once and writes
// every line it touches whole, so a destination not in cache is fetched
// once per line and rows a multiple of 4 KiB apart cost nothing extra (the
// 4x4 tiles wrote lines a quarter at a time: a 1024-channel 14x14 output
// into a destination not in cache took 0.82 ms, its lines fetched over and
// over).
// (GCC 12 warns of the undefined vector its shuffle intrinsics start from.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
__attribute__((target("avx512f"))) void transpose_16x16(const float* src, size_t src_stride, float* dst,
                                                        size_t dst_stride) {
  __m512 r[16], t[16];
  for (size_t i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(src + i * src_stride);
  // Pairs of rows interleaved, then quadruples: r[4i + j] holds, in each
  // 128-bit lane L, rows 4i..4i+3 at column 4L + j.
  for (size_t i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (size_t i = 0; i < 16; i += 4) {
    r[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
    r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xEE);
    r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  // Lanes gathered: columns j and 8 + j of rows 0-7 in t[j], 4 + j and 12 +
  // j in t[4 + j]; rows 8-15 likewise in t[8 + j], t[12 + j].
  for (size_t j = 0; j < 4; ++j) {
    t[j] = _mm512_shuffle_f32x4(r[j], r[4 + j], 0x88);
    t[4 + j] = _mm512_shuffle_f32x4(r[j], r[4 + j], 0xDD);
    t[8 + j] = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0x88);
    t[12 + j] = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0xDD);
  }
  for (size_t j = 0; j < 4; ++j) {
    _mm512_storeu_ps(dst + j * dst_stride, _mm512_shuffle_f32x4(t[j], t[8 + j], 0x88));
    _mm512_storeu_ps(dst + (8 + j) * dst_stride, _mm512_shuffle_f32x4(t[j], t[8 + j], 0xDD));
    _mm512_storeu_ps(dst + (4 + j) * dst_stride, _mm512_shuffle_f32x4(t[4 + j], t[12 + j], 0x88));
    _mm512_storeu_ps(dst + (12 + j) * dst_stride, _mm512_shuffle_f32x4(t[4 + j], t[12 + j], 0xDD));
  }
}
#pragma GCC diagnostic pop

#endif

// Source rows [r0, r1) x columns [c0, c1) of `p`, by 4x4 blocks where
// they fit.
void transpose_rect(const Plane& p, size_t r0, size_t r1, size_t c0, size_t c1) {
  size_t r = r0;
#ifdef ETC_XNNPACK_X86
  for (; r + 4 <= r1; r += 4) {
    size_t c = c0;
    for (; c + 4 <= c1; c += 4) transpose_4x4(p.src + r * p.cols + c, p.cols, p.dst + c * p.rows + r, p.rows);
    for (; c < c1; ++c)
      for (size_t k = r; k < r + 4; ++k) p.dst[c * p.rows + k] = p.src[k * p.cols + c];
  }
#endif
  for (; r < r1; ++r)
    for (size_t c = c0; c < c1; ++c) p.dst[c * p.rows + r] = p.src[r * p.cols + c];
}

// The same part by 4x4 blocks in square tiles, unless one side's row
// stride is a multiple of 4 KiB: then the rows a tile touches on that side
// all fall in the same cache sets, and 16 of them overflow the L1's ways (a
// 21x320x320 NHWC output: 1.8 ms with 16x16 tiles, 0.65 ms with tiles 8
// wide on the aliasing side). For CPUs without AVX-512.
void transpose_tiled(const Plane& p, size_t r0, size_t r1, size_t c0, size_t c1) {
  size_t tile_r = kTile, tile_c = kTile;
  if (p.rows * sizeof(float) % kAliasingStride == 0 && p.cols > kNarrowTile) {
    tile_r = kLongTile, tile_c = kNarrowTile;  // dst rows (one per src column) alias
  } else if (p.cols * sizeof(float) % kAliasingStride == 0 && p.rows > kNarrowTile) {
    tile_r = kNarrowTile, tile_c = kLongTile;  // src rows alias
  }
  for (size_t r = r0; r < r1; r += tile_r)
    for (size_t c = c0; c < c1; c += tile_c)
      transpose_rect(p, r, std::min(r + tile_r, r1), c, std::min(c + tile_c, c1));
}

#ifdef ETC_XNNPACK_X86
// The same part by 16x16 blocks, the ragged edges by 4x4 ones.
void transpose_blocks(const Plane& p, size_t r0, size_t r1, size_t c0, size_t c1) {
  const size_t r_end = r0 + (r1 - r0) / 16 * 16;
  const size_t c_end = c0 + (c1 - c0) / 16 * 16;
  for (size_t r = r0; r < r_end; r += 16)
    for (size_t c = c0; c < c_end; c += 16)
      transpose_16x16(p.src + r * p.cols + c, p.cols, p.dst + c * p.rows + r, p.rows);
  if (c_end < c1) transpose_rect(p, r0, r_end, c_end, c1);
  if (r_end < r1) transpose_rect(p, r_end, r1, c0, c1);
}
#endif

void transpose_part(const Plane& p, size_t r0, size_t r1, size_t c0, size_t c1) {
#ifdef ETC_XNNPACK_X86
  if (native_isa() == NativeIsa::kAvx512) return transpose_blocks(p, r0, r1, c0, c1);
#endif
  transpose_tiled(p, r0, r1, c0, c1);
}

void transpose_part_task(void* context, size_t r0, size_t c0, size_t rows, size_t cols) {
  transpose_part(*static_cast<const Plane*>(context), r0, r0 + rows, c0, c0 + cols);
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

void transpose_plane(const float* src, float* dst, size_t rows, size_t cols, pthreadpool_t pool) {
  if (rows == 1 || cols == 1) {
    std::copy(src, src + rows * cols, dst);
    return;
  }
  switch (rows) {
    case 2: return interleave_rows<2>(src, dst, cols);
    case 3: return interleave_rows<3>(src, dst, cols);
    case 4: return interleave_rows<4>(src, dst, cols);
    default: break;
  }
  Plane plane{src, dst, rows, cols};
  if (pool == nullptr || rows * cols < kParallelFloats) {
    transpose_part(plane, 0, rows, 0, cols);
    return;
  }
  pthreadpool_parallelize_2d_tile_2d(pool, transpose_part_task, &plane, rows, cols, kPartRows, kPartCols, 0);
}

void nchw_to_nhwc(const float* src, float* dst, size_t n, size_t c, size_t hw, pthreadpool_t pool) {
  for (size_t i = 0; i < n; ++i) transpose_plane(src + i * c * hw, dst + i * c * hw, c, hw, pool);
}

void nhwc_to_nchw(const float* src, float* dst, size_t n, size_t c, size_t hw, pthreadpool_t pool) {
  for (size_t i = 0; i < n; ++i) transpose_plane(src + i * c * hw, dst + i * c * hw, hw, c, pool);
}

}  // namespace etc::xnnpack
