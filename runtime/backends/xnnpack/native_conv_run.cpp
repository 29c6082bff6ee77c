#include <algorithm>
#include <cmath>
#include <cstring>

#include "runtime/backends/xnnpack/native_conv_walk.h"

// Running a compiled native convolution (native_conv.cpp compiles it): its
// tiles and panels through the micro-kernels over the pool, in the order
// the shape calls for (a reduction cut into segments:
// native_conv_segments.cpp).
namespace etc::xnnpack {
namespace conv_walk {

#if defined(__x86_64__)
void run_tile(const NativeConv& c, size_t rows, size_t channels, size_t taps, size_t depth,
              const float* const* a, const float* w, float* out, const Epilogue& e, bool residual) {
  using A = ConvActivation;
  const auto panel_fn = [&]<bool Residual>() {
    switch (c.activation) {
      case A::kSwish:
        return run_panel<Residual, A::kSwish>(rows, channels, taps, depth, a, w, out, c.out_stride, e);
      case A::kHardSwish:
        return run_panel<Residual, A::kHardSwish>(rows, channels, taps, depth, a, w, out, c.out_stride, e);
      default: return run_panel<Residual, A::kNone>(rows, channels, taps, depth, a, w, out, c.out_stride, e);
    }
  };
  if (residual)
    panel_fn.template operator()<true>();
  else
    panel_fn.template operator()<false>();
}

const float* const* tile_rows(const ConvTask& task, size_t tile, size_t rows, const float** rows_at) {
  const NativeConv& c = *task.conv;
  if (!c.rows_contiguous()) return c.indirection.data() + tile * c.kernel_taps() * kRows;
  contiguous_rows(task.x, tile * kRows, rows, c.in_c, rows_at);
  return rows_at;
}

float* tile_out(const ConvTask& task, size_t tile, size_t channel) {
  const NativeConv& c = *task.conv;
  return task.y + (task.first_pixel + tile * kRows) * c.out_stride + c.out_offset + channel;
}

Epilogue tile_epilogue(const ConvTask& task, size_t tile, size_t channel) {
  const NativeConv& c = *task.conv;
  Epilogue e{c.lo, c.hi, nullptr, c.out_c, c.residual_lo, c.residual_hi};
  e.affine = c.affine, e.scale = c.scale, e.shift = c.shift;
  if (task.residual != nullptr)
    e.residual = task.residual + (task.first_pixel + tile * kRows) * c.out_c + channel;
  return e;
}
#endif

namespace {

#if defined(__x86_64__)
// Brings the lines of `rows` rows of `channels` outputs at y (y_stride
// floats apart) towards the core for writing, and those of the residual
// rows the same tile reads, when there are any. A tile's output and
// residual rows lie a whole row of channels apart, one or two lines each,
// more streams than the hardware prefetcher follows: fetched one tile
// ahead, resnet50's 64->256 1x1 convolutions at 56x56 (3.2 MB out, 3.2 MB
// of residual in) ran 13-25% faster in isolation on a Zen 3 core. The
// single-panel path fetches them here, before its call; the pair path from
// inside its kernel, a row every 4 reduction steps (Epilogue::next_out).
void prefetch_tile(const float* y, size_t y_stride, const float* residual, size_t residual_stride,
                   size_t rows, size_t channels) {
  const size_t bytes = channels * sizeof(float);
  for (size_t r = 0; r < rows; ++r)
    for (size_t b = 0; b < bytes; b += 64) {
      // prefetchw: the line comes ready to be written (a no-op where the
      // CPU lacks it).
      asm volatile("prefetchw %0" ::"m"(*(reinterpret_cast<const char*>(y + r * y_stride) + b)));
      if (residual != nullptr)
        _mm_prefetch(reinterpret_cast<const char*>(residual + r * residual_stride) + b, _MM_HINT_T0);
    }
}
#endif

#if defined(__x86_64__)
// What a call of the kernel on tile `tile` from panel `panel` on reads and
// writes: its rows (rows_at, or the indirection's), its output and its
// epilogue, without a prefetch.
struct TileCall {
  const float* const* a;
  float* out;
  Epilogue e;
};

TileCall tile_call(const ConvTask& task, size_t tile, size_t panel, const float** rows_at) {
  return TileCall{tile_rows(task, tile, std::min(kRows, task.pixels - tile * kRows), rows_at),
                  tile_out(task, tile, panel * kChannels), tile_epilogue(task, tile, panel * kChannels)};
}

// The next tile's `channels` outputs from `call`'s first, and their
// residual, brought in for the call that computes them.
void prefetch_next_tile(const ConvTask& task, size_t tile, const TileCall& call, size_t channels) {
  const NativeConv& c = *task.conv;
  if ((tile + 1) * kRows < task.pixels)
    prefetch_tile(call.out + kRows * c.out_stride, c.out_stride,
                  call.e.residual != nullptr ? call.e.residual + kRows * c.out_c : nullptr, c.out_c,
                  std::min(kRows, task.pixels - (tile + 1) * kRows), channels);
}
#endif

// Which of `parts` equal parts of the weights read next (the next panel's;
// the next pair's on the pair path) tile `tile` of a panel-major walk
// fetches as it computes: tiles 1 to parts one each, parts being the
// walk's whole tiles after the first, at least 2 and at most max_parts (the
// fetch spread over more tiles asks less of memory at any one time:
// resnet50's 49-pixel 1x1 layers, 4 MB of weights each, 5% faster at 1
// thread over three tiles than over two); a panel's lone tile (a fully
// connected node over one row) the first of 2. index -1: none.
struct WeightsPart {
  int index = -1;
  size_t parts = 2;
};

WeightsPart next_weights_part(const ConvTask& task, size_t tile, size_t max_parts) {
  if (!task.panel_major) return {};
  const size_t whole = task.pixels / kRows;
  const size_t parts = std::min(native_fetch_parts(whole > 0 ? whole - 1 : 0), max_parts);
  if (tile >= 1 && tile <= parts) return {static_cast<int>(tile) - 1, parts};
  if (tile == 0 && task.pixels <= kRows) return {0, 2};
  return {};
}

void conv_tile(void* context, size_t tile, size_t panel) {
#if defined(__x86_64__)
  const ConvTask& task = *static_cast<const ConvTask*>(context);
  const NativeConv& c = *task.conv;
  const size_t rows = std::min(kRows, task.pixels - tile * kRows);
  const size_t channels = std::min(kChannels, c.out_c - panel * kChannels);
  const float* rows_at[kRows];
  TileCall call = tile_call(task, tile, panel, rows_at);
  // Two parts, a line a step, on this path (every panel-major walk with
  // AVX2; with AVX-512 only short tiles and a narrow last panel): the wider
  // spread was measured with AVX-512 alone, on the pair path.
  const WeightsPart part = next_weights_part(task, tile, 2);
  if (part.index >= 0 && panel + 1 < c.panels)
    call.e.prefetch =
        c.weights + (panel + 1) * c.panel_floats + static_cast<size_t>(part.index) * (c.panel_floats / 2);
  else if (!task.panel_major && panel == 0 && c.rows_contiguous() && (tile + 1) * kRows < task.pixels)
    call.e.prefetch = task.x + (task.first_pixel + (tile + 1) * kRows) * c.in_c;
  // The next tile of this panel: the following call in panel-major order,
  // the panels' count of calls later in tile-major order.
  prefetch_next_tile(task, tile, call, channels);
  run_tile(c, rows, channels, c.kernel_taps(), c.tap_depth(), call.a, c.weights + panel * c.panel_floats,
           call.out, call.e, task.residual != nullptr);
#else
  (void)context, (void)tile, (void)panel;
#endif
}

void conv_panel(void* context, size_t panel, size_t tile) { conv_tile(context, tile, panel); }

}  // namespace

#if defined(__x86_64__)
// The rows of a pair of panels (w0, w1): 6, then 6 more, or 7 where `last`
// (the lone last row's pointers, as micro_kernel_pair takes them) is set;
// out_stride floats between output rows, e.residual_stride between the
// residual's. The halves fetch from prefetch0 and prefetch1, `step` bytes
// apart.
template <bool Residual, ConvActivation Act>
void run_pair(size_t taps, size_t depth, const float* const* a, const float* const* last, const float* w0,
              const float* w1, float* out, size_t out_stride, const Epilogue& e, const float* prefetch0,
              const float* prefetch1, size_t step) {
  Epilogue eh = e;
  eh.prefetch_step = step;
  eh.prefetch = prefetch0;
  // The next tile's rows: the first 6 with the first half, the rest with the second.
  eh.next_rows = std::min<size_t>(e.next_rows, 6);
  native_kernel::micro_kernel_pair<6, Residual, Act>(taps, depth, a, nullptr, w0, w1, out, out_stride, eh);
  eh.prefetch = prefetch1;
  eh.next_rows = e.next_rows - eh.next_rows;
  if (eh.next_rows > 0) {
    eh.next_out = e.next_out + 6 * out_stride;
    if (e.next_residual != nullptr) eh.next_residual = e.next_residual + 6 * e.residual_stride;
  }
  if (Residual) eh.residual = e.residual + 6 * e.residual_stride;
  if (e.partial_in != nullptr) eh.partial_in = e.partial_in + 6 * native_kernel::kPairChannels;
  if (e.partial_out != nullptr) eh.partial_out = e.partial_out + 6 * native_kernel::kPairChannels;
  if (last != nullptr)
    native_kernel::micro_kernel_pair<7, Residual, Act>(taps, depth, a + 6, last, w0, w1, out + 6 * out_stride,
                                                       out_stride, eh);
  else
    native_kernel::micro_kernel_pair<6, Residual, Act>(taps, depth, a + 6, nullptr, w0, w1,
                                                       out + 6 * out_stride, out_stride, eh);
}

void run_pair_of(const NativeConv& c, bool residual, size_t taps, size_t depth, const float* const* a,
                 const float* const* last, const float* w0, const float* w1, float* out, const Epilogue& e,
                 const float* prefetch0, const float* prefetch1, size_t step) {
  using A = ConvActivation;
  const auto go = [&]<bool Residual>() {
    const auto run = [&]<ConvActivation Act>() {
      run_pair<Residual, Act>(taps, depth, a, last, w0, w1, out, c.out_stride, e, prefetch0, prefetch1, step);
    };
    switch (c.activation) {
      case A::kSwish: return run.template operator()<A::kSwish>();
      case A::kHardSwish: return run.template operator()<A::kHardSwish>();
      default: return run.template operator()<A::kNone>();
    }
  };
  if (residual)
    go.template operator()<true>();
  else
    go.template operator()<false>();
}
#endif

namespace {

// Panels 2 * pair and 2 * pair + 1 of one tile: as two 6 x 64 halves where
// the tile is whole and both panels are, else panel by panel. A lone last
// row goes with the whole tile before it, as 6 + 7 rows: on its own it read
// the pair's weights for 2 multiply-adds a line (resnet50's 49-pixel
// layers).
void conv_panel_pair(void* context, size_t pair, size_t tile) {
#if defined(__x86_64__)
  const ConvTask& task = *static_cast<const ConvTask*>(context);
  const NativeConv& c = *task.conv;
  const size_t p0 = 2 * pair;
  const size_t left = task.pixels - tile * kRows;  // pixels from this tile's first on
  const bool whole_pair = p0 + 1 < c.panels && c.out_c >= (p0 + 2) * kChannels;
  if (whole_pair && left == 1 && tile > 0) return;  // the tile before computed it
  if (left < kRows || !whole_pair) {
    conv_tile(context, tile, p0);
    if (p0 + 1 < c.panels) conv_tile(context, tile, p0 + 1);
    return;
  }
  const float* rows_at[kRows + 1];
  const TileCall call = tile_call(task, tile, p0, rows_at);
  // The lone last row's pointers: after the tile's own, or the next tile's
  // first in the indirection.
  const float* const* last = nullptr;
  if (left == kRows + 1 && c.rows_contiguous()) {
    rows_at[kRows] = task.x + (tile * kRows + kRows) * c.in_c;  // as tile_call places them
    last = rows_at + kRows;
  } else if (left == kRows + 1) {
    last = call.a + c.kernel_taps() * kRows;
  }
  const float* pf0 = nullptr;
  const float* pf1 = nullptr;
  size_t step = 64;
  const WeightsPart part = next_weights_part(task, tile, kNativeMaxFetchParts);
  const size_t next_panels = c.panels > p0 + 2 ? std::min<size_t>(2, c.panels - p0 - 2) : 0;
  if (part.index >= 0 && next_panels > 0) {
    // The next pair's weights in `parts` parts, each fetched half by half
    // by the tile's two calls: next_panels lines a step each.
    const size_t part_floats = next_panels * c.panel_floats / part.parts;
    pf0 = c.weights + (p0 + 2) * c.panel_floats + static_cast<size_t>(part.index) * part_floats;
    pf1 = pf0 + part_floats / 2;
    step = native_fetch_step(part.parts, next_panels);
  } else if (!task.panel_major && p0 == 0 && c.rows_contiguous() && (tile + 1) * kRows < task.pixels) {
    pf0 = task.x + (task.first_pixel + (tile + 1) * kRows) * c.in_c;
  }
  // The next tile's output rows (and residual rows), fetched by the kernel
  // as it computes this one.
  Epilogue e = call.e;
  if ((tile + 1) * kRows < task.pixels) {
    e.next_out = call.out + kRows * c.out_stride;
    if (e.residual != nullptr) e.next_residual = e.residual + kRows * c.out_c;
    e.next_rows = std::min(kRows, task.pixels - (tile + 1) * kRows);
  }
  const float* w0 = c.weights + p0 * c.panel_floats;
  run_pair_of(c, e.residual != nullptr, c.kernel_taps(), c.tap_depth(), call.a, last, w0, w0 + c.panel_floats,
              call.out, e, pf0, pf1, step);
#else
  (void)context, (void)pair, (void)tile;
#endif
}

void conv_tile_pair(void* context, size_t tile, size_t pair) { conv_panel_pair(context, pair, tile); }

// A panel-major walk over contiguous rows cut into `parts` ranges of
// part_tiles whole tiles (the last takes the rest, at most `stride`), one
// per thread: item (part, j) is pair j / stride, tile j % stride of its
// range, run as a walk of its own over the range's pixels
// (conv_panel_pair).
struct PartedWalk {
  const ConvTask* task;
  size_t parts, part_tiles, stride;
};

void conv_part_pair(void* context, size_t part, size_t j) {
  const PartedWalk& walk = *static_cast<const PartedWalk*>(context);
  const NativeConv& c = *walk.task->conv;
  const size_t first = part * walk.part_tiles * kRows;
  ConvTask range = *walk.task;
  range.x += first * c.in_c;
  range.y += first * c.out_stride;
  if (range.residual != nullptr) range.residual += first * c.out_c;
  range.pixels = part + 1 < walk.parts ? walk.part_tiles * kRows : walk.task->pixels - first;
  const size_t tile = j % walk.stride;
  if (tile * kRows < range.pixels) conv_panel_pair(&range, j / walk.stride, tile);
}

}  // namespace
}  // namespace conv_walk

using namespace conv_walk;

void native_gemm_panel(size_t rows, size_t channels, size_t depth, const float* const* a, const float* w,
                       float* y, size_t y_stride, float lo, float hi, const float* prefetch,
                       size_t prefetch_step) {
#if defined(__x86_64__)
  Epilogue e{lo, hi, nullptr, 0, -INFINITY, INFINITY, prefetch};
  e.prefetch_step = prefetch_step;
  run_panel<false, ConvActivation::kNone>(rows, channels, 1, depth, a, w, y, y_stride, e);
#else
  (void)rows, (void)channels, (void)depth, (void)a, (void)w, (void)y, (void)y_stride, (void)lo, (void)hi,
      (void)prefetch, (void)prefetch_step;
#endif
}

void native_gemm_pair(size_t rows, size_t depth, const float* const* a, const float* w0, size_t panel_floats,
                      float* y, size_t y_stride, const float* prefetch0, const float* prefetch1,
                      size_t prefetch_step) {
#if defined(__x86_64__)
  const Epilogue e{-INFINITY, INFINITY, nullptr, 0, -INFINITY, INFINITY};
  run_pair<false, ConvActivation::kNone>(1, depth, a, rows > kRows ? a + kRows : nullptr, w0,
                                         w0 + panel_floats, y, y_stride, e, prefetch0, prefetch1,
                                         prefetch_step);
#else
  (void)rows, (void)depth, (void)a, (void)w0, (void)panel_floats, (void)y, (void)y_stride, (void)prefetch0,
      (void)prefetch1, (void)prefetch_step;
#endif
}

namespace {

struct ScaleTask {
  NativeConv* conv;
  const float* s;
};

// Panel p of the packed weights times s: weight (tap, input channel i) by
// s[i]; the biases unchanged.
void scale_panel(void* context, size_t p) {
  const auto& task = *static_cast<const ScaleTask*>(context);
  const NativeConv& c = *task.conv;
  const size_t depth = c.taps() * c.in_c;
  const float* from = c.panels_data + p * c.panel_floats;
  float* to = c.scaled + p * c.panel_floats;
  std::memcpy(to, from, kChannels * sizeof(float));
  for (size_t k = 0; k < depth; ++k) {
    const float f = task.s[k % c.in_c];
    for (size_t j = 0; j < kChannels; ++j)
      to[kChannels + k * kChannels + j] = from[kChannels + k * kChannels + j] * f;
  }
}

// The packed weights times s (a folded gate), panel by panel over the pool:
// on one thread it was the serial part of each gated projection
// (efficientnet_b0's 1152->320 one reads and writes 1.5 MB of weights).
void scale_weights(NativeConv& c, const float* s, pthreadpool_t pool) {
  ScaleTask task{&c, s};
  pthreadpool_parallelize_1d(pool, scale_panel, &task, c.panels, 0);
}

}  // namespace

void run_native_pointwise(const NativeConv& conv, const float* x, size_t first, size_t count, float* y) {
#if defined(__x86_64__)
  const NativeConv& c = conv;
  Epilogue e{c.lo, c.hi, nullptr, 0, -INFINITY, INFINITY};
  e.affine = c.affine, e.scale = c.scale, e.shift = c.shift;
  const float* a[kRows];
  for (size_t done = 0; done < count; done += kRows) {
    const size_t rows = std::min(kRows, count - done);
    contiguous_rows(x, first + done, rows, c.in_c, a);
    for (size_t panel = 0; panel < c.panels; ++panel) {
      const size_t channels = std::min(kChannels, c.out_c - panel * kChannels);
      const float* w = c.weights + panel * c.panel_floats;
      float* out = y + done * c.out_c + panel * kChannels;
      switch (c.activation) {
        case ConvActivation::kSwish:
          run_panel<false, ConvActivation::kSwish>(rows, channels, 1, c.in_c, a, w, out, c.out_c, e);
          break;
        case ConvActivation::kHardSwish:
          run_panel<false, ConvActivation::kHardSwish>(rows, channels, 1, c.in_c, a, w, out, c.out_c, e);
          break;
        default: run_panel<false, ConvActivation::kNone>(rows, channels, 1, c.in_c, a, w, out, c.out_c, e);
      }
    }
  }
#else
  (void)conv, (void)x, (void)first, (void)count, (void)y;
#endif
}

void run_native_conv(NativeConv& conv, float* const* data, pthreadpool_t pool) {
  if (conv.input_scale >= 0) scale_weights(conv, data[conv.input_scale], pool);
  const float* x = data[conv.input];
  if (conv.winograd != nullptr) {
    run_winograd(*conv.winograd, conv, conv.lo, conv.hi, x, data[conv.output],
                 conv.has_residual ? data[conv.residual] : nullptr, pool);
    return;
  }
  if (!conv.padded_rows && !conv.rows_contiguous() && x != conv.indirection_input) build_indirection(conv, x);
  ConvTask task{&conv, x, data[conv.output], conv.has_residual ? data[conv.residual] : nullptr};
  // With AVX-512, panels two at a time (conv_panel_pair, conv_segmented_pair).
  const bool pairs = native_isa() == NativeIsa::kAvx512 && conv.panels >= 2;
  const size_t pair_count = (conv.panels + 1) / 2;
  if (conv.split.segment_taps != 0) {
    task.pixels = conv.pixels();
    const size_t groups = (conv.tiles + conv.split.group_tiles - 1) / conv.split.group_tiles;
    if (pairs)
      pthreadpool_parallelize_2d(pool, conv_segmented_pair, &task, pair_count, groups, 0);
    else
      pthreadpool_parallelize_2d(pool, conv_segmented, &task, conv.panels, groups, 0);
    return;
  }
  // Walk the larger operand once: tile by tile when the input is the larger
  // (each tile's rows stay in cache while every panel streams past), panel by
  // panel when the weights are (resnet's 512-channel 3x3 layers: 9.4 MB of
  // weights against 100 KB of input would otherwise stream once per tile).
  const size_t weight_floats = conv.panels * conv.panel_floats;
  const size_t input_floats = conv.batch * conv.in_h * conv.in_w * conv.in_c;
  task.panel_major = weight_floats > input_floats;
  const auto run = [&] {
    const size_t tiles = (task.pixels + kRows - 1) / kRows;
    // A panel-major walk of a 1x1 convolution on several threads gives
    // each thread a range of the pixels of its own (rather than sharing out
    // every pair's tiles) where each keeps at least four tiles, so that the
    // weights every thread then reads stream no faster than they are used:
    // a thread then reads the input rows, and writes the output rows, of the
    // pixels it computed in the layers before and computes in the layers
    // after, in its own cache (Winograd's chunks are ranges of pixels too).
    // resnet50's 14x14 256->1024 layers with their residual 10-12% faster at
    // 2 threads, its 1024->256 ones level to 4% faster, its model 1-2%; with
    // only the layers that add a residual cut so, none faster. Its 7x7 ones
    // (a tile or two a thread) were up to 50% slower.
    const size_t threads = pthreadpool_get_threads_count(pool);
    if (task.panel_major && pairs && conv.rows_contiguous() && threads > 1 &&
        task.pixels / threads >= 4 * kRows) {
      PartedWalk walk{&task, threads, tiles / threads, 0};
      walk.stride = tiles - (threads - 1) * walk.part_tiles;
      pthreadpool_parallelize_2d(pool, conv_part_pair, &walk, threads, pair_count * walk.stride, 0);
      return;
    }
    if (task.panel_major && pairs)
      pthreadpool_parallelize_2d(pool, conv_panel_pair, &task, pair_count, tiles, 0);
    else if (task.panel_major)
      pthreadpool_parallelize_2d(pool, conv_panel, &task, conv.panels, tiles, 0);
    else if (pairs)
      pthreadpool_parallelize_2d(pool, conv_tile_pair, &task, tiles, pair_count, 0);
    else
      pthreadpool_parallelize_2d(pool, conv_tile, &task, tiles, conv.panels, 0);
  };
  if (!conv.padded_rows) {
    task.pixels = conv.pixels();
    run();
    return;
  }
  // Band by band: its rows copied, then its tiles computed.
  for (size_t n = 0; n < conv.batch; ++n)
    for (size_t oy = 0; oy < conv.out_h; oy += conv.band_rows) {
      fill_band(conv, x, n, oy * conv.stride_h, pool);
      task.first_pixel = (n * conv.out_h + oy) * conv.out_w;
      task.pixels = std::min(conv.band_rows, conv.out_h - oy) * conv.out_w;
      run();
    }
}

}  // namespace etc::xnnpack
