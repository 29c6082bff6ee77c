#include <algorithm>
#include <cstring>

#include "runtime/backends/xnnpack/native_conv_state.h"

namespace etc::xnnpack {
namespace {

constexpr size_t kRows = kNativeGemmRows;

// One band of image n's zero-bordered copy, starting at padded row `first`.
struct BandFill {
  NativeConv* conv;
  const float* x;
  size_t n, first;
};

// to[ix * C + ch] = plane[ch * plane_floats + ix] for ix < width.
template <size_t C>
void interleave_planes(const float* plane, size_t plane_floats, size_t width, float* __restrict to) {
  const float* p[C];
  for (size_t ch = 0; ch < C; ++ch) p[ch] = plane + ch * plane_floats;
  for (size_t ix = 0; ix < width; ++ix)
    for (size_t ch = 0; ch < C; ++ch) to[ix * C + ch] = p[ch][ix];
}

// Row j of the band: the input row where there is one, zeros above and below
// the image; the left and right borders stay zero from allocation. An NCHW
// input is turned to NHWC on the way (padded rows serve convolutions of
// fewer than 16 channels: a pixel's channels from as many planes).
void fill_band_row(void* context, size_t j) {
  const auto& [conv, x, n, first] = *static_cast<const BandFill*>(context);
  const NativeConv& c = *conv;
  const size_t row = c.in_w * c.in_c;
  float* to = c.padded.as<float>() + j * c.padded_w * c.in_c + c.pad_left * c.in_c;
  // Unsigned wrap-around puts rows above the image past its end too.
  const size_t iy = first + j - c.pad_top;
  if (iy >= c.in_h) {
    std::memset(to, 0, row * sizeof(float));
  } else if (!c.nchw_input) {
    std::memcpy(to, x + (n * c.in_h + iy) * row, row * sizeof(float));
  } else {
    const float* plane = x + (n * c.in_c * c.in_h + iy) * c.in_w;
    const size_t plane_floats = c.in_h * c.in_w;
    if (c.in_c == 3) {  // an RGB image: a constant stride the compiler vectorizes
      interleave_planes<3>(plane, plane_floats, c.in_w, to);
      return;
    }
    for (size_t ix = 0; ix < c.in_w; ++ix)
      for (size_t ch = 0; ch < c.in_c; ++ch) to[ix * c.in_c + ch] = plane[ch * plane_floats + ix];
  }
}

}  // namespace

// Points each (tile, kernel row, row) of one band at the start of its
// window row in the band's zero-bordered copy. Rows past the band's last
// pixel repeat it; their results are not stored (a shorter last band's
// tiles read rows of the copy it did not fill, and store none of them).
void build_band_indirection(NativeConv& c) {
  const size_t pixels = c.band_rows * c.out_w, row_floats = c.padded_w * c.in_c;
  for (size_t tile = 0; tile < c.tiles; ++tile)
    for (size_t r = 0; r < kRows; ++r) {
      const size_t p = std::min(tile * kRows + r, pixels - 1);
      const float* start = c.padded.as<float>() + (p / c.out_w) * c.stride_h * row_floats +
                           (p % c.out_w) * c.stride_w * c.in_c;
      for (size_t kh = 0; kh < c.kernel_h; ++kh)
        c.indirection[(tile * c.kernel_h + kh) * kRows + r] = start + kh * c.dilation_h * row_floats;
    }
}

// The band's rows (those past the copy's end are never read), on the pool.
void fill_band(NativeConv& c, const float* x, size_t n, size_t first, pthreadpool_t pool) {
  BandFill fill{&c, x, n, first};
  const size_t rows = std::min(c.band_padded_rows, c.padded_h - first);
  pthreadpool_parallelize_1d(pool, fill_band_row, &fill, rows, 0);
}

// Points each (tile, tap, row) at its input pixel, or at the zeros. Rows past
// the last pixel repeat it; their results are not stored.
void build_indirection(NativeConv& c, const float* x) {
  const size_t taps = c.taps(), pixels = c.pixels();
  for (size_t tile = 0; tile < c.tiles; ++tile)
    for (size_t r = 0; r < kRows; ++r) {
      const size_t p = std::min(tile * kRows + r, pixels - 1);
      const size_t n = p / (c.out_h * c.out_w), oy = p / c.out_w % c.out_h, ox = p % c.out_w;
      for (size_t t = 0; t < taps; ++t) {
        const size_t kh = t / c.kernel_w, kw = t % c.kernel_w;
        // Unsigned wrap-around makes rows and columns above/left of the image
        // fail the bounds test as well.
        const size_t iy = oy * c.stride_h + kh * c.dilation_h - c.pad_top;
        const size_t ix = ox * c.stride_w + kw * c.dilation_w - c.pad_left;
        const bool inside = iy < c.in_h && ix < c.in_w;
        c.indirection[(tile * taps + t) * kRows + r] =
            inside ? x + ((n * c.in_h + iy) * c.in_w + ix) * c.in_c : c.zeros.as<float>();
      }
    }
  c.indirection_input = x;
}

}  // namespace etc::xnnpack
