#include "runtime/backends/xnnpack/native_depthwise.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "runtime/backends/xnnpack/native_epilogue_ps.h"
#include "runtime/backends/xnnpack/native_isa.h"
#include "runtime/core/aligned_buffer.h"

namespace etc::xnnpack {

struct NativeDepthwise : NativeEpilogue {
  uint32_t input = 0;
  size_t batch = 0, in_h = 0, in_w = 0, channels = 0, out_h = 0, out_w = 0;
  size_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  size_t pad_top = 0, pad_left = 0;
  float lo = -INFINITY, hi = INFINITY;
  size_t padded_channels = 0;  // channels rounded up to 16
  AlignedBuffer weights;       // [taps][padded_channels], then the bias [padded_channels]; zero padded
};

void NativeDepthwiseDeleter::operator()(NativeDepthwise* conv) const { delete conv; }

namespace {

constexpr size_t kMaxTaps = 64;  // a 7x7 window and more fit

}  // namespace

bool depthwise_can_run_natively(const fb::Node& node) {
  return node.type() == fb::NodeType::DepthwiseConvolution2d && node.depth_multiplier() == 1 &&
         node.flags() == 0 && node_param(node.kernel(), 0, 1) * node_param(node.kernel(), 1, 1) <= kMaxTaps &&
         native_avx512_available();
}

NativeEpilogue& epilogue(NativeDepthwise& conv) { return conv; }

Result<NativeDepthwisePtr> compile_native_depthwise(const BlobView& view, const fb::Node& node) {
  NativeDepthwisePtr conv(new NativeDepthwise);
  NativeDepthwise& c = *conv;
  c.input = node.inputs()->Get(0);
  c.output = node.outputs()->Get(0);
  const TensorInfo &x = view.tensors[c.input], &y = view.tensors[c.output];
  c.batch = x.dims[0], c.in_h = x.dims[1], c.in_w = x.dims[2], c.channels = x.dims[3];
  c.out_h = y.dims[1], c.out_w = y.dims[2];
  c.kernel_h = node_param(node.kernel(), 0, 1), c.kernel_w = node_param(node.kernel(), 1, 1);
  c.stride_h = node_param(node.stride(), 0, 1), c.stride_w = node_param(node.stride(), 1, 1);
  c.dilation_h = node_param(node.dilation(), 0, 1), c.dilation_w = node_param(node.dilation(), 1, 1);
  c.pad_top = node_param(node.padding(), 0, 0), c.pad_left = node_param(node.padding(), 3, 0);
  c.lo = node.output_min(), c.hi = node.output_max();
  c.out_stride = c.channels;
  c.padded_channels = (c.channels + 15) / 16 * 16;
  const size_t taps = c.kernel_h * c.kernel_w;
  c.weights = AlignedBuffer::allocate((taps + 1) * c.padded_channels * sizeof(float));
  if (!c.weights)
    return fail(Error::DelegateMemoryAllocationFailed,
                "xnnpack: cannot allocate depthwise convolution weights");
  float* w = c.weights.as<float>();
  std::memset(w, 0, (taps + 1) * c.padded_channels * sizeof(float));
  // The blob's filter is [1, kh, kw, C]: taps in order, channels inner.
  const auto* filter = reinterpret_cast<const float*>(view.tensors[node.inputs()->Get(1)].constant);
  for (size_t t = 0; t < taps; ++t)
    std::memcpy(w + t * c.padded_channels, filter + t * c.channels, c.channels * sizeof(float));
  if (node.inputs()->size() > 2)
    std::memcpy(w + taps * c.padded_channels, view.tensors[node.inputs()->Get(2)].constant,
                c.channels * sizeof(float));
  return conv;
}

namespace {

struct RowTask {
  const NativeDepthwise* conv;
  const float* x;
  float* y;
  const float* residual;
  // When set, input row iy (of whichever image) is at ring + (iy %
  // ring_rows) * in_w * channels instead of in x.
  const float* ring = nullptr;
  size_t ring_rows = 0;

