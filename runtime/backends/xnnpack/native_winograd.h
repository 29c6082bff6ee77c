#pragma once
// Winograd F(4x4, 3x3) and F(2x2, 3x3) for the backend's own convolution
// (native_conv.h), NHWC, AVX-512F or AVX2 + FMA3. A 3x3 stride-1
// convolution computes each m x m block of output pixels ("tile", m = 4 or
// 2) from its (m + 2) x (m + 2) input window with (m + 2)^2 products per
// input-output channel pair ("points": 36 or 16) instead of 9 m^2 (144 or
// 36): the window is transformed (B^T d B), multiplied point by point with
// the filter transformed ahead of time (G g G^T, one matrix per channel
// pair), and transformed back (A^T m A). The products over all channels
// are one GEMM per point — tiles x input channels times input x output
// channels — run on native_conv's micro-kernel; the transforms work on 16
// channels per vector (8 with AVX2). The variant is the shape's
// (native_plan.h winograd_tile): F(4x4) where the tiles are many, F(2x2)
// where few tiles would meet F(4x4)'s larger weights.
//
// Tiles are taken in blocks small enough that a block's transformed input
// and products stay in L2; every thread owns a contiguous range of tiles and
// its own part of the scratch. Where few tiles meet many weights
// (winograd_splits_panels, native_plan.h) each thread instead transforms
// the input of all tiles into a block of its own, then computes a share of
// the output panels, streaming only that share of the transformed weights.
// The output transform applies
// the bias and native_conv's epilogue (clamp, residual, swish or
// hardswish) and stores into the output or its slice of a concatenation.
//
// Accuracy: the interpolation points 0, +-1, +-2 (F(2x2): 0, +-1) keep the
// transformed values within a small factor of the inputs; against a
// double-precision reference the results differ by at most ~5e-6 of each
// output's sum of |x * w| under F(4x4), half that under F(2x2)
// (tests/runtime/backends/xnnpack/xnnpack_winograd_test.cpp).

#include <pthreadpool.h>

#include <cstddef>
#include <memory>
#include <span>

#include "runtime/backends/xnnpack/blob_reader.h"
#include "runtime/backends/xnnpack/native_plan.h"
#include "runtime/backends/xnnpack/stages.h"
#include "runtime/core/result.h"

namespace etc::xnnpack {

// Which 3x3 convolutions run as Winograd, and as which variant (compile
// spec "winograd"): none; those winograd_pays picks, each as the variant its
// filter was transformed for ahead of time, else winograd_tile's; every one,
// so; every one as F(2x2, 3x3); every one as F(4x4, 3x3). WinogradShape,
// winograd_tile and winograd_pays are in native_plan.h.
enum class WinogradMode { kOff, kAuto, kOn, kOn2x2, kOn4x4 };

// Whether a checked node can run as Winograd: a one-group Convolution2d
// with a 3x3 window, stride 1, dilation 1 and no flags.
bool winograd_applies(const fb::Node& node);

struct Winograd;
struct WinogradDeleter {
  void operator()(Winograd* w) const;
};
using WinogradPtr = std::unique_ptr<Winograd, WinogradDeleter>;

// Winograd F(shape.tile x shape.tile, 3x3) (tile 4 or 2). Reads the
// transformed filter in place from `transformed` (transform_winograd_filter's
// layout for that tile, native_plan.h: a program's WinogradPanels or
// WinogradPanels2x2 constant), or, where that is null, transforms the
// filter (OHWI, [out_c][3][3][in_c]) into memory of its own; copies the
// bias (null: none); plans its scratch for `threads` threads. Errors:
// DelegateMemoryAllocationFailed, Internal (another tile).
Result<WinogradPtr> compile_winograd(const WinogradShape& shape, const float* filter,
                                     const float* transformed, const float* bias, size_t threads);

// The scratch a run writes (the transformed input and the products of a
// block of tiles per thread), winograd_scratch_floats floats, is memory
// given before the first run by share_winograd_scratch: the convolutions
// of one delegate run one at a time and share it.
size_t winograd_scratch_floats(const Winograd& w);
void share_winograd_scratch(Winograd& w, float* memory);

// The shape compile_winograd was given, its variant included.
const WinogradShape& winograd_shape(const Winograd& w);

// The transformed filter compile_winograd was given to read in place
// (`transformed`), all of it; empty where it transformed the filter itself.
std::span<const float> winograd_weights_in_place(const Winograd& w);

// Runs the convolution of x into data[e.output] as `e` says (residual read
// from `residual` when e.has_residual), clamping the sums to [lo, hi] first.
void run_winograd(const Winograd& w, const NativeEpilogue& e, float lo, float hi, const float* x, float* y,
                  const float* residual, pthreadpool_t pool);

}  // namespace etc::xnnpack
