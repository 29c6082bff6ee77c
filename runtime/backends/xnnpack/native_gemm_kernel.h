#pragma once
// The micro-kernels of the backend's own convolution (native_conv.h): rows x
// channels outputs (rows <= 12, channels <= 32) of a GEMM whose rows are
// read through pointers, one per output row and tap, with the epilogues the
// convolutions fold (clamp, residual, swish or hardswish, affine). With
// AVX-512F the whole tile is 24 accumulators, and two whole panels of a
// whole tile are two halves of 6 x 64 (the second 7 x 64 where it takes a
// lone last row in); with AVX2 + FMA3 (16
// registers) it is computed as blocks of up to 6 rows x 16 channels (12
// accumulators, two weight vectors and a broadcast), each block's rows
// read from L1 for both halves of the panel, in chunks of the reduction;
// a tile of at most two rows takes all 32 channels in one pass.
// Header-only templates, for the convolution walks (native_conv_walk.h);
// x86-64 only.

#if defined(__x86_64__)
#include <immintrin.h>

#include <cmath>
#include <cstddef>

#include "runtime/backends/xnnpack/avx2_lanes.h"
#include "runtime/backends/xnnpack/native_isa.h"
#include "runtime/backends/xnnpack/native_plan.h"
#include "runtime/backends/xnnpack/stages.h"
#include "runtime/backends/xnnpack/swish.h"