  const float* input_row(size_t b, size_t iy) const {
    const size_t row = conv->in_w * conv->channels;
    return ring != nullptr ? ring + (iy % ring_rows) * row : x + (b * conv->in_h + iy) * row;
  }
};

#if defined(__x86_64__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // as in swish.h

__attribute__((target("avx512f"))) inline __mmask16 lanes(size_t remaining) {
  return remaining >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << remaining) - 1);
}

// V vectors (16 channels each) from channel c0 of one output pixel.
// `tap_x[t]` points at the pixel's input for valid tap t, `tap_w[t]` at its
// weights; `n` valid taps.
template <int V, bool Residual, ConvActivation Act>
__attribute__((target("avx512f"))) void pixel_block(const NativeDepthwise& c, size_t c0,
                                                    const float* const* tap_x, const float* const* tap_w,
                                                    size_t n, const float* bias, float* y, const float* res) {
  __m512 acc[V];
  __mmask16 mask[V];
  for (int v = 0; v < V; ++v) {
    mask[v] = lanes(c.channels - c0 - 16 * v);
    acc[v] = _mm512_load_ps(bias + c0 + 16 * v);
  }
  for (size_t t = 0; t < n; ++t)
    for (int v = 0; v < V; ++v)
      acc[v] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mask[v], tap_x[t] + c0 + 16 * v),
                               _mm512_load_ps(tap_w[t] + c0 + 16 * v), acc[v]);
  const __m512 vlo = _mm512_set1_ps(c.lo), vhi = _mm512_set1_ps(c.hi);
  for (int v = 0; v < V; ++v) {
    const __m512 sum = _mm512_min_ps(_mm512_max_ps(acc[v], vlo), vhi);
    const __m512 rv = Residual ? _mm512_maskz_loadu_ps(mask[v], res + c0 + 16 * v) : sum;
    _mm512_mask_storeu_ps(y + c0 + 16 * v, mask[v], finish_ps<Residual, Act>(c, sum, rv));
  }
}

// Four output pixels side by side (all their taps inside the row), V
// vectors from channel c0: each weight vector loaded once serves all four.
// `x` points at the first pixel's first tap (kernel row ky_begin... given by
// `rows`, `n_rows` valid kernel rows), `step` floats between the pixels'
// windows.
template <int V, bool Residual, ConvActivation Act>
__attribute__((target("avx512f"))) void four_pixels(const NativeDepthwise& c, size_t c0,
                                                    const float* const* rows, const size_t* kernel_rows,
                                                    size_t n_rows, size_t step, const float* w,
                                                    const float* bias, float* y, const float* res) {
  __m512 acc[4][V];
  __mmask16 mask[V];
  for (int v = 0; v < V; ++v) {
    mask[v] = lanes(c.channels - c0 - 16 * v);
    const __m512 b = _mm512_load_ps(bias + c0 + 16 * v);
    for (int p = 0; p < 4; ++p) acc[p][v] = b;
  }
  const size_t tap_step = c.dilation_w * c.channels;
  for (size_t k = 0; k < n_rows; ++k) {
    const float* xr = rows[k] + c0;
    const float* wr = w + kernel_rows[k] * c.kernel_w * c.padded_channels + c0;
    for (size_t kx = 0; kx < c.kernel_w; ++kx, xr += tap_step, wr += c.padded_channels) {
      for (int v = 0; v < V; ++v) {
        const __m512 wv = _mm512_load_ps(wr + 16 * v);
#pragma GCC unroll 4
        for (int p = 0; p < 4; ++p)
          acc[p][v] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mask[v], xr + p * step + 16 * v), wv, acc[p][v]);
      }
    }
  }
  const __m512 vlo = _mm512_set1_ps(c.lo), vhi = _mm512_set1_ps(c.hi);
  for (int p = 0; p < 4; ++p)
    for (int v = 0; v < V; ++v) {
      const __m512 sum = _mm512_min_ps(_mm512_max_ps(acc[p][v], vlo), vhi);
      const __m512 rv = Residual ? _mm512_maskz_loadu_ps(mask[v], res + p * c.channels + c0 + 16 * v) : sum;
      _mm512_mask_storeu_ps(y + p * c.out_stride + c0 + 16 * v, mask[v],
                            finish_ps<Residual, Act>(c, sum, rv));
    }
}

