#pragma once
// The native convolution's state (native_conv.h keeps it opaque), shared by
// its compile (native_conv.cpp), its run (native_conv_run.cpp) and where
// the kernel's input rows come from (native_conv_rows.cpp): the
// indirection tables, the zero-bordered band copies of padded-row
// convolutions, and the rows of a pointwise convolution read straight from
// its input.

#include <pthreadpool.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "runtime/backends/xnnpack/native_conv.h"
#include "runtime/backends/xnnpack/native_plan.h"
#include "runtime/backends/xnnpack/native_winograd.h"
#include "runtime/core/aligned_buffer.h"

namespace etc::xnnpack {

struct NativeConv : NativeEpilogue {
  uint32_t input = 0;
  size_t batch = 0, in_h = 0, in_w = 0, in_c = 0, out_h = 0, out_w = 0, out_c = 0;
  size_t kernel_h = 0, kernel_w = 0, stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  size_t pad_top = 0, pad_left = 0;
  float lo = -INFINITY, hi = INFINITY;
  size_t panels = 0, panel_floats = 0, tiles = 0;
  AlignedBuffer packed;                // per panel: 32 biases, then [taps][in_c][32] weights
  const float* panels_data = nullptr;  // packed, or the blob's prepacked panels
  AlignedBuffer zeros;                 // in_c zeros read for padding taps
  std::vector<const float*>
      indirection;  // [tile][tap][kNativeGemmRows] input pixel rows (not rows_contiguous())
  const float* indirection_input = nullptr;
  // With few input channels the input is copied into a zero-bordered
  // buffer, so that a window row — kernel_w pixels of in_c channels — is
  // contiguous and is one "tap" of kernel_w * in_c floats (the packed weights
  // are in that order already): resnet's 7x7 stem has 7 taps of 21 floats
  // instead of 49 taps of 3, each of which reloads 12 row pointers. The
  // copy holds one band of output rows' input at a time (band_rows output
  // rows, band_padded_rows rows of the padded image), so it stays small
  // whatever the image: PP-OCR's 640x640 detector copied 4.9 MB, and kept
  // 2.4 MB of row pointers into it. The indirection then covers one band:
  // every band's tiles read the same places of the same copy.
  bool padded_rows = false;
  size_t padded_h = 0, padded_w = 0;
  size_t band_rows = 0, band_padded_rows = 0;
  AlignedBuffer padded;
  // read_input_as_nchw: the input is the delegate's NCHW argument, turned
  // to NHWC as it is copied into the zero-bordered buffer.
  bool nchw_input = false;
  // Set when the convolution runs as Winograd F(4x4, 3x3) instead; then
  // packed, zeros and the indirection stay empty.
  WinogradPtr winograd;
  // scale_input: the per-channel scale tensor (-1: none) and where the
  // packed weights scaled by it are written on each run (memory the
  // delegate's scaled convolutions share: share_scaled_weights).
  int64_t input_scale = -1;
  float* scaled = nullptr;
  const float* weights = nullptr;  // packed, or scaled when input_scale is set
  // A reduction cut into segments (native_plan.h native_depth_split), for
  // a convolution without padded rows; segment_taps == 0 when it is not.
  NativeDepthSplit split;

  size_t taps() const { return kernel_h * kernel_w; }
  size_t kernel_taps() const { return padded_rows ? kernel_h : taps(); }
  size_t tap_depth() const { return padded_rows ? kernel_w * in_c : in_c; }
  size_t pixels() const { return batch * out_h * out_w; }
  // A pointwise convolution's tile rows are consecutive input pixels: their
  // pointers are made per tile (contiguous_rows), not stored.
  bool rows_contiguous() const { return !padded_rows && pointwise_window(); }
  // 1x1, stride 1, no padding: output pixel p reads input pixel p alone.
  bool pointwise_window() const {
    return kernel_h == 1 && kernel_w == 1 && stride_h == 1 && stride_w == 1 && pad_top == 0 &&
           pad_left == 0 && in_h == out_h && in_w == out_w;
  }
};

// Points each (tile, kernel row, row) of one band at its window row in the
// band's zero-bordered copy (padded rows).
void build_band_indirection(NativeConv& c);

// Copies the band of image n's input x starting at padded row `first` into
// the zero-bordered buffer, on the pool.
void fill_band(NativeConv& c, const float* x, size_t n, size_t first, pthreadpool_t pool);

// Points each (tile, tap, row) at its pixel of x, or at the zeros, and
// remembers x (c.indirection_input).
void build_indirection(NativeConv& c, const float* x);

// Row pointers of a tile of `rows` consecutive pixels from pixel `first` of
// x (in_c floats each); the rows past the last repeat it (their results are
// not stored).
inline void contiguous_rows(const float* x, size_t first, size_t rows, size_t in_c, const float** a) {
  for (size_t r = 0; r < kNativeGemmRows; ++r) a[r] = x + (first + (r < rows ? r : rows - 1)) * in_c;
}

}  // namespace etc::xnnpack