namespace etc::xnnpack::native_kernel {

// GCC 12 reports the undefined pass-through operand inside _mm512_max_ps and
// _mm512_min_ps as maybe-uninitialized (or uninitialized, once inlined).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
// What happens to a tile's sums before they are stored.
struct Epilogue {
  float lo, hi;                    // clamp of the convolution
  const float* residual;           // Residual: added after the clamp, same indexing as the sums
  size_t residual_stride;          // floats between the residual's pixels
  float residual_lo, residual_hi;  // clamp after the addition
  // Memory to bring towards the core while this tile computes (weights of
  // a later panel, or a later tile's rows), a 64-byte line per reduction
  // step, the lines prefetch_step bytes apart (at most 64: less fetches a
  // line more than once, so that several tiles share a fetch); null when
  // none.
  const void* prefetch = nullptr;
  size_t prefetch_step = 64;
  // Last, with affine: y * scale + shift.
  bool affine = false;
  float scale = 1, shift = 0;
  // A reduction cut into segments (native_conv_run.cpp): the sums start from
  // partial_in instead of the bias when it is set, and go raw to
  // partial_out, skipping the rest of the epilogue and y, when that is set.
  // Both hold a whole tile, row r at r * kNativeGemmChannels (a pair's
  // rows twice that apart, micro_kernel_pair), 64-byte aligned; every row
  // and lane of the tile is stored there.
  const float* partial_in = nullptr;
  float* partial_out = nullptr;
  // micro_kernel_pair only: lines to bring in for the tile after this one,
  // next_rows rows of the pair's 64 channels (4 lines) at next_out, y_stride
  // floats apart, for writing, and when set their residual at
  // next_residual, residual_stride apart: a row every 4 reduction steps,
  // so the fetches spread over the arithmetic (issued together before
  // the call, 12 rows of 4 lines each took ~10% of resnet50's 64->256 1x1
  // layers at 56x56 on a Sapphire Rapids core); rows a reduction is too
  // short for after it.
  const float* next_out = nullptr;
  const float* next_residual = nullptr;
  size_t next_rows = 0;
};

// Brings in one row of a pair's next tile: its 4 output lines for writing
// (prefetchw, a no-op where the CPU lacks it) and, when residual is set, the
// residual's 4 lines.
__attribute__((always_inline)) inline void prefetch_pair_row(const char* out, const char* residual) {
#pragma GCC unroll 4
  for (int b = 0; b < 256; b += 64) asm volatile("prefetchw %0" ::"m"(*(out + b)));
  if (residual != nullptr)
#pragma GCC unroll 4
    for (int b = 0; b < 256; b += 64) _mm_prefetch(residual + b, _MM_HINT_T0);
}

// A row's input at `end + k` (k < 0: `end` is one past the row's last
// input), broadcast to 16 lanes. Written out so that each row is addressed
// from its own pointer and the shared index, as the kernel's loop needs
// (the memory operand only orders it after the row's writes: it is not
// read).
__attribute__((target("avx512f"), always_inline)) inline __m512 broadcast512_at(const float* end,
                                                                                ptrdiff_t k) {
  __m512 v;
  asm("vbroadcastss (%1,%2,4), %0" : "=v"(v) : "r"(end), "r"(k), "m"(*end));
  return v;
}

// One reduction step of the AVX-512 tile: each row's input times the step's
// 32 weights at w (16 where not Wide). Wide, a row's input is broadcast
// once for its two multiply-adds; narrow, each multiply-add broadcasts its
// input from memory itself ({1to16}): a separate broadcast a multiply-add
// held a 16-channel tile to ~70% of the FMA rate on a Zen 4 core (the
// embedded form ~95%, as the wide tile), and mobilenet_v2's and
// efficientnet_b0's 32 -> 16 projections (112x112) took ~1.6x XNNPACK's
// time.
template <size_t R, bool Wide>
__attribute__((target("avx512f"), always_inline)) inline void step_avx512(__m512 (&acc)[R][2],
                                                                          const float* const* end,
                                                                          ptrdiff_t k, const float* w) {
  const __m512 b0 = _mm512_load_ps(w);
  if constexpr (Wide) {
    const __m512 b1 = _mm512_load_ps(w + 16);
#pragma GCC unroll 12
    for (size_t r = 0; r < R; ++r) {
      const __m512 v = broadcast512_at(end[r], k);
      acc[r][0] = _mm512_fmadd_ps(v, b0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(v, b1, acc[r][1]);
    }
  } else {
#pragma GCC unroll 12
    for (size_t r = 0; r < R; ++r) acc[r][0] = _mm512_fmadd_ps(_mm512_set1_ps(end[r][k]), b0, acc[r][0]);
  }
}

// One vector of sums through the epilogue with AVX-512: the clamp, with
// Residual the residual's lanes m (read at `residual`) and its clamp, the
// activation, the affine.
template <bool Residual, ConvActivation Act>
__attribute__((target("avx512f"), always_inline)) inline __m512 finish512(__m512 sum, const float* residual,
                                                                          __mmask16 m, const Epilogue& e) {
  __m512 v = _mm512_min_ps(_mm512_max_ps(sum, _mm512_set1_ps(e.lo)), _mm512_set1_ps(e.hi));
  if constexpr (Residual)
    v = _mm512_min_ps(
        _mm512_max_ps(_mm512_add_ps(v, _mm512_maskz_loadu_ps(m, residual)), _mm512_set1_ps(e.residual_lo)),
        _mm512_set1_ps(e.residual_hi));
  if constexpr (Act == ConvActivation::kSwish) v = swish_ps(v);
  if constexpr (Act == ConvActivation::kHardSwish) v = hardswish_ps(v);
  if (e.affine) v = _mm512_fmadd_ps(v, _mm512_set1_ps(e.scale), _mm512_set1_ps(e.shift));
  return v;
}

// rows x channels (rows <= R <= 12, channels <= 32) outputs: bias + sum
// over taps and input channels, clamped to [lo, hi], then with Residual the
// residual added and clamped again, then the activation Act. The
// indirection rows of a tile are kNativeGemmRows apart whatever R is; R < 12 serves a
// short last tile. Each row is addressed from its end and one shared index
// that counts up to zero, so the loop needs no register for its bound and
// its twelve row pointers, index and weights fit x86-64's general
// registers. Addressed from their starts with a bound, two rows a step were
// kept in vector registers and moved back on the port an FMA needs, and the
// bound compared in memory: chains of resnet50's 1x1 layers (56x56 to 14x14)
// ran 6-18% slower on one Sapphire Rapids core.
template <size_t R, bool Residual, ConvActivation Act, bool Wide>
__attribute__((target("avx512f"))) void micro_kernel(size_t rows, size_t channels, size_t taps, size_t in_c,
                                                     const float* const* a, const float* w, float* y,
                                                     size_t y_stride, const Epilogue& e) {
  // Wide: 32 channels in two vectors; otherwise at most 16 in one (the panel
  // keeps its 32-float stride; its upper half is not read).
  __m512 acc[R][2];
  const char* prefetch = static_cast<const char*>(e.prefetch);
  if (e.partial_in != nullptr) {
#pragma GCC unroll 12
    for (size_t r = 0; r < R; ++r) {
      acc[r][0] = _mm512_load_ps(e.partial_in + r * kNativeGemmChannels);
      acc[r][1] = Wide ? _mm512_load_ps(e.partial_in + r * kNativeGemmChannels + 16) : _mm512_setzero_ps();
    }
  } else {
    const __m512 bias0 = _mm512_load_ps(w), bias1 = Wide ? _mm512_load_ps(w + 16) : _mm512_setzero_ps();
#pragma GCC unroll 12
    for (size_t r = 0; r < R; ++r) acc[r][0] = bias0, acc[r][1] = bias1;
  }
  w += kNativeGemmChannels;
  const ptrdiff_t depth = static_cast<ptrdiff_t>(in_c);
  for (size_t t = 0; t < taps; ++t) {
    const float* end[R];
#pragma GCC unroll 12
    for (size_t r = 0; r < R; ++r) end[r] = a[t * kNativeGemmRows + r] + depth;
    // A step a turn, in two loops so that the one without a later panel to
    // fetch tests nothing but its index.
    if (prefetch != nullptr) {
      for (ptrdiff_t k = -depth; k < 0; ++k, w += kNativeGemmChannels, prefetch += e.prefetch_step) {
        _mm_prefetch(prefetch, _MM_HINT_T1);
        step_avx512<R, Wide>(acc, end, k, w);
      }
    } else {
      for (ptrdiff_t k = -depth; k < 0; ++k, w += kNativeGemmChannels) step_avx512<R, Wide>(acc, end, k, w);
    }
  }
  if (e.partial_out != nullptr) {
#pragma GCC unroll 12
    for (size_t r = 0; r < R; ++r) {
      _mm512_store_ps(e.partial_out + r * kNativeGemmChannels, acc[r][0]);
      if constexpr (Wide) _mm512_store_ps(e.partial_out + r * kNativeGemmChannels + 16, acc[r][1]);
    }
    return;
  }
  const __mmask16 m0 = channels >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << channels) - 1);
  const __mmask16 m1 = channels >= 32   ? 0xFFFF
                       : channels <= 16 ? 0
                                        : static_cast<__mmask16>((1u << (channels - 16)) - 1);
#pragma GCC unroll 12
  for (size_t r = 0; r < R; ++r) {
    if (r >= rows) break;
    const float* res = Residual ? e.residual + r * e.residual_stride : nullptr;
    const __m512 v0 = finish512<Residual, Act>(acc[r][0], res, m0, e);
    const __m512 v1 = Wide ? finish512<Residual, Act>(acc[r][1], Residual ? res + 16 : nullptr, m1, e) : v0;
    _mm512_mask_storeu_ps(y + r * y_stride, m0, v0);
    if constexpr (Wide) _mm512_mask_storeu_ps(y + r * y_stride + 16, m1, v1);
  }
}

