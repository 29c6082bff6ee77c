#include "runtime/backends/xnnpack/native_plan.h"

#include <algorithm>
#include <cstring>

namespace etc::xnnpack {
namespace {

constexpr size_t kChannels = kNativeGemmChannels;
// A Winograd block's transformed input and products together stay within this.
constexpr size_t kBlockBytes = size_t{1} << 18;

size_t round_up(size_t v, size_t m) { return (v + m - 1) / m * m; }
size_t ceil_div(size_t v, size_t m) { return (v + m - 1) / m; }

}  // namespace

bool native_gemm_pays(const NativeGemmShape& s, bool folds_activation, GemmRival rival) {
  if (s.out_c == 0) return false;
  const uint64_t padded = native_panel_padded(s.out_c);
  if (padded * 3 > s.out_c * 4) return false;
  if (s.pixels <= kNativeGemmRows && s.out_c * s.depth >= kNativeStreamedWeights) return true;
  const bool shallow_pays = s.padded_rows || folds_activation || rival == GemmRival::kXnnpackAvx2;
  const uint64_t min_depth = shallow_pays ? 16 : 32;
  return s.pixels >= 4 * kNativeGemmRows && s.depth >= min_depth;
}

ReductionCut cut_reduction(size_t taps, size_t tap_depth, size_t max_steps) {
  max_steps = std::max<size_t>(max_steps, 1);
  if (tap_depth <= max_steps) {
    const size_t fit = max_steps / tap_depth;
    return {ceil_div(taps, ceil_div(taps, fit)), tap_depth};
  }
  return {1, ceil_div(tap_depth, ceil_div(tap_depth, max_steps))};
}

NativeDepthSplit native_depth_split(size_t taps, size_t tap_depth, size_t tiles, size_t cache_bytes) {
  constexpr size_t step_bytes = kChannels * sizeof(float);  // one reduction step of a panel
  const size_t budget = std::max<size_t>(cache_bytes / 4, 64 * step_bytes);
  NativeDepthSplit split;
  if (taps == 0 || tap_depth == 0 || tiles == 0 || taps * tap_depth * step_bytes <= budget) return split;
  const ReductionCut cut = cut_reduction(taps, tap_depth, budget / step_bytes);
  split.segment_taps = cut.taps_per_piece;
  split.segment_depth = cut.depth_per_piece;
  const size_t tile_input = kNativeGemmRows * split.segment_taps * split.segment_depth * sizeof(float);
  const size_t fit = std::clamp<size_t>(cache_bytes / 2 / tile_input, 1, kNativeGroupTiles);
  split.group_tiles = ceil_div(tiles, ceil_div(tiles, fit));
  return split;
}

size_t native_panels_floats(size_t out_c, size_t depth) {
  return ceil_div(out_c, kChannels) * (kChannels + depth * kChannels);
}

void pack_native_panels(const float* filter, const float* bias, size_t out_c, size_t depth, float* panels) {
  const size_t panel_floats = kChannels + depth * kChannels;
  const size_t count = ceil_div(out_c, kChannels);
  for (size_t p = 0; p < count; ++p) {
    float* panel = panels + p * panel_floats;
    const size_t channels = std::min(kChannels, out_c - p * kChannels);
    std::fill(panel, panel + panel_floats, 0.0f);
    if (bias != nullptr) std::memcpy(panel, bias + p * kChannels, channels * sizeof(float));
    // Eight filter rows at a time: each 32-float row of the panel is
    // written in stretches of eight, the eight rows read in step.
    for (size_t j0 = 0; j0 < channels; j0 += 8) {
      const size_t rows = std::min<size_t>(8, channels - j0);
      const float* row = filter + (p * kChannels + j0) * depth;
      float* to = panel + kChannels + j0;
      for (size_t k = 0; k < depth; ++k)
        for (size_t j = 0; j < rows; ++j) to[k * kChannels + j] = row[j * depth + k];
    }
  }
}

void unpack_native_panels(const float* panels, size_t out_c, size_t depth, float* filter) {
  const size_t panel_floats = kChannels + depth * kChannels;
  for (size_t o = 0; o < out_c; ++o) {
    const float* from = panels + (o / kChannels) * panel_floats + kChannels + o % kChannels;
    float* row = filter + o * depth;
    for (size_t k = 0; k < depth; ++k) row[k] = from[k * kChannels];
  }
}

size_t native_panel_padded(size_t out_c) {
  const size_t rest = out_c % kChannels;
  return out_c - rest + (rest == 0 ? 0 : rest <= 16 ? 16 : kChannels);
}

namespace {

// The filter transforms G ((tile + 2) x 3) of F(4x4, 3x3), with points 0,
// 1, -1, 2, -2 and infinity, and of F(2x2, 3x3), with 0, 1, -1 and infinity
// (Lavin and Gray, "Fast Algorithms for Convolutional Neural Networks",
// 2016).
constexpr double kG4[6][3] = {
    {1.0 / 4, 0, 0},
    {-1.0 / 6, -1.0 / 6, -1.0 / 6},
    {-1.0 / 6, 1.0 / 6, -1.0 / 6},
    {1.0 / 24, 1.0 / 12, 1.0 / 6},
    {1.0 / 24, -1.0 / 12, 1.0 / 6},
    {0, 0, 1},
};
constexpr double kG2[4][3] = {
    {1, 0, 0},
    {0.5, 0.5, 0.5},
    {0.5, -0.5, 0.5},
    {0, 0, 1},
};

// U = G g G^T for the 32 lanes of one input channel (g[tap][lane]): point
// p's 32 floats to to + p * point_stride. Lanes innermost, so that the
// compiler vectorises across them.
template <size_t Alpha>
__attribute__((always_inline)) inline void transform_lanes(const double (&kG)[Alpha][3],
                                                           const double (&g)[9][kChannels], float* to,
                                                           size_t point_stride) {
  double gg[Alpha][3][kChannels];  // G g
  for (size_t a = 0; a < Alpha; ++a)
    for (size_t kw = 0; kw < 3; ++kw)
      for (size_t l = 0; l < kChannels; ++l)
        gg[a][kw][l] = kG[a][0] * g[kw][l] + kG[a][1] * g[3 + kw][l] + kG[a][2] * g[6 + kw][l];
  for (size_t a = 0; a < Alpha; ++a)
    for (size_t b = 0; b < Alpha; ++b) {
      float* point = to + (a * Alpha + b) * point_stride;
      for (size_t l = 0; l < kChannels; ++l)
        point[l] =
            static_cast<float>(gg[a][0][l] * kG[b][0] + gg[a][1][l] * kG[b][1] + gg[a][2][l] * kG[b][2]);
    }
}

using LanesTransform = void (*)(const double (&)[9][kChannels], float*, size_t);

template <size_t Tile>
void transform_lanes_generic(const double (&g)[9][kChannels], float* to, size_t point_stride) {
  if constexpr (Tile == 4)
    transform_lanes(kG4, g, to, point_stride);
  else
    transform_lanes(kG2, g, to, point_stride);
}

// On x86-64 also built for AVX2 (4 doubles a vector instead of 2, no FMA:
// the same bits), which a runtime that transforms at init takes where the
// CPU has it. Chosen by a plain check rather than target_clones: the IFUNC
// resolver target_clones emits runs while the dynamic loader relocates,
// before a sanitizer's runtime is initialised, and crashes under
// ThreadSanitizer.
#if defined(__x86_64__) && defined(__GNUC__)
template <size_t Tile>
__attribute__((target("avx2"))) void transform_lanes_avx2(const double (&g)[9][kChannels], float* to,
                                                          size_t point_stride) {
  if constexpr (Tile == 4)
    transform_lanes(kG4, g, to, point_stride);
  else
    transform_lanes(kG2, g, to, point_stride);
}
#endif

template <size_t Tile>
LanesTransform lanes_transform() {
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx2")) return transform_lanes_avx2<Tile>;
#endif
  return transform_lanes_generic<Tile>;
}

}  // namespace

size_t winograd_filter_floats(size_t out_c, size_t in_c, size_t tile) {
  return winograd_points(tile) * ceil_div(out_c, kChannels) * (kChannels + round_up(in_c, 16) * kChannels);
}

void transform_winograd_filter(const float* filter, size_t out_c, size_t in_c, size_t tile, float* out) {
  const size_t panels = ceil_div(out_c, kChannels);
  const size_t panel_floats = kChannels + round_up(in_c, 16) * kChannels;
  const LanesTransform lanes_to = tile == 2 ? lanes_transform<2>() : lanes_transform<4>();
  std::fill(out, out + winograd_filter_floats(out_c, in_c, tile), 0.0f);
  // Point-major panels: a panel's 32 output channels side by side, input
  // channel by input channel, each point written 32 lanes at a time.
  for (size_t panel = 0; panel < panels; ++panel) {
    const size_t lanes = std::min(kChannels, out_c - panel * kChannels);
    const float* rows = filter + panel * kChannels * 9 * in_c;  // [lane][tap][in_c]
    for (size_t i = 0; i < in_c; ++i) {
      double g[9][kChannels] = {};
      for (size_t lane = 0; lane < lanes; ++lane)
        for (size_t t = 0; t < 9; ++t) g[t][lane] = rows[(lane * 9 + t) * in_c + i];
      lanes_to(g, out + panel * panel_floats + kChannels + i * kChannels, panels * panel_floats);
    }
  }
}

size_t winograd_block_tiles(size_t points, size_t in_c_pad, size_t out_c_pad, size_t chunk_tiles) {
  const size_t tile_bytes = points * (in_c_pad + out_c_pad) * sizeof(float);
  if (chunk_tiles * tile_bytes <= points * in_c_pad * out_c_pad * sizeof(float)) return chunk_tiles;
  const size_t fit = kBlockBytes / tile_bytes;
  return std::min(chunk_tiles, std::max(kNativeGemmRows, fit / kNativeGemmRows * kNativeGemmRows));
}

bool winograd_splits_panels(size_t points, size_t in_c_pad, size_t out_c_pad, size_t tiles, size_t threads) {
  const size_t scratch_bytes = points * tiles * (in_c_pad + out_c_pad) * sizeof(float);
  const size_t weight_bytes = points * in_c_pad * out_c_pad * sizeof(float);
  return threads > 1 && ceil_div(out_c_pad, kChannels) >= threads && 4 * scratch_bytes <= weight_bytes &&
         scratch_bytes <= (size_t{4} << 20);
}

namespace {

// Cycles on one core of the direct kernel on `s`: `lanes` multiply-adds a
// cycle (kFmaLanesWide: two 16-lane FMA pipes), at ~93% of that.
double direct_cycles(const WinogradShape& s, size_t threads, double lanes) {
  const double pixels = static_cast<double>(s.batch * s.out_h * s.out_w);
  return pixels * 9 * static_cast<double>(s.in_c) * static_cast<double>(native_panel_padded(s.out_c)) /
         lanes / 0.93 / static_cast<double>(threads);
}

// Cycles on one core of Winograd's input and output transforms, per tile of
// F(tile x tile, 3x3): about 120 and 100 cycles per 16 channels under
// F(4x4) (36 points) on cores of kFmaLanesWide (`slow` times that on
// slower vector pipes), in proportion to the points under F(2x2), and
// ~400 a tile whatever its channels (gathering its rows, placing its
// outputs), half each.
double input_cycles_per_tile(size_t tile, double in_pad, double slow = 1) {
  return static_cast<double>(winograd_points(tile)) / 36 * in_pad / 16 * 120 * slow + 200;
}
double output_cycles_per_tile(size_t tile, double out_pad, double slow = 1) {
  return static_cast<double>(winograd_points(tile)) / 36 * out_pad / 16 * 100 * slow + 200;
}
double transform_cycles_per_tile(size_t tile, double in_pad, double out_pad) {
  return input_cycles_per_tile(tile, in_pad) + output_cycles_per_tile(tile, out_pad);
}

// Cycles on one core of Winograd F(s.tile x s.tile, 3x3) on `s`: the GEMMs
// (shorter rows per weight panel than the direct kernel's) at ~85% of the
// FMA peak, plus ~150 cycles a GEMM call (per point per panel per 12 tiles:
// loading, clamping and storing its sums, its row pointers), which tell on
// few input channels: a call of 16 input channels computes for ~200. The
// points' weights come from L3 at the layer's start (the model's other
// layers have been through the caches since; the direct kernel's 9 taps
// take less time, hidden behind its longer arithmetic), then again once per
// further block, from L2 when they fit (64 bytes a cycle) or from L3 (16);
// and the transforms. Calibrated on googlenet's layers: its 16-48 -> 32-128
// channel 3x3 layers at 7x7 and 14x14 ran 1.2-2.6x slower on F(4x4) than
// direct on a Sapphire Rapids core, which the model without the calls, the
// first stream and the fixed cost a tile put at 0.6-0.8x; and at ~50 cycles
// a call it still took its 16->32 layer at 28x28 (0.126 against 0.082 ms
// direct at 1 thread) and 32->64 at 14x14 (0.100 against 0.081), where
// squeezenet's 16->64 at 55x55 (0.485 against 0.591) and 32->128 at 27x27
// (0.392 against 0.471) gain; 150 puts each on its side. On cores of
// `lanes` multiply-adds a cycle the arithmetic (the GEMMs', the transforms')
// takes kFmaLanesWide / lanes times the cycles; the calls' and tiles'
// fixed costs and the weights' streaming do not change.
double winograd_cycles(const WinogradShape& s, size_t threads, double lanes) {
  const double slow = static_cast<double>(kFmaLanesWide) / lanes;
  const size_t points = winograd_points(s.tile);
  const size_t in_c_pad = round_up(s.in_c, 16), out_c_pad = native_panel_padded(s.out_c);
  const size_t tiles = s.batch * ceil_div(s.out_h, s.tile) * ceil_div(s.out_w, s.tile);
  const bool split = winograd_splits_panels(points, in_c_pad, out_c_pad, tiles, threads);
  // A thread's tiles (all of them where panels are split) and its share of
  // the output channels.
  const size_t chunk = split ? tiles : ceil_div(tiles, threads);
  const double share = split ? 1.0 / static_cast<double>(threads) : 1.0;
  const size_t blocks = split ? 1 : ceil_div(chunk, winograd_block_tiles(points, in_c_pad, out_c_pad, chunk));
  // Weights stream at 16 bytes a cycle. Threads that split the panels each
  // stream a share of them and share that rate; threads that each take all
  // panels read the same lines at about the same time, each at the full
  // rate (resnet50's and googlenet's 14x14 layers under F(2x2) at 2 threads,
  // 0.75-0.86x the direct kernel's time, which dividing the rate among them
  // puts above 0.8x).
  const double l3_rate = split ? 16.0 / static_cast<double>(threads) : 16.0;
  const double in_pad = static_cast<double>(in_c_pad), out_pad = static_cast<double>(out_c_pad);
  const double pts = static_cast<double>(points);
  const double panels = out_pad / kChannels;
  const double calls = pts * panels * share * static_cast<double>(ceil_div(chunk, kNativeGemmRows));
  const double gemm =
      pts * static_cast<double>(chunk) * in_pad * out_pad * share / lanes / 0.85 + calls * 150;
  const double weight_bytes = pts * in_pad * out_pad * sizeof(float);
  const double weights = weight_bytes * share / l3_rate + static_cast<double>(blocks - 1) * weight_bytes *
                                                              share / (weight_bytes > 1e6 ? l3_rate : 64);
  // Threads that split the panels each transform every tile's input.
  const double transforms =
      static_cast<double>(chunk) *
      (input_cycles_per_tile(s.tile, in_pad, slow) + share * output_cycles_per_tile(s.tile, out_pad, slow));
  return gemm + weights + transforms;
}

// Cycles on one core of Winograd F(tile x tile, 3x3) on `s` where its
// weights come from memory: the GEMMs (tiles in steps of 4 rows) at ~85%
// of the FMA peak, or streaming the transformed weights at ~4 bytes a
// cycle, whichever takes longer, plus the transforms. The rate is what
// resnet50's 14x14x256 layers reached under F(4x4) (1.5-1.6 ms for 9.4 MB
// on a Sapphire Rapids core, against ~0.7 ms of arithmetic).
double winograd_stream_cycles(const WinogradShape& s, size_t tile) {
  const double points = static_cast<double>(winograd_points(tile));
  const size_t tiles = s.batch * ceil_div(s.out_h, tile) * ceil_div(s.out_w, tile);
  const double in_pad = static_cast<double>(round_up(s.in_c, 16));
  const double out_pad = static_cast<double>(native_panel_padded(s.out_c));
  const double gemm = points * static_cast<double>(round_up(tiles, 4)) * in_pad * out_pad / 32 / 0.85;
  const double stream = points * in_pad * out_pad * sizeof(float) / 4;
  return std::max(gemm, stream) +
         static_cast<double>(tiles) * transform_cycles_per_tile(tile, in_pad, out_pad);
}

}  // namespace

size_t winograd_tile(const WinogradShape& shape) {
  return winograd_stream_cycles(shape, 2) < winograd_stream_cycles(shape, 4) ? 2 : 4;
}

bool winograd_pays(const WinogradShape& s, size_t threads, size_t fma_lanes) {
  if (s.in_c < 16 || s.out_c < 16) return false;
  threads = std::max<size_t>(threads, 1);
  const double lanes = static_cast<double>(std::max<size_t>(fma_lanes, 1));
  return winograd_cycles(s, threads, lanes) < 0.8 * direct_cycles(s, threads, lanes);
}

}  // namespace etc::xnnpack
