#pragma once
// The backend's own NHWC convolution for CPUs with AVX-512F or AVX2 + FMA3:
// an implicit GEMM (XNNPACK's indirection scheme) whose micro-kernel
// computes 12 output pixels x 32 output channels, in 24 accumulators with
// AVX-512 (x 16 in 12 for a narrow last panel; a whole tile of two whole
// panels as two halves of 6 x 64) and as four blocks of 6 x 16 in 12 with
// AVX2. XNNPACK's own AVX-512 kernel keeps 7 accumulators, fewer
// than two FMA pipes of latency 4 need; its AVX2 kernel, as Debian builds
// it, keeps one accumulator in memory. Used for blob Convolution2d nodes
// with one group and FullyConnected nodes (a 1x1 convolution over the rows
// of their input) where runs_natively picks them; every other node, and
// every CPU without either instruction set, stays on XNNPACK (the
// micro-kernel also serves Winograd's products and native_deconv.h).
//
// compile_native_conv packs the filter and bias (reading the blob, so it runs
// at init) into 32-channel panels; run_native_conv builds the indirection
// buffer on first use and again whenever the input moves, then runs on the
// shared pthreadpool. A pointwise window (1x1, stride 1, unpadded, and every
// fully connected node) has none: a tile's rows are consecutive input
// pixels, pointed at as the tile starts. A convolution with few input
// channels copies its input into zero-bordered rows one band of output rows
// at a time, and its indirection, made at init, covers one band. Running
// allocates nothing after the first call.

#include <pthreadpool.h>

#include <cmath>
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "runtime/backends/xnnpack/blob_reader.h"
#include "runtime/backends/xnnpack/native_isa.h"
#include "runtime/backends/xnnpack/native_plan.h"
#include "runtime/backends/xnnpack/native_winograd.h"
#include "runtime/backends/xnnpack/stages.h"
#include "runtime/core/aligned_buffer.h"
#include "runtime/core/result.h"