// One reduction step of the R x 64 tile (R = 6 or 7): each row's input
// times the step's 32 weights of each of the two panels. Seven rows take
// 28 accumulators and the four weight vectors, every register there is:
// their inputs are broadcast from memory by the multiply-adds themselves.
template <size_t R>
__attribute__((target("avx512f"), always_inline)) inline void step_pair(__m512 (&acc)[R][4],
                                                                        const float* const* end, ptrdiff_t k,
                                                                        const float* w0, const float* w1) {
  const __m512 b0 = _mm512_load_ps(w0), b1 = _mm512_load_ps(w0 + 16), b2 = _mm512_load_ps(w1),
               b3 = _mm512_load_ps(w1 + 16);
#pragma GCC unroll 7
  for (size_t r = 0; r < R; ++r) {
    const __m512 v = R > 6 ? _mm512_set1_ps(end[r][k]) : broadcast512_at(end[r], k);
    acc[r][0] = _mm512_fmadd_ps(v, b0, acc[r][0]);
    acc[r][1] = _mm512_fmadd_ps(v, b1, acc[r][1]);
    acc[r][2] = _mm512_fmadd_ps(v, b2, acc[r][2]);
    acc[r][3] = _mm512_fmadd_ps(v, b3, acc[r][3]);
  }
}

