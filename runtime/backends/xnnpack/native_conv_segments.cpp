#include <algorithm>

#include "runtime/backends/xnnpack/native_conv_walk.h"

// The walks of a native convolution whose reduction is cut into segments
// (native_plan.h NativeDepthSplit): a group of tiles computes one segment
// after another, its partial sums kept on the stack between them.
namespace etc::xnnpack::conv_walk {

// One panel of one group of tiles of a convolution whose reduction is cut
// (NativeDepthSplit): segment by segment, each over the group's tiles, the
// partial sums of the group kept on the stack between segments.
void conv_segmented(void* context, size_t panel, size_t group) {
#if defined(__x86_64__)
  const ConvTask& task = *static_cast<const ConvTask*>(context);
  const NativeConv& c = *task.conv;
  alignas(64) float partial[kNativeGroupTiles * kRows * kChannels];
  const size_t first_tile = group * c.split.group_tiles;
  const size_t tiles = std::min(c.split.group_tiles, c.tiles - first_tile);
  const size_t channels = std::min(kChannels, c.out_c - panel * kChannels);
  const float* panel_weights = c.weights + panel * c.panel_floats;
  const ReductionCut cut{c.split.segment_taps, c.split.segment_depth};
  for_each_piece(c.taps(), c.in_c, cut, [&](const ReductionPiece& p) {
    // The weights the group reads next (the next segment's, or after the
    // last the next panel's first), fetched while this segment computes:
    // the group's whole tiles, up to four, each walk a part of them (a
    // line every other step where there are four: resnet18's 7x7x512 3x3
    // layers 2-3% faster at 1 and 2 threads than over two tiles a line a
    // step, resnet50's level). Without it the first tile of every segment
    // waited on memory for its weights (those layers stream 9.4 MB each).
    const size_t steps = p.taps * p.depth;
    const size_t parts = native_fetch_parts(std::min(tiles, (task.pixels - first_tile * kRows) / kRows));
    const float* next = piece_weights(panel_weights, p, c.in_c) + kChannels + steps * kChannels;
    if (p.last) next = panel + 1 < c.panels ? c.weights + (panel + 1) * c.panel_floats + kChannels : nullptr;
    for (size_t i = 0; i < tiles; ++i) {
      const size_t tile = first_tile + i;
      const size_t rows = std::min(kRows, task.pixels - tile * kRows);
      const float* rows_at[kRows];
      const float* const* a = tile_rows(task, tile, rows, rows_at);
      const float* shifted[kRows];
      Epilogue e = tile_epilogue(task, tile, panel * kChannels);
      if (next != nullptr && i < parts) {
        e.prefetch = next + i * (steps * kChannels / parts);
        e.prefetch_step = native_fetch_step(parts, 2);
      }
      float* out = tile_out(task, tile, panel * kChannels);
      run_tile(c, rows, channels, p.taps, p.depth, piece_rows(a, p, c.in_c, shifted),
               piece_weights(panel_weights, p, c.in_c), out,
               native_kernel::piece_epilogue(e, p, partial + i * kRows * kChannels),
               task.residual != nullptr);
    }
  });
#else
  (void)context, (void)panel, (void)group;
#endif
}

// Panels 2 * pair and 2 * pair + 1 of one group of tiles of a cut reduction
// (conv_segmented), side by side as conv_panel_pair reads them: a whole
// tile as two 6 x 64 halves, a lone last row with the tile before it (6 + 7
// rows), a shorter tile panel by panel. A pair that is not whole goes
// panel by panel (conv_segmented). The partial sums of the group's tiles,
// 13 rows of 64 each, stay on the stack between segments.
void conv_segmented_pair(void* context, size_t pair, size_t group) {
#if defined(__x86_64__)
  const ConvTask& task = *static_cast<const ConvTask*>(context);
  const NativeConv& c = *task.conv;
  const size_t p0 = 2 * pair;
  if (p0 + 1 >= c.panels || c.out_c < (p0 + 2) * kChannels) {
    conv_segmented(context, p0, group);
    if (p0 + 1 < c.panels) conv_segmented(context, p0 + 1, group);
    return;
  }
  constexpr size_t kPair = native_kernel::kPairChannels;
  alignas(64) float partial[kNativeGroupTiles * (kRows + 1) * kPair];
  const size_t first_tile = group * c.split.group_tiles;
  const size_t tiles = std::min(c.split.group_tiles, c.tiles - first_tile);
  const float* w0 = c.weights + p0 * c.panel_floats;
  const float* w1 = w0 + c.panel_floats;
  const size_t whole = std::min(tiles, (task.pixels - first_tile * kRows) / kRows);
  const size_t parts = native_fetch_parts(whole);
  const ReductionCut cut{c.split.segment_taps, c.split.segment_depth};
  for_each_piece(c.taps(), c.in_c, cut, [&](const ReductionPiece& p) {
    // What the group reads next, fetched over its first whole tiles as in
    // conv_segmented: both panels' next segment, after the last the next
    // pair's first.
    const size_t steps = p.taps * p.depth;
    const float* next0 = piece_weights(w0, p, c.in_c) + kChannels + steps * kChannels;
    const float* next1 = piece_weights(w1, p, c.in_c) + kChannels + steps * kChannels;
    if (p.last) {
      next0 = p0 + 2 < c.panels ? w0 + 2 * c.panel_floats + kChannels : nullptr;
      next1 = p0 + 3 < c.panels ? w1 + 2 * c.panel_floats + kChannels : nullptr;
    }
    for (size_t i = 0; i < tiles; ++i) {
      const size_t tile = first_tile + i;
      const size_t left = task.pixels - tile * kRows;  // pixels from this tile's first on
      if (left == 1 && i > 0) continue;                // the tile before computed it
      const size_t rows = std::min(kRows, left);
      const float* rows_at[kRows];
      const float* shifted[kRows];
      const float* const* piece_a = piece_rows(tile_rows(task, tile, rows, rows_at), p, c.in_c, shifted);
      const Epilogue e = tile_epilogue(task, tile, p0 * kChannels);
      float* out = tile_out(task, tile, p0 * kChannels);
      float* part = partial + i * (kRows + 1) * kPair;
      if (rows < kRows) {
        // Each panel's partial sums in its half of the tile's.
        for (size_t q = 0; q < 2; ++q) {
          Epilogue eq = e;
          if (eq.residual != nullptr) eq.residual += q * kChannels;
          run_tile(c, rows, kChannels, p.taps, p.depth, piece_a, piece_weights(q == 0 ? w0 : w1, p, c.in_c),
                   out + q * kChannels, native_kernel::piece_epilogue(eq, p, part + q * kRows * kChannels),
                   task.residual != nullptr);
        }
        continue;
      }
      // The lone last row's pointers: the next tile's first.
      const float* last_at[kRows];
      const float* last_shifted[kRows];
      const float* const* last = nullptr;
      if (left == kRows + 1)
        last = piece_rows(tile_rows(task, tile + 1, 1, last_at), p, c.in_c, last_shifted);
      const float* pf0 = nullptr;
      const float* pf1 = nullptr;
      if (i < parts && next0 != nullptr) {
        pf0 = next0 + i * (steps * kChannels / parts);
        if (next1 != nullptr) pf1 = next1 + i * (steps * kChannels / parts);
      }
      run_pair_of(c, task.residual != nullptr, p.taps, p.depth, piece_a, last, piece_weights(w0, p, c.in_c),
                  piece_weights(w1, p, c.in_c), out, native_kernel::piece_epilogue(e, p, part), pf0, pf1,
                  native_fetch_step(parts, 2));
    }
  });
#else
  (void)context, (void)pair, (void)group;
#endif
}

}  // namespace etc::xnnpack::conv_walk