// P output pixels side by side whose windows lie inside the row, 16
// channels from c0 (the lanes of `mask`), for a KW-wide window of stride S
// and no dilation: each kernel row's (P - 1) * S + KW input vectors are
// loaded once and serve every pixel whose window covers them, each weight
// vector once for all P, so the multiply-adds outnumber the loads (the
// four-pixel path loads 1.25 vectors a multiply-add, which bounds it on
// CPUs that load one 64-byte vector a cycle). Sums in the same order as
// four_pixels and pixel_block: the bias, then the taps row by row.
// With Edge, the strip may reach past the row's ends: bit i of `columns`
// says whether its input column i lies inside the row (a column outside
// reads as zeros, as the padding is: its products add an exact zero), and
// only the first `count` pixels are stored. Small maps (7x7 and 14x14,
// where a 5x5 window leaves few or no pixels whose whole window is inside)
// then take strips too rather than the per-pixel path, which loads two
// vectors a multiply-add.
template <int P, int KW, int S, bool Edge, bool Residual, ConvActivation Act>
__attribute__((target("avx512f"))) void strip(const NativeDepthwise& c, size_t c0, __mmask16 mask,
                                              const float* const* rows, const size_t* kernel_rows,
                                              size_t n_rows, const float* w, const float* bias, float* y,
                                              const float* res, uint32_t columns = 0, size_t count = P) {
  constexpr int kIn = (P - 1) * S + KW;
  __m512 acc[P];
  const __m512 b = _mm512_load_ps(bias + c0);
#pragma GCC unroll 16
  for (int p = 0; p < P; ++p) acc[p] = b;
  const size_t px = c.channels;
  for (size_t k = 0; k < n_rows; ++k) {
    const float* xr = rows[k] + c0;
    const float* wr = w + kernel_rows[k] * KW * c.padded_channels + c0;
    __m512 in[kIn];
#pragma GCC unroll 32
    for (int i = 0; i < kIn; ++i) {
      // A whole vector loads unmasked (the cheaper load), kept in a register
      // rather than folded into each multiply-add that reads it. A column
      // outside the row is a zero vector, not loaded: masked loads of no
      // lanes at addresses outside the row made efficientnet_b0's 7x7
      // layers twice as slow on a Zen 4 core.
      if (Edge && ((columns >> i) & 1) == 0)
        in[i] = _mm512_setzero_ps();
      else
        in[i] = mask == 0xFFFF ? _mm512_loadu_ps(xr + i * px) : _mm512_maskz_loadu_ps(mask, xr + i * px);
      asm("" : "+v"(in[i]));
    }
#pragma GCC unroll 8
    for (int kx = 0; kx < KW; ++kx) {
      const __m512 wv = _mm512_load_ps(wr + kx * c.padded_channels);
#pragma GCC unroll 16
      for (int p = 0; p < P; ++p) acc[p] = _mm512_fmadd_ps(in[p * S + kx], wv, acc[p]);
    }
  }
  const __m512 vlo = _mm512_set1_ps(c.lo), vhi = _mm512_set1_ps(c.hi);
#pragma GCC unroll 16
  for (int p = 0; p < P; ++p) {
    if constexpr (Edge)
      if (static_cast<size_t>(p) >= count) break;
    const __m512 sum = _mm512_min_ps(_mm512_max_ps(acc[p], vlo), vhi);
    const __m512 rv = Residual ? _mm512_maskz_loadu_ps(mask, res + p * c.channels + c0) : sum;
    _mm512_mask_storeu_ps(y + p * c.out_stride + c0, mask, finish_ps<Residual, Act>(c, sum, rv));
  }
}