// R rows (6, or 7 to take a lone last row in with the 6 before it) x 64
// channels: two whole adjacent panels (w0 and w1, each 32
// biases then depth x 32 weights per tap) read side by side, 24
// accumulators, four weight vectors and six broadcasts a step (ten loads
// for 24 FMAs where the 12 x 32 tile needs fourteen). Rows a[t *
// kNativeGemmRows + r], r < 6, and with R = 7 the last row's at
// last[t * kNativeGemmRows] (a lone row: the next tile's first); all 64
// channels stored, at y (and read from e.residual with Residual) with a row
// y_stride (residual_stride) floats apart. `prefetch`: a line of a later
// panel each step, prefetch_step bytes apart. Partial sums (Epilogue::
// partial_in, partial_out) hold row r at r * kPairChannels, all 64 lanes.
inline constexpr size_t kPairChannels = 2 * kNativeGemmChannels;
template <size_t R, bool Residual, ConvActivation Act>
__attribute__((target("avx512f"))) void micro_kernel_pair(size_t taps, size_t in_c, const float* const* a,
                                                          const float* const* last, const float* w0,
                                                          const float* w1, float* y, size_t y_stride,
                                                          const Epilogue& e) {
  static_assert(R == 6 || R == 7);
  __m512 acc[R][4];
  if (e.partial_in != nullptr) {
#pragma GCC unroll 7
    for (size_t r = 0; r < R; ++r)
#pragma GCC unroll 4
      for (size_t j = 0; j < 4; ++j) acc[r][j] = _mm512_load_ps(e.partial_in + r * kPairChannels + 16 * j);
  } else {
    const __m512 c0 = _mm512_load_ps(w0), c1 = _mm512_load_ps(w0 + 16), c2 = _mm512_load_ps(w1),
                 c3 = _mm512_load_ps(w1 + 16);
#pragma GCC unroll 7
    for (size_t r = 0; r < R; ++r) acc[r][0] = c0, acc[r][1] = c1, acc[r][2] = c2, acc[r][3] = c3;
  }
  w0 += kNativeGemmChannels;
  w1 += kNativeGemmChannels;
  const char* prefetch = static_cast<const char*>(e.prefetch);
  const ptrdiff_t depth = static_cast<ptrdiff_t>(in_c);
  const char* next_out = reinterpret_cast<const char*>(e.next_out);
  const char* next_residual = reinterpret_cast<const char*>(e.next_residual);
  size_t next_rows = e.next_rows;
  for (size_t t = 0; t < taps; ++t) {
    const float* end[R];
#pragma GCC unroll 7
    for (size_t r = 0; r < R; ++r)
      end[r] = (r < 6 ? a[t * kNativeGemmRows + r] : last[t * kNativeGemmRows]) + depth;
    ptrdiff_t k = -depth;
    // Four steps a row of the next tile while there are rows to fetch.
    for (; next_rows > 0 && k + 4 <= 0; k += 4, --next_rows) {
      prefetch_pair_row(next_out, next_residual);
      next_out += y_stride * sizeof(float);
      if (next_residual != nullptr) next_residual += e.residual_stride * sizeof(float);
#pragma GCC unroll 4
      for (ptrdiff_t i = 0; i < 4; ++i, w0 += kNativeGemmChannels, w1 += kNativeGemmChannels) {
        if (prefetch != nullptr) {
          _mm_prefetch(prefetch, _MM_HINT_T1);
          prefetch += e.prefetch_step;
        }
        step_pair<R>(acc, end, k + i, w0, w1);
      }
    }
    if (prefetch != nullptr) {
      for (; k < 0; ++k, w0 += kNativeGemmChannels, w1 += kNativeGemmChannels, prefetch += e.prefetch_step) {
        _mm_prefetch(prefetch, _MM_HINT_T1);
        step_pair<R>(acc, end, k, w0, w1);
      }
    } else {
      for (; k < 0; ++k, w0 += kNativeGemmChannels, w1 += kNativeGemmChannels)
        step_pair<R>(acc, end, k, w0, w1);
    }
  }
  for (; next_rows > 0; --next_rows) {
    prefetch_pair_row(next_out, next_residual);
    next_out += y_stride * sizeof(float);
    if (next_residual != nullptr) next_residual += e.residual_stride * sizeof(float);
  }
  if (e.partial_out != nullptr) {
#pragma GCC unroll 7
    for (size_t r = 0; r < R; ++r)
#pragma GCC unroll 4
      for (size_t j = 0; j < 4; ++j) _mm512_store_ps(e.partial_out + r * kPairChannels + 16 * j, acc[r][j]);
    return;
  }
#pragma GCC unroll 7
  for (size_t r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (size_t j = 0; j < 4; ++j) {
      const float* res = Residual ? e.residual + r * e.residual_stride + 16 * j : nullptr;
      const __m512 v = finish512<Residual, Act>(acc[r][j], res, 0xFFFF, e);
      _mm512_storeu_ps(y + r * y_stride + 16 * j, v);
    }
}

// One vector of sums (8 lanes, `lanes` of them stored) through the
// epilogue with AVX2: the clamp, with Residual the residual (read at
// `residual`) and its clamp, the activation, the affine; stored at `out`.
template <bool Residual, ConvActivation Act>
__attribute__((target("avx2,fma"))) inline void finish_avx2(__m256 sum, size_t lanes, const float* residual,
                                                            float* out, const Epilogue& e) {
  const __m256i m = lanes_avx2(lanes);
  __m256 v = _mm256_min_ps(_mm256_max_ps(sum, _mm256_set1_ps(e.lo)), _mm256_set1_ps(e.hi));
  if constexpr (Residual) {
    const __m256 add = lanes == 8 ? _mm256_loadu_ps(residual) : _mm256_maskload_ps(residual, m);
    v = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(v, add), _mm256_set1_ps(e.residual_lo)),
                      _mm256_set1_ps(e.residual_hi));
  }
  if constexpr (Act == ConvActivation::kSwish) v = swish_ps(v);
  if constexpr (Act == ConvActivation::kHardSwish) v = hardswish_ps(v);
  if (e.affine) v = _mm256_fmadd_ps(v, _mm256_set1_ps(e.scale), _mm256_set1_ps(e.shift));
  if (lanes == 8)
    _mm256_storeu_ps(out, v);
  else
    _mm256_maskstore_ps(out, m, v);
}

