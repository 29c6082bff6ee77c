#pragma once
// What the backend's own convolution kernels (native_conv.h,
// native_winograd.h) take and how they lay out their weights: shared by
// preprocess, which packs weights ahead of time (xnnpack_blob.fbs
// WeightPacking), and the runtime. Plain arithmetic: no XNNPACK, no
// AVX-512, so the compiler builds it on any host.

#include <cstddef>
#include <cstdint>

namespace etc::xnnpack {

// The GEMM micro-kernel's tile: output rows (pixels) per call, output
// channels per packed panel.
inline constexpr size_t kNativeGemmRows = 12;
inline constexpr size_t kNativeGemmChannels = 32;

// Weights read next are fetched while tiles compute, each of a few tiles
// fetching a part (its calls stepping less than a line a reduction step
// where the parts are more than two): at most this many parts, each a line
// every other step at most.
inline constexpr size_t kNativeMaxFetchParts = 4;

// How many tiles share such a fetch where `tiles` whole tiles could: at
// least two (the 12 x 32 kernels then fetch a line a step, half a panel a
// call), at most kNativeMaxFetchParts.
inline size_t native_fetch_parts(size_t tiles) {
  return tiles < 2 ? 2 : tiles > kNativeMaxFetchParts ? kNativeMaxFetchParts : tiles;
}

// The bytes between a kernel call's successive fetches where it fetches
// one of `parts` parts of `lines` 64-byte lines a reduction step (a panel
// has two): at most a line, as the kernels take it (a call over a part of
// more than a line a step, a lone panel's before a pair, fetches its first
// lines).
inline size_t native_fetch_step(size_t parts, size_t lines) {
  const size_t step = (64 * lines + parts - 1) / parts;
  return step < 64 ? step : 64;
}

// A one-group convolution (or a fully connected node: a 1x1 convolution
// over its rows) as the GEMM kernel sees it.
struct NativeGemmShape {
  uint64_t out_c = 0;   // output channels
  uint64_t pixels = 0;  // output pixels, all images
  uint64_t depth = 0;   // reduction depth: taps x input channels
  // Few input channels and a window wider than one pixel: the input is
  // copied into a zero-bordered buffer and a window row is one tap.
  bool padded_rows = false;
};

// Weights (floats) from which a node of at most one row tile is native
// whatever its depth: 256 KiB.
inline constexpr uint64_t kNativeStreamedWeights = uint64_t{1} << 16;

// Whether a convolution with `in_c` input channels reads its input through
// a zero-bordered copy, a window row (kernel_w * in_c floats) being one tap.
inline bool native_padded_rows(uint64_t in_c, uint64_t kernel_w, uint64_t dilation_w) {
  return in_c < 16 && kernel_w > 1 && dilation_w == 1;
}

// Whether the window of a one-group convolution without flags is one
// Winograd F(4x4, 3x3) and F(2x2, 3x3) compute: 3x3, stride 1, undilated.
inline bool winograd_window(uint64_t kernel_h, uint64_t kernel_w, uint64_t stride_h, uint64_t stride_w,
                            uint64_t dilation_h, uint64_t dilation_w) {
  return kernel_h == 3 && kernel_w == 3 && stride_h == 1 && stride_w == 1 && dilation_h == 1 &&
         dilation_w == 1;
}

// Whether the kernel beats XNNPACK's on `s`: an output channel count that
// leaves at most a quarter of the panel lanes idle (a last panel of at most
// 16 channels runs a 16-wide kernel; XNNPACK's 16-wide tiles leave a third
// idle at 24 channels), and either at least 48 output pixels (four 12-pixel
// tiles) and a reduction depth of at least 32, or 16 with padded rows or
// when `folds_activation` (a swish or hardswish follows that the native
// epilogue computes, saving a pass XNNPACK would make); or at most 12
// pixels against weights of 256 KiB or more (a classifier head, a
// squeeze-excitation block's larger layers: their time is reading the
// weights once, which the kernel does in place from the program where
// XNNPACK reads a packed copy, no faster: mobilenet_v2's 1280->1000 head
// 226 against 228 us; and XNNPACK packs its copy at init: lraspp's init
// 19.4 -> 6.4 ms and mobilenet_v3_small's 4.7 -> 3.2 at 2 threads when
// their largest squeeze-excitation layers moved from XNNPACK, the runs as
// fast). XNNPACK keeps the rest: it has
// narrower kernels for few pixels and shallow depth (a 16->96 1x1
// convolution at 112x112 took twice as long on the native kernel).
// Against XNNPACK's AVX2 kernel (`rival` kXnnpackAvx2: a CPU with AVX2 and
// not AVX-512), which Debian's build runs with one accumulator kept in
// memory, a depth of 16 suffices in every case (that 16->96 convolution:
// 1.39 ms on XNNPACK, 0.77 ms native, on one Zen 3 core).
enum class GemmRival { kXnnpackAvx512, kXnnpackAvx2 };
bool native_gemm_pays(const NativeGemmShape& s, bool folds_activation,
                      GemmRival rival = GemmRival::kXnnpackAvx512);

// A reduction of `taps` taps of `tap_depth` steps each, cut into pieces of
// at most `max_steps` steps (at least one): whole taps where a tap fits
// (taps_per_piece of them, as evenly as whole taps allow), else one tap in
// even pieces of depth_per_piece steps.
struct ReductionCut {
  size_t taps_per_piece = 0;
  size_t depth_per_piece = 0;
};
ReductionCut cut_reduction(size_t taps, size_t tap_depth, size_t max_steps);

// One piece of a cut reduction: taps [tap, tap + taps), steps [k0, k0 +
// depth) of each; the first and the last of the reduction.
struct ReductionPiece {
  size_t tap, taps, k0, depth;
  bool first, last;
};

// Calls f(piece) for each piece of `cut`, in the reduction's order.
template <class F>
void for_each_piece(size_t taps, size_t tap_depth, const ReductionCut& cut, F&& f) {
  for (size_t t = 0; t < taps; t += cut.taps_per_piece)
    for (size_t k0 = 0; k0 < tap_depth; k0 += cut.depth_per_piece) {
      const size_t n = taps - t < cut.taps_per_piece ? taps - t : cut.taps_per_piece;
      const size_t depth = tap_depth - k0 < cut.depth_per_piece ? tap_depth - k0 : cut.depth_per_piece;
      f(ReductionPiece{t, n, k0, depth, t == 0 && k0 == 0, t + n == taps && k0 + depth == tap_depth});
    }
}

// A piece's row pointers, from a[tap * kNativeGemmRows + row]: the taps'
// own where the piece spans whole taps, else its tap's advanced by k0,
// written to `shifted` (kNativeGemmRows of them).
inline const float* const* piece_rows(const float* const* a, const ReductionPiece& p, size_t tap_depth,
                                      const float** shifted) {
  if (p.depth == tap_depth) return a + p.tap * kNativeGemmRows;
  for (size_t r = 0; r < kNativeGemmRows; ++r) shifted[r] = a[p.tap * kNativeGemmRows + r] + p.k0;
  return shifted;
}

// Where the kernel reads a piece's weights from a packed panel `w`: it reads
// a bias before the weights, so one step before the piece's first (the
// bias itself for the first piece).
inline const float* piece_weights(const float* w, const ReductionPiece& p, size_t tap_depth) {
  return w + (p.tap * tap_depth + p.k0) * kNativeGemmChannels;
}

// How a direct convolution cuts its reduction when a panel's weights
// (depth x 32 floats) would not stay in a core's cache (`cache_bytes`)
// while its tiles read them in turn: resnet's 3x3 512-channel layers have
// 590 KB per panel, streamed from L3 once per 6-row block on AVX2. Each
// segment's share of a panel is at most a quarter of the cache; the tiles
// of a group compute one segment after another, their partial sums kept
// aside, so a segment is read from memory once per group and from cache by
// the group's other tiles. Segments are whole taps (segment_taps of them)
// where a tap fits, else one tap cut into pieces of segment_depth input
// channels; a group is as many tiles as read about half the cache of input
// per segment (at least one, at most kNativeGroupTiles: the partial sums
// live on the stack), the groups as even as that allows. segment_taps == 0:
// no cut. With AVX-512 a task reads two panels' segments side by side
// (micro_kernel_pair), half the cache of weights: resnet50's 7x7x512 3x3
// layers 5-8% faster at 1 thread and 9-12% at 2 than panel by panel.
inline constexpr size_t kNativeGroupTiles = 16;
struct NativeDepthSplit {
  size_t segment_taps = 0;
  size_t segment_depth = 0;
  size_t group_tiles = 0;
};
NativeDepthSplit native_depth_split(size_t taps, size_t tap_depth, size_t tiles, size_t cache_bytes);

// The filter [out_c][depth] and bias packed as the kernel reads them: per
// 32 output channels ("panel"), 32 biases (zero without a bias), then
// depth x 32 weights; the lanes of a last panel past out_c are zero.
// native_panels_floats is their count (out_c and depth below 2^30 each).
size_t native_panels_floats(size_t out_c, size_t depth);
// Writes all native_panels_floats(out_c, depth) floats of `panels`.
void pack_native_panels(const float* filter, const float* bias, size_t out_c, size_t depth, float* panels);
// The filter back from its panels (the bias is not needed: the blob keeps
// it as a tensor of its own).
void unpack_native_panels(const float* panels, size_t out_c, size_t depth, float* filter);

// Winograd F(m x m, 3x3) (native_winograd.h) for an output tile side m of
// 4 or 2: (m + 2)^2 products per tile and channel pair ("points").
inline constexpr size_t winograd_points(size_t tile) { return (tile + 2) * (tile + 2); }

// One 3x3 stride-1 convolution's shape: NHWC input [batch, in_h, in_w,
// in_c], output [batch, out_h, out_w, out_c]; and the Winograd variant it
// runs as, F(tile x tile, 3x3).
struct WinogradShape {
  size_t batch = 1, in_h = 0, in_w = 0, in_c = 0, out_h = 0, out_w = 0, out_c = 0;
  size_t pad_top = 0, pad_left = 0;
  size_t tile = 4;
};

// Output channels as the GEMM panels pad them: 32-wide panels, a last one
// of at most 16 channels 16 wide.
size_t native_panel_padded(size_t out_c);

// A 3x3 filter (OHWI, [out_c][3][3][in_c]) transformed for Winograd
// F(tile x tile, 3x3), U = G g G^T per channel pair (native_winograd.h),
// laid out as its GEMMs read it: per point (36 or 16) per 32 output
// channels ("panel"), 32 zero biases then in_c rounded up to 16 rows of 32
// lanes, zero past out_c and in_c. Computed in double, each sum in the same
// order on every CPU, with no fused multiply-add (the file is built with
// -ffp-contract=off): preprocess (WeightPacking WinogradPanels,
// WinogradPanels2x2) and the runtime write the same bits.
// winograd_filter_floats is the count (out_c and in_c below 2^30 each).
size_t winograd_filter_floats(size_t out_c, size_t in_c, size_t tile);
// Writes all winograd_filter_floats(out_c, in_c, tile) floats of `out`.
void transform_winograd_filter(const float* filter, size_t out_c, size_t in_c, size_t tile, float* out);

// Tiles per Winograd block for a chunk of `chunk_tiles` tiles of `points`
// points: as many as keep a block's scratch within 256 KiB, in whole
// 12-row GEMM tiles, at least one GEMM tile, at most the chunk; the whole
// chunk where its scratch is smaller than the transformed weights, which
// stream once per block (resnet's 14x14x256 layers under F(4x4): 9.4 MB of
// weights against 1.2 MB of scratch).
size_t winograd_block_tiles(size_t points, size_t in_c_pad, size_t out_c_pad, size_t chunk_tiles);

// Whether a Winograd convolution on `threads` threads shares out its
// output panels instead of its tiles: every thread transforms the input of
// all `tiles` tiles into a block of its own, then computes its share of
// the panels (their GEMMs and output transform) — where that block's
// scratch is at most a quarter of the transformed weights (and 4 MiB) and
// there are at least as many panels as threads. Each thread then streams
// its share of the weights, not all of them, for one more transform of the
// input a thread; where the tiles are shared out, each thread streams all
// the weights once per block of its tiles. resnet's 14x14x256 layers under
// F(4x4) (9.4 MB of weights for 16 tiles, 1.2 MB of scratch) took 1.5-1.7
// instead of 1.8-2.2 ms at 2 threads on a Zen 3 VM with the panels shared
// out (then with one transform of the input that the threads shared); on
// a 2-core Zen 5 VM 0.36-0.37 ms with a transform a thread, 0.40-0.42 with
// the shared one (half of whose rows each thread read from the other
// core's cache). Its 28x28x128 layers (2.4 MB against 1.8 MB) keep their
// tiles: 0.21-0.24 ms on the Zen 5 VM, 0.27-0.29 with the panels shared.
bool winograd_splits_panels(size_t points, size_t in_c_pad, size_t out_c_pad, size_t tiles, size_t threads);

// The Winograd variant for a shape (its `tile` ignored), 2 or 4: the one
// estimated faster where the transformed weights come from memory, at
// about 4 bytes a cycle, and the GEMMs run no faster than those bytes
// arrive. F(4x4, 3x3) does 36 products for 16 output pixels, F(2x2, 3x3)
// 16 for 4, but F(4x4)'s weights are 2.25x the size and serve a quarter of
// the tiles: where the tiles are few (14x14 images with hundreds of
// channels: resnet50's layer3, googlenet's inception4) F(2x2) wins, where
// they are many (28x28 and up) F(4x4). Measured at resnet50's 14x14x256
// layers on a Sapphire Rapids VM: F(2x2) 0.75-0.80x F(4x4)'s time at 2
// threads, 0.9x at 1; googlenet's inception4 3x3 layers 0.76-0.91x at 2
// threads, level at 1.
size_t winograd_tile(const WinogradShape& shape);

// Float multiply-adds one core retires a cycle on the kernels' widest
// vectors: 32 with two 512-bit FMA pipes (Intel's AVX-512 server cores, AMD
// Zen 5), 16 where a 512-bit operation takes two 256-bit halves (AMD Zen 4)
// or the kernels run on AVX2 (two 256-bit pipes). The runtime asks the CPU
// (native_isa.h core_fma_lanes); preprocess plans for both.
inline constexpr size_t kFmaLanesWide = 32;
inline constexpr size_t kFmaLanesNarrow = 16;

// Whether Winograd F(shape.tile x shape.tile, 3x3) is estimated faster
// than the direct kernel for `shape` on `threads` threads of cores that
// retire `fma_lanes` multiply-adds a cycle: it does a quarter (F(4x4)) or
// four ninths (F(2x2)) of the multiplications but streams weights four
// (1.8) times the size once per block of tiles, and each transform costs a
// pass over its data. Few tiles (small images) with many channels, or few
// input channels, stay direct. On cores of half the multiply-add rate the
// arithmetic saved is worth twice the cycles while the weights stream no
// slower, so more layers gain: on a 2-vCPU Zen 4 VM resnet's 7x7x512 layers
// under F(2x2) took 0.73-0.78x the direct kernel's time at 1 thread, and
// runs of googlenet's 16->32 channel layer at 28x28 (each with a 1x1 layer
// back) 0.56-0.70x with it under F(4x4).
bool winograd_pays(const WinogradShape& shape, size_t threads, size_t fma_lanes);

}  // namespace etc::xnnpack
