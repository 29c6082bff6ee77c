// im2col and col2im over the 3-D window layout. Both walk one output (or
// input) line at a time and clip the innermost range once per line, so the
// innermost loops are plain copies or strided adds without bounds checks.
#include <algorithm>

#include "runtime/kernels/portable/conv_kernels.h"

namespace etc {
namespace {

template <typename T>
void copy_row(const T* src, int64_t offset, int64_t stride, int64_t lo, int64_t hi, int64_t n, T* dst) {
  std::fill(dst, dst + lo, T(0));
  if (stride == 1) {
    std::copy(src + offset + lo, src + offset + hi, dst + lo);
  } else {
    for (int64_t o = lo; o < hi; ++o) dst[o] = src[offset + o * stride];
  }
  std::fill(dst + hi, dst + n, T(0));
}

// Calls f(kd, kh, w_off, lo, hi) for every kernel tap (kd, kh, kw) of g, where
// w_off is the tap's width offset and [lo, hi) the positions along a line of
// `width` whose partner index (w_off + position * stride) lies in [0, len).
template <typename F>
void for_each_tap(const WindowGeometry& g, int64_t len, int64_t width, F&& f) {
  for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
    for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
      for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
        const int64_t w_off = kw * g.dilation[2] - g.pad_begin[2];
        int64_t lo = 0, hi = 0;
        valid_output_range(w_off, g.stride[2], len, width, &lo, &hi);
        f(kd, kh, w_off, lo, hi);
      }
    }
  }
}

}  // namespace

template <typename T>
void im2col(const WindowGeometry& g, const T* x, int64_t channels, int64_t line_begin, int64_t line_end,
            T* col) {
  const int64_t width = g.out[2];
  for (int64_t c = 0; c < channels; ++c) {
    const T* xc = x + c * g.in_size();
    for_each_tap(g, g.in[2], width, [&](int64_t kd, int64_t kh, int64_t w_off, int64_t lo, int64_t hi) {
      for (int64_t line = line_begin; line < line_end; ++line, col += width) {
        const int64_t id = (line / g.out[1]) * g.stride[0] - g.pad_begin[0] + kd * g.dilation[0];
        const int64_t ih = (line % g.out[1]) * g.stride[1] - g.pad_begin[1] + kh * g.dilation[1];
        if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1]) {
          std::fill(col, col + width, T(0));
          continue;
        }
        copy_row(xc + (id * g.in[1] + ih) * g.in[2], w_off, g.stride[2], lo, hi, width, col);
      }
    });
  }
}

template <typename T>
void col2im(const WindowGeometry& g, const T* col, int64_t channels, T* y) {
  const int64_t width = g.in[2];
  for (int64_t c = 0; c < channels; ++c) {
    T* yc = y + c * g.out_size();
    for_each_tap(g, g.out[2], width, [&](int64_t kd, int64_t kh, int64_t w_off, int64_t lo, int64_t hi) {
      for (int64_t id = 0; id < g.in[0]; ++id) {
        const int64_t od = id * g.stride[0] - g.pad_begin[0] + kd * g.dilation[0];
        for (int64_t ih = 0; ih < g.in[1]; ++ih, col += width) {
          const int64_t oh = ih * g.stride[1] - g.pad_begin[1] + kh * g.dilation[1];
          if (od < 0 || od >= g.out[0] || oh < 0 || oh >= g.out[1]) continue;
          T* row = yc + (od * g.out[1] + oh) * g.out[2];
          const int64_t s = g.stride[2];
          for (int64_t iw = lo; iw < hi; ++iw) row[w_off + iw * s] += col[iw];
        }
      }
    });
  }
}

template void im2col<float>(const WindowGeometry&, const float*, int64_t, int64_t, int64_t, float*);
template void im2col<double>(const WindowGeometry&, const double*, int64_t, int64_t, int64_t, double*);
template void col2im<float>(const WindowGeometry&, const float*, int64_t, float*);
template void col2im<double>(const WindowGeometry&, const double*, int64_t, double*);

}  // namespace etc