// One reduction step of an AVX2 block: row r's input k times the step's 16
// weights at w.
// The broadcast is written out so that each row is addressed from its own
// pointer and the shared step index: GCC otherwise keeps a pointer per row
// and step of an unrolled loop, more than x86-64 has registers for.
template <size_t Off>
__attribute__((target("avx2"), always_inline)) inline __m256 broadcast_at(const float* row, size_t k) {
  __m256 v;
  asm("vbroadcastss %c2(%1,%3,4), %0" : "=x"(v) : "r"(row), "i"(Off * sizeof(float)), "r"(k), "m"(*row));
  return v;
}

template <size_t RB, size_t Off = 0>
__attribute__((target("avx2,fma"), always_inline)) inline void step_avx2(__m256 (&acc)[RB][2],
                                                                         const float* const* row, size_t k,
                                                                         const float* w) {
  const __m256 b0 = _mm256_load_ps(w), b1 = _mm256_load_ps(w + 8);
#pragma GCC unroll 6
  for (size_t r = 0; r < RB; ++r) {
    const __m256 v = broadcast_at<Off>(row[r], k);
    acc[r][0] = _mm256_fmadd_ps(v, b0, acc[r][0]);
    acc[r][1] = _mm256_fmadd_ps(v, b1, acc[r][1]);
  }
}

