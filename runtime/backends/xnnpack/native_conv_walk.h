#pragma once
// What the walks of a compiled native convolution share: the task a walk's
// items read, and the kernel calls with the convolution's epilogue.
// native_conv_run.cpp walks tiles and panels (and runs a convolution),
// native_conv_segments.cpp the groups of tiles of a reduction cut into
// segments. Internal to those two files.

#include <cstddef>

#include "runtime/backends/xnnpack/native_conv_state.h"
#include "runtime/backends/xnnpack/native_gemm_kernel.h"

namespace etc::xnnpack::conv_walk {

inline constexpr size_t kRows = kNativeGemmRows;          // output pixels per micro-kernel call
inline constexpr size_t kChannels = kNativeGemmChannels;  // output channels per panel

struct ConvTask {
  const NativeConv* conv;
  const float* x;  // the input, read by rows_contiguous() convolutions
  float* y;
  const float* residual;
  // The output pixels this task computes: [first_pixel, first_pixel +
  // pixels), tile 0 starting at the first (one band of a padded-row
  // convolution, else all).
  size_t first_pixel = 0, pixels = 0;
  // Panel by panel (each panel's tiles in turn): the tiles after a panel's
  // first prefetch the next panel's weights (next_weights_part), so reading
  // them from memory overlaps computing (resnet's 512-channel 3x3 layers
  // stream 9.4 MB each); a panel's lone tile (a fully connected node over
  // one row) fetches half of it, the hardware prefetchers the rest
  // (mobilenet_v3_small's classifier, 6.3 MB of weights for one row: 8-15%
  // faster at 1 thread). Tile by tile otherwise: a tile's first panel
  // prefetches the next tile's input rows where they are contiguous (a 1x1
  // convolution's input of megabytes, written by the layer before, comes
  // from L3 or memory: resnet50's 56x56 ones 16-27% faster at 1 thread).
  bool panel_major = false;
};

#if defined(__x86_64__)
using native_kernel::Epilogue;
using native_kernel::run_panel;

// One tile of one panel through the kernel, with the convolution's
// activation and, when `residual`, e.residual.
void run_tile(const NativeConv& c, size_t rows, size_t channels, size_t taps, size_t depth,
              const float* const* a, const float* w, float* out, const Epilogue& e, bool residual);

// Tile `tile`'s row pointers: its `rows` rows of the input written to
// rows_at where the rows are contiguous (rows past them repeating the
// last; their results are not stored), else the indirection's.
const float* const* tile_rows(const ConvTask& task, size_t tile, size_t rows, const float** rows_at);

// Where tile `tile` stores output channel `channel` of its first row.
float* tile_out(const ConvTask& task, size_t tile, size_t channel);

// A tile's epilogue without a prefetch: the convolution's clamp and
// affine, and its residual from output channel `channel` on.
Epilogue tile_epilogue(const ConvTask& task, size_t tile, size_t channel);

// The rows of a tile of a pair of panels (w0, w1) as native_kernel's
// 6 x 64 halves (the second 7 rows where `last`, the lone last row's
// pointers, is set), with the convolution's activation and, when
// `residual`, e.residual; rows c.out_stride floats apart. The halves fetch
// from prefetch0 and prefetch1, `step` bytes apart.
void run_pair_of(const NativeConv& c, bool residual, size_t taps, size_t depth, const float* const* a,
                 const float* const* last, const float* w0, const float* w1, float* out, const Epilogue& e,
                 const float* prefetch0, const float* prefetch1, size_t step);
#endif

// Items of a cut reduction (NativeDepthSplit) for pthreadpool_parallelize_2d
// over a ConvTask: one panel, or with AVX-512 a pair of panels, of one
// group of tiles (native_conv_segments.cpp).
void conv_segmented(void* context, size_t panel, size_t group);
void conv_segmented_pair(void* context, size_t pair, size_t group);

}  // namespace etc::xnnpack::conv_walk