// The pixels a strip computes.
constexpr size_t kStripPixels = 8;

// What the interior paths read and write for pixels from ox of output row
// r (image b, row oy): the input rows of the window inside the image, each
// from the first tap of pixel ox's window, and the kernel rows they are;
// the weights and bias; where the pixel's outputs and residual are.
struct InteriorPixels {
  const float* rows[kMaxTaps];
  size_t kernel_rows[kMaxTaps];
  size_t n_rows = 0;
  const float *w, *bias;
  float* y;
  const float* res;
  ptrdiff_t first_column = 0;  // pixel ox's first input column (negative left of the row)
};

InteriorPixels interior_pixels(const RowTask& task, size_t b, size_t oy, size_t r, size_t ox) {
  const NativeDepthwise& c = *task.conv;
  InteriorPixels at;
  // Pixel ox's first input column: left of the row for an edge strip's
  // first pixels (its loads there read nothing).
  at.first_column = static_cast<ptrdiff_t>(ox * c.stride_w) - static_cast<ptrdiff_t>(c.pad_left);
  for (size_t ky = 0; ky < c.kernel_h; ++ky) {
    // Unsigned wrap-around puts rows above the image out of range too.
    const size_t iy = oy * c.stride_h + ky * c.dilation_h - c.pad_top;
    if (iy >= c.in_h) continue;
    at.rows[at.n_rows] = task.input_row(b, iy) + at.first_column * static_cast<ptrdiff_t>(c.channels);
    at.kernel_rows[at.n_rows++] = ky;
  }
  at.w = c.weights.as<float>();
  at.bias = at.w + c.kernel_h * c.kernel_w * c.padded_channels;
  const size_t pixel = r * c.out_w + ox;
  at.y = task.y + pixel * c.out_stride + c.out_offset;
  at.res = task.residual != nullptr ? task.residual + pixel * c.channels : nullptr;
  return at;
}

// Output pixels [ox, ox + kStripPixels) of row (b, oy), whose windows lie
// inside the input's columns, 16 channels a strip.
template <int KW, int S, bool Residual, ConvActivation Act>
__attribute__((target("avx512f"))) void interior_strip(const RowTask& task, size_t b, size_t oy, size_t r,
                                                       size_t ox) {
  const NativeDepthwise& c = *task.conv;
  const InteriorPixels at = interior_pixels(task, b, oy, r, ox);
  for (size_t c0 = 0; c0 < c.channels; c0 += 16)
    strip<kStripPixels, KW, S, false, Residual, Act>(c, c0, lanes(c.channels - c0), at.rows, at.kernel_rows,
                                                     at.n_rows, at.w, at.bias, at.y, at.res);
}

// Output pixels [ox, ox + P) of row (b, oy), or those of them before the
// row's end, whose windows may reach past the input's columns.
template <int P, int KW, int S, bool Residual, ConvActivation Act>
__attribute__((target("avx512f"))) void edge_strip(const RowTask& task, size_t b, size_t oy, size_t r,
                                                   size_t ox) {
  const NativeDepthwise& c = *task.conv;
  const InteriorPixels at = interior_pixels(task, b, oy, r, ox);
  constexpr int kIn = (P - 1) * S + KW;
  uint32_t columns = 0;
  for (int i = 0; i < kIn; ++i) {
    const ptrdiff_t column = at.first_column + i;
    if (column >= 0 && column < static_cast<ptrdiff_t>(c.in_w)) columns |= uint32_t{1} << i;
  }
  const size_t count = std::min(static_cast<size_t>(P), c.out_w - ox);
  for (size_t c0 = 0; c0 < c.channels; c0 += 16)
    strip<P, KW, S, true, Residual, Act>(c, c0, lanes(c.channels - c0), at.rows, at.kernel_rows, at.n_rows,
                                         at.w, at.bias, at.y, at.res, columns, count);
}