// One block of a tile with AVX2: RB rows (rows of them stored) x 16
// channels (channels of them stored, <= 16) from half a panel: w points at
// the half's first bias, its weights follow a panel row (32 floats) apart.
// a[t * kNativeGemmRows + r] is row r's pointer for tap t. The residual,
// when there is one, is read at residual + r * e.residual_stride; partial
// sums (Epilogue::partial_in, partial_out) at partial_in and partial_out +
// r * kNativeGemmChannels, all 16 lanes.
template <size_t RB, bool Residual, ConvActivation Act>
__attribute__((target("avx2,fma"))) void block_avx2(size_t rows, size_t channels, size_t taps, size_t in_c,
                                                    const float* const* a, const float* w, float* y,
                                                    size_t y_stride, const Epilogue& e, const float* residual,
                                                    const char* prefetch, const float* partial_in,
                                                    float* partial_out) {
  __m256 acc[RB][2];
  if (partial_in != nullptr) {
#pragma GCC unroll 6
    for (size_t r = 0; r < RB; ++r) {
      acc[r][0] = _mm256_load_ps(partial_in + r * kNativeGemmChannels);
      acc[r][1] = _mm256_load_ps(partial_in + r * kNativeGemmChannels + 8);
    }
  } else {
    const __m256 bias0 = _mm256_load_ps(w), bias1 = _mm256_load_ps(w + 8);
#pragma GCC unroll 6
    for (size_t r = 0; r < RB; ++r) acc[r][0] = bias0, acc[r][1] = bias1;
  }
  w += kNativeGemmChannels;
  for (size_t t = 0; t < taps; ++t) {
    const float* row[RB];
#pragma GCC unroll 6
    for (size_t r = 0; r < RB; ++r) row[r] = a[t * kNativeGemmRows + r];
    // Four steps a turn, the rows addressed from the shared step index:
    // a quarter of the loop's pointer updates. On one Zen 3 core, blocks
    // of 64 to 576 steps ran 1.2-1.45x faster than a step a turn, 1024
    // steps 1.04x; the sums are the same, in the same order.
    size_t k = 0;
    for (; k + 4 <= in_c; k += 4, w += 4 * kNativeGemmChannels) {
      if (prefetch != nullptr) {
        for (size_t u = 0; u < 4; ++u) _mm_prefetch(prefetch + e.prefetch_step * u, _MM_HINT_T1);
        prefetch += 4 * e.prefetch_step;
      }
      step_avx2<RB, 0>(acc, row, k, w);
      step_avx2<RB, 1>(acc, row, k, w + kNativeGemmChannels);
      step_avx2<RB, 2>(acc, row, k, w + 2 * kNativeGemmChannels);
      step_avx2<RB, 3>(acc, row, k, w + 3 * kNativeGemmChannels);
    }
    for (; k < in_c; ++k, w += kNativeGemmChannels) {
      if (prefetch != nullptr) {
        _mm_prefetch(prefetch, _MM_HINT_T1);
        prefetch += e.prefetch_step;
      }
      step_avx2<RB, 0>(acc, row, k, w);
    }
  }
  if (partial_out != nullptr) {
#pragma GCC unroll 6
    for (size_t r = 0; r < RB; ++r) {
      _mm256_store_ps(partial_out + r * kNativeGemmChannels, acc[r][0]);
      _mm256_store_ps(partial_out + r * kNativeGemmChannels + 8, acc[r][1]);
    }
    return;
  }
  const size_t n0 = channels < 8 ? channels : 8, n1 = channels - n0;
#pragma GCC unroll 6
  for (size_t r = 0; r < RB; ++r) {
    if (r >= rows) break;
    const float* res = Residual ? residual + r * e.residual_stride : nullptr;
    finish_avx2<Residual, Act>(acc[r][0], n0, res, y + r * y_stride, e);
    if (n1 > 0)
      finish_avx2<Residual, Act>(acc[r][1], n1, Residual ? res + 8 : nullptr, y + r * y_stride + 8, e);
  }
}