namespace etc::xnnpack {

// Whether a checked node is a convolution the kernel takes: one it can run
// (can_run_natively) on which it beats XNNPACK's (native_plan.h
// native_gemm_pays; `folds_activation`: a swish or hardswish follows that
// the native epilogue computes).
bool runs_natively(const BlobView& view, const fb::Node& node, bool folds_activation = false);
// Whether a checked convolution the kernel computes directly (not as
// Winograd) copies its input into zero-bordered rows (native_plan.h
// native_padded_rows).
bool uses_padded_rows(const BlobView& view, const fb::Node& node);
// Whether the kernel can compute a checked node at all: a Convolution2d with
// one group or a FullyConnected, without flags.
bool can_run_natively(const fb::Node& node);

// rows x channels (rows <= 12, channels <= 32) of y, rows y_stride floats
// apart, = rows a[0], ..., a[rows - 1] of `depth` floats times a packed
// panel w (32 biases, then depth x 32 weights), clamped to [lo, hi]. `a`
// holds 12 readable rows whatever `rows` is. `prefetch`, where set: depth
// 64-byte lines from there (of a panel read next), prefetch_step bytes
// apart (native_fetch_step), are brought towards the core as the reduction
// goes. Needs native_convolution_available().
void native_gemm_panel(size_t rows, size_t channels, size_t depth, const float* const* a, const float* w,
                       float* y, size_t y_stride, float lo = -INFINITY, float hi = INFINITY,
                       const float* prefetch = nullptr, size_t prefetch_step = 64);

// `rows` (12, or 13: a lone last row taken in by the 6 before it) rows x
// 64 channels of y (rows y_stride floats apart) = rows a[0], ...,
// a[rows - 1] of `depth` floats times two packed panels, w0 and the one
// panel_floats after it, unclamped: native_gemm_panel over both panels, as
// two halves of 6 (and 7) rows against both panels' weights read side by
// side (ten loads for 24 multiply-adds instead of fourteen), the same sums
// bit for bit. prefetch0 and prefetch1, where set: the halves each bring
// depth 64-byte lines from there, prefetch_step bytes apart, towards the
// core. Needs native_avx512_available().
void native_gemm_pair(size_t rows, size_t depth, const float* const* a, const float* w0, size_t panel_floats,
                      float* y, size_t y_stride, const float* prefetch0 = nullptr,
                      const float* prefetch1 = nullptr, size_t prefetch_step = 64);

// Zeroed floats, zero up to the next 64-byte boundary too (padding rows and
// idle panel lanes read as zeros); empty when out of memory.
AlignedBuffer zeroed_floats(size_t count);

// How compile_native_conv builds a convolution: whether 3x3 stride-1
// convolutions may run as Winograd (native_winograd.h), and for how many
// threads (the Winograd scratch has a part per thread).
struct NativeConvOptions {
  WinogradMode winograd = WinogradMode::kAuto;
  size_t threads = 1;
  // Batched matrix products on the kernel (native_matmul.h), softmax and
  // layer norm rows on vector code (native_rows.h) where they can take
  // them; off under native_convolution=off.
  bool native_kernels = true;
};

struct NativeConv;
struct NativeConvDeleter {
  void operator()(NativeConv* conv) const;
};
using NativeConvPtr = std::unique_ptr<NativeConv, NativeConvDeleter>;

// `node` must have passed check_node and runs_natively. Errors:
// DelegateMemoryAllocationFailed.
Result<NativeConvPtr> compile_native_conv(const BlobView& view, const fb::Node& node,
                                          const NativeConvOptions& options = {});

// The Winograd variant compile_native_conv made the convolution: its output
// tile side (4: F(4x4, 3x3), 2: F(2x2, 3x3)), 0 where it runs direct.
size_t winograd_tile_of(const NativeConv& conv);

// Weights the convolution reads in place from the blob at every run that
// the blob does not list as packed (a Winograd filter transformed ahead of
// time: winograd_weights_in_place); empty for the rest.
std::span<const float> weights_read_in_place(const NativeConv& conv);

// Makes a direct (not Winograd) convolution compute conv(x * s) instead of
// conv(input): on each run it scales its packed weights by s (per input
// channel; s holds one value per channel, for one image or for all) and
// reads x (stages.h StagePlan::input_scale). It writes the scaled weights
// to memory given before its first run by share_scaled_weights, of
// scaled_weights_floats floats; the convolutions of one delegate run one
// at a time and share it. Errors: Internal for a Winograd convolution.
Status scale_input(NativeConv& conv, uint32_t x, uint32_t s);
// Floats the scaled weights take (0 without scale_input).
size_t scaled_weights_floats(const NativeConv& conv);
void share_scaled_weights(NativeConv& conv, float* memory);

// Bytes of the padded input band a convolution with padded rows keeps
// (0 for others).
size_t padded_band_bytes(const NativeConv& conv);

// Floats of scratch a Winograd convolution writes as it runs (0 for a
// direct one), and where: memory given before its first run, which the
// convolutions of one delegate share (native_winograd.h).
size_t winograd_scratch_floats(const NativeConv& conv);
void share_winograd_scratch(NativeConv& conv, float* memory);

// Makes a convolution with padded rows (few input channels and a window
// wider than one pixel: native_plan.h native_padded_rows) read its input as
// NCHW, the layout of the delegate's argument: its copy into the
// zero-bordered buffer turns it to NHWC, so the argument needs no staging
// buffer and no transpose (stages.h StagePlan::nchw_input). Errors:
// Internal for any other convolution.
Status read_input_as_nchw(NativeConv& conv);

// Where the convolution stores and what its epilogue does (stages.h).
NativeEpilogue& epilogue(NativeConv& conv);

// The tensor the convolution reads.
uint32_t input_tensor(const NativeConv& conv);

// Whether a compiled convolution is pointwise: a 1x1 Convolution2d with
// stride 1 and no padding, computed directly (not as Winograd) on its own
// input (no folded input scale), so output pixel p reads input pixel p alone.
bool is_pointwise(const NativeConv& conv);

// For a pointwise convolution: output pixels [first, first + count) (of all
// images, in order) from the input at x, stored count x (output channels)
// floats at y, with the convolution's clamp and its epilogue's activation
// (not its residual or output placement). Runs on the calling thread.
void run_native_pointwise(const NativeConv& conv, const float* x, size_t first, size_t count, float* y);

// `data[t]` is where tensor t lives (float32).
void run_native_conv(NativeConv& conv, float* const* data, pthreadpool_t pool);

}  // namespace etc::xnnpack