using StripFn = void (*)(const RowTask&, size_t, size_t, size_t, size_t);

// The strips for the window's width and stride: interior_strip where
// Edge is 0, else edge_strip of Edge pixels; null where there are none.
template <int Edge, bool Residual, ConvActivation Act>
StripFn strip_fn(const NativeDepthwise& c) {
  const bool window = (c.kernel_w == 3 || c.kernel_w == 5 || c.kernel_w == 7) &&
                      (c.stride_w == 1 || c.stride_w == 2) && c.dilation_w == 1;
  if (!window) return nullptr;
  const bool s1 = c.stride_w == 1;
  if constexpr (Edge != 0) {
    switch (c.kernel_w) {
      case 3: return s1 ? edge_strip<Edge, 3, 1, Residual, Act> : edge_strip<Edge, 3, 2, Residual, Act>;
      case 5: return s1 ? edge_strip<Edge, 5, 1, Residual, Act> : edge_strip<Edge, 5, 2, Residual, Act>;
      default: return s1 ? edge_strip<Edge, 7, 1, Residual, Act> : edge_strip<Edge, 7, 2, Residual, Act>;
    }
  } else {
    switch (c.kernel_w) {
      case 3: return s1 ? interior_strip<3, 1, Residual, Act> : interior_strip<3, 2, Residual, Act>;
      case 5: return s1 ? interior_strip<5, 1, Residual, Act> : interior_strip<5, 2, Residual, Act>;
      default: return s1 ? interior_strip<7, 1, Residual, Act> : interior_strip<7, 2, Residual, Act>;
    }
  }
}

// Output pixels [ox, ox + 4) of row (b, oy) whose windows lie inside the
// input's columns.
template <bool Residual, ConvActivation Act>
__attribute__((target("avx512f"))) void interior_four(const RowTask& task, size_t b, size_t oy, size_t r,
                                                      size_t ox) {
  const NativeDepthwise& c = *task.conv;
  const InteriorPixels at = interior_pixels(task, b, oy, r, ox);
  const size_t step = c.stride_w * c.channels;
  size_t c0 = 0;
  for (; c0 + 32 <= c.padded_channels; c0 += 32)
    four_pixels<2, Residual, Act>(c, c0, at.rows, at.kernel_rows, at.n_rows, step, at.w, at.bias, at.y,
                                  at.res);
  if (c0 < c.padded_channels)
    four_pixels<1, Residual, Act>(c, c0, at.rows, at.kernel_rows, at.n_rows, step, at.w, at.bias, at.y,
                                  at.res);
}