// A tile of at most two rows with AVX2 (a classifier head's one row): all
// 32 channels of the panel in one pass, the weights read in order, 128
// bytes a step, as a memory-bound stream wants them; same sums, in the
// same order, as block_avx2.
template <bool Residual, ConvActivation Act>
__attribute__((target("avx2,fma"))) void narrow_tile_avx2(size_t rows, size_t channels, size_t taps,
                                                          size_t in_c, const float* const* a, const float* w,
                                                          float* y, size_t y_stride, const Epilogue& e) {
  __m256 acc[2][4];
  if (e.partial_in != nullptr) {
    for (size_t r = 0; r < 2; ++r)
      for (size_t j = 0; j < 4; ++j)
        acc[r][j] = _mm256_load_ps(e.partial_in + r * kNativeGemmChannels + 8 * j);
  } else {
    for (size_t j = 0; j < 4; ++j) acc[0][j] = acc[1][j] = _mm256_load_ps(w + 8 * j);
  }
  w += kNativeGemmChannels;
  const char* prefetch = static_cast<const char*>(e.prefetch);
  for (size_t t = 0; t < taps; ++t) {
    const float* row0 = a[t * kNativeGemmRows];
    const float* row1 = a[t * kNativeGemmRows + 1];
    for (size_t k = 0; k < in_c; ++k) {
      if (prefetch != nullptr) {
        _mm_prefetch(prefetch, _MM_HINT_T1);
        prefetch += e.prefetch_step;
      }
      const __m256 v0 = _mm256_broadcast_ss(row0 + k), v1 = _mm256_broadcast_ss(row1 + k);
#pragma GCC unroll 4
      for (size_t j = 0; j < 4; ++j) {
        const __m256 b = _mm256_load_ps(w + 8 * j);
        acc[0][j] = _mm256_fmadd_ps(v0, b, acc[0][j]);
        acc[1][j] = _mm256_fmadd_ps(v1, b, acc[1][j]);
      }
      w += kNativeGemmChannels;
    }
  }
  if (e.partial_out != nullptr) {
    for (size_t r = 0; r < 2; ++r)
      for (size_t j = 0; j < 4; ++j)
        _mm256_store_ps(e.partial_out + r * kNativeGemmChannels + 8 * j, acc[r][j]);
    return;
  }
  for (size_t r = 0; r < rows; ++r)
    for (size_t j = 0; j * 8 < channels; ++j) {
      const size_t n = channels - j * 8 < 8 ? channels - j * 8 : 8;
      const float* res = Residual ? e.residual + r * e.residual_stride + 8 * j : nullptr;
      finish_avx2<Residual, Act>(acc[r][j], n, res, y + r * y_stride + 8 * j, e);
    }
}

// The AVX2 tile: row blocks of RB (the tile's rows split evenly: 12 as two
// blocks of 6, 8 as two of 4), each block over both halves of the panel in
// turn so that its rows stay in L1 while the weights stream from L2.
template <size_t R, bool Residual, ConvActivation Act>
void tile_avx2_whole(size_t rows, size_t channels, size_t taps, size_t in_c, const float* const* a,
                     const float* w, float* y, size_t y_stride, const Epilogue& e) {
  constexpr size_t RB = R > 6 ? R / 2 : R;
  const char* prefetch = static_cast<const char*>(e.prefetch);
  for (size_t r0 = 0; r0 < rows; r0 += RB) {
    const size_t n = rows - r0 < RB ? rows - r0 : RB;
    for (size_t h = 0; h * 16 < channels; ++h) {
      const size_t ch = channels - h * 16 < 16 ? channels - h * 16 : 16;
      const float* res = Residual ? e.residual + r0 * e.residual_stride + h * 16 : nullptr;
      const size_t at = r0 * kNativeGemmChannels + h * 16;
      block_avx2<RB, Residual, Act>(n, ch, taps, in_c, a + r0, w + h * 16, y + r0 * y_stride + h * 16,
                                    y_stride, e, res, prefetch,
                                    e.partial_in != nullptr ? e.partial_in + at : nullptr,
                                    e.partial_out != nullptr ? e.partial_out + at : nullptr);
      prefetch = nullptr;  // one block walks the later panel's lines
    }
  }
}

// The most reduction steps in a chunk of the AVX2 tile: 32 KiB of weights
// (both halves of the panel) and 12 KiB of rows.
inline constexpr size_t kAvx2ChunkSteps = 256;

// The epilogue of one piece of a cut reduction (native_plan.h
// for_each_piece) whose partial sums pass through `part` between pieces:
// `e`'s own partial sums, if any, are the first piece's input and the last
// one's output, and only the last applies the rest of `e`.
inline Epilogue piece_epilogue(const Epilogue& e, const ReductionPiece& p, float* part) {
  Epilogue pe = e;
  pe.partial_in = p.first ? e.partial_in : part;
  pe.partial_out = p.last ? e.partial_out : part;
  return pe;
}

// The AVX2 tile in chunks of the reduction (whole taps where a tap is short,
// else pieces of one), the partial sums kept on the stack between chunks:
// the tile's four blocks read a chunk's weights and rows from L1 or L2
// rather than the whole reduction's from further out, which holds up
// better where other work shares the core's caches (README).
template <size_t R, bool Residual, ConvActivation Act>
void tile_avx2(size_t rows, size_t channels, size_t taps, size_t in_c, const float* const* a, const float* w,
               float* y, size_t y_stride, const Epilogue& e) {
  if (taps * in_c <= kAvx2ChunkSteps)
    return tile_avx2_whole<R, Residual, Act>(rows, channels, taps, in_c, a, w, y, y_stride, e);
  alignas(64) float part[kNativeGemmRows * kNativeGemmChannels];
  const float* shifted[kNativeGemmRows];
  const char* prefetch = static_cast<const char*>(e.prefetch);
  for_each_piece(taps, in_c, cut_reduction(taps, in_c, kAvx2ChunkSteps), [&](const ReductionPiece& p) {
    Epilogue pe = piece_epilogue(e, p, part);
    pe.prefetch = prefetch;
    if (prefetch != nullptr) prefetch += p.taps * p.depth * e.prefetch_step;  // a line a step
    tile_avx2_whole<R, Residual, Act>(rows, channels, p.taps, p.depth, piece_rows(a, p, in_c, shifted),
                                      piece_weights(w, p, in_c), y, y_stride, pe);
  });
}

template <bool Residual, ConvActivation Act>
void run_rows_avx2(size_t rows, size_t channels, size_t taps, size_t in_c, const float* const* a,
                   const float* w, float* y, size_t y_stride, const Epilogue& e) {
  if (rows > 8)
    tile_avx2<12, Residual, Act>(rows, channels, taps, in_c, a, w, y, y_stride, e);
  else if (rows > 4)
    tile_avx2<8, Residual, Act>(rows, channels, taps, in_c, a, w, y, y_stride, e);
  else if (rows > 2)
    tile_avx2<4, Residual, Act>(rows, channels, taps, in_c, a, w, y, y_stride, e);
  else
    narrow_tile_avx2<Residual, Act>(rows, channels, taps, in_c, a, w, y, y_stride, e);
}

template <bool Residual, ConvActivation Act, bool Wide>
void run_rows(size_t rows, size_t channels, size_t taps, size_t in_c, const float* const* a, const float* w,
              float* y, size_t y_stride, const Epilogue& e) {
  if (rows > 8)
    micro_kernel<12, Residual, Act, Wide>(rows, channels, taps, in_c, a, w, y, y_stride, e);
  else if (rows > 4)
    micro_kernel<8, Residual, Act, Wide>(rows, channels, taps, in_c, a, w, y, y_stride, e);
  else if (rows > 2)
    micro_kernel<4, Residual, Act, Wide>(rows, channels, taps, in_c, a, w, y, y_stride, e);
  else
    micro_kernel<2, Residual, Act, Wide>(rows, channels, taps, in_c, a, w, y, y_stride, e);
}

// The tile on the widest instruction set native_isa() allows.
template <bool Residual, ConvActivation Act>
void run_panel(size_t rows, size_t channels, size_t taps, size_t in_c, const float* const* a, const float* w,
               float* y, size_t y_stride, const Epilogue& e) {
  if (native_isa() != NativeIsa::kAvx512)
    run_rows_avx2<Residual, Act>(rows, channels, taps, in_c, a, w, y, y_stride, e);
  else if (channels > 16)
    run_rows<Residual, Act, true>(rows, channels, taps, in_c, a, w, y, y_stride, e);
  else
    run_rows<Residual, Act, false>(rows, channels, taps, in_c, a, w, y, y_stride, e);
}
#pragma GCC diagnostic pop

}  // namespace etc::xnnpack::native_kernel
#endif