template <bool Residual, ConvActivation Act>
__attribute__((target("avx512f"))) void row(const RowTask& task, size_t r) {
  const NativeDepthwise& c = *task.conv;
  const size_t b = r / c.out_h, oy = r % c.out_h;
  const float* w = task.conv->weights.as<float>();
  const float* bias = w + c.kernel_h * c.kernel_w * c.padded_channels;
  const float* tap_x[kMaxTaps];
  const float* tap_w[kMaxTaps];
  // Columns whose whole window is inside the input: [interior_begin, interior_end).
  const size_t span = (c.kernel_w - 1) * c.dilation_w;
  const size_t interior_begin = std::min(c.out_w, (c.pad_left + c.stride_w - 1) / c.stride_w);
  const size_t interior_end = c.in_w + c.pad_left < span + 1
                                  ? 0
                                  : std::min(c.out_w, (c.in_w + c.pad_left - span - 1) / c.stride_w + 1);
  const StripFn strip_at = strip_fn<0, Residual, Act>(c);
  if (strip_at != nullptr) {
    // The row in strips of eight pixels: those whose windows are inside the
    // input's columns as they are, the rest (the row's ends) with padding
    // columns of zeros; a last strip of at most four pixels four wide (the
    // pixels a strip computes past the row's end are not stored, but cost
    // as much as the others: 28x28 maps would spend 14% on them).
    const StripFn edge_at = strip_fn<static_cast<int>(kStripPixels), Residual, Act>(c);
    const StripFn tail_at = strip_fn<4, Residual, Act>(c);
    for (size_t ox = 0; ox < c.out_w; ox += kStripPixels) {
      const StripFn at = ox >= interior_begin && ox + kStripPixels <= interior_end ? strip_at
                         : c.out_w - ox <= 4                                       ? tail_at
                                                                                   : edge_at;
      at(task, b, oy, r, ox);
    }
    return;
  }
  for (size_t ox = 0; ox < c.out_w; ++ox) {
    if (ox >= interior_begin && ox + 4 <= interior_end) {
      interior_four<Residual, Act>(task, b, oy, r, ox);
      ox += 3;
      continue;
    }
    size_t n = 0;
    for (size_t ky = 0; ky < c.kernel_h; ++ky) {
      // Unsigned wrap-around puts rows above the image out of range too.
      const size_t iy = oy * c.stride_h + ky * c.dilation_h - c.pad_top;
      if (iy >= c.in_h) continue;
      for (size_t kx = 0; kx < c.kernel_w; ++kx) {
        const size_t ix = ox * c.stride_w + kx * c.dilation_w - c.pad_left;
        if (ix >= c.in_w) continue;
        tap_x[n] = task.input_row(b, iy) + ix * c.channels;
        tap_w[n] = w + (ky * c.kernel_w + kx) * c.padded_channels;
        ++n;
      }
    }
    const size_t pixel = r * c.out_w + ox;
    float* y = task.y + pixel * c.out_stride + c.out_offset;
    const float* res = Residual ? task.residual + pixel * c.channels : nullptr;
    size_t c0 = 0;
    for (; c0 + 64 <= c.padded_channels; c0 += 64)
      pixel_block<4, Residual, Act>(c, c0, tap_x, tap_w, n, bias, y, res);
    switch ((c.padded_channels - c0) / 16) {
      case 3: pixel_block<3, Residual, Act>(c, c0, tap_x, tap_w, n, bias, y, res); break;
      case 2: pixel_block<2, Residual, Act>(c, c0, tap_x, tap_w, n, bias, y, res); break;
      case 1: pixel_block<1, Residual, Act>(c, c0, tap_x, tap_w, n, bias, y, res); break;
      default: break;
    }
  }
}
#pragma GCC diagnostic pop
#endif

void rows(void* context, size_t first, size_t count) {
#if defined(__x86_64__)
  const auto& task = *static_cast<const RowTask*>(context);
  with_epilogue(task.conv->activation, task.residual != nullptr, [&]<bool Residual, ConvActivation Act>() {
    for (size_t r = first; r < first + count; ++r) row<Residual, Act>(task, r);
  });
#else
  (void)context, (void)first, (void)count;
#endif
}

}  // namespace

void run_native_depthwise(const NativeDepthwise& conv, float* const* data, pthreadpool_t pool) {
  const RowTask task{&conv, data[conv.input], data[conv.output],
                     conv.has_residual ? data[conv.residual] : nullptr};
  pthreadpool_parallelize_1d_tile_1d(pool, rows, const_cast<RowTask*>(&task), conv.batch * conv.out_h, 1, 0);
}

DepthwiseShape shape(const NativeDepthwise& conv) {
  return DepthwiseShape{conv.batch, conv.in_h,     conv.in_w,     conv.channels,   conv.out_h,
                        conv.out_w, conv.kernel_h, conv.stride_h, conv.dilation_h, conv.pad_top};
}

void run_native_depthwise_rows(const NativeDepthwise& conv, float* const* data, const float* ring,
                               size_t ring_rows, size_t first, size_t count) {
  RowTask task{&conv, nullptr, data[conv.output], conv.has_residual ? data[conv.residual] : nullptr};
  task.ring = ring;
  task.ring_rows = ring_rows;
  rows(&task, first, count);
}

}  // namespace etc::xnnpack
