#include "runtime/backends/xnnpack/native_winograd.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "runtime/backends/xnnpack/avx2_lanes.h"
#include "runtime/backends/xnnpack/native_conv.h"
#include "runtime/backends/xnnpack/native_isa.h"
#include "runtime/backends/xnnpack/swish.h"
#include "runtime/core/aligned_buffer.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace etc::xnnpack {
namespace {

constexpr size_t kMaxAlpha = 6;  // input window side, F(4x4): tile side + 2
constexpr size_t kRows = kNativeGemmRows;
constexpr size_t kChannels = kNativeGemmChannels;

size_t round_up(size_t v, size_t m) { return (v + m - 1) / m * m; }
size_t ceil_div(size_t v, size_t m) { return (v + m - 1) / m; }

}  // namespace

struct Winograd {
  WinogradShape s;       // s.tile: output pixels per tile side
  size_t in_c_pad = 0;   // input channels rounded up to 16 (zero lanes)
  size_t out_c_pad = 0;  // output channels as the panels pad them
  size_t panels = 0, panel_floats = 0;
  size_t tiles_h = 0, tiles_w = 0, tiles = 0;
  size_t chunks = 1;       // contiguous tile ranges (shares of the panels), one per thread
  size_t chunk_tiles = 0;  // tiles per chunk (the last may have fewer)
  size_t block = 0;        // tiles per block
  // Each thread transforms all tiles' input into a block of its own and
  // computes a share of the output panels (winograd_splits_panels).
  bool split_panels = false;
  size_t threads = 1;
  AlignedBuffer packed;            // the transformed filter, where it was not given
  const float* weights = nullptr;  // [point][panel]: 32 zero biases, then in_c_pad x 32
  AlignedBuffer bias;              // out_c_pad floats, zero when the node has none
  // Per chunk: V [point][block][in_c_pad], M [point][block][out_c_pad];
  // given by share_winograd_scratch.
  float* scratch = nullptr;
  size_t scratch_floats = 0;  // per chunk
  // Products per tile and channel pair: (s.tile + 2)^2.
  size_t points() const { return winograd_points(s.tile); }
};

void WinogradDeleter::operator()(Winograd* w) const { delete w; }

const WinogradShape& winograd_shape(const Winograd& w) { return w.s; }

size_t winograd_scratch_floats(const Winograd& w) { return w.chunks * w.scratch_floats; }

void share_winograd_scratch(Winograd& w, float* memory) { w.scratch = memory; }

std::span<const float> winograd_weights_in_place(const Winograd& w) {
  if (w.packed) return {};
  return {w.weights, winograd_filter_floats(w.s.out_c, w.s.in_c, w.s.tile)};
}

bool winograd_applies(const fb::Node& node) {
  return node.type() == fb::NodeType::Convolution2d && node.groups() == 1 && node.flags() == 0 &&
         node.kernel() != nullptr &&
         winograd_window(node_param(node.kernel(), 0, 1), node_param(node.kernel(), 1, 1),
                         node_param(node.stride(), 0, 1), node_param(node.stride(), 1, 1),
                         node_param(node.dilation(), 0, 1), node_param(node.dilation(), 1, 1));
}

Result<WinogradPtr> compile_winograd(const WinogradShape& shape, const float* filter,
                                     const float* transformed, const float* bias, size_t threads) {
  if (shape.tile != 2 && shape.tile != 4)
    return fail(Error::Internal, "xnnpack: no Winograd F(", shape.tile, "x", shape.tile, ", 3x3)");
  WinogradPtr ptr(new Winograd);
  Winograd& w = *ptr;
  w.s = shape;
  w.in_c_pad = round_up(shape.in_c, 16);
  w.out_c_pad = native_panel_padded(shape.out_c);
  w.panels = ceil_div(shape.out_c, kChannels);
  w.panel_floats = kChannels + w.in_c_pad * kChannels;
  w.tiles_h = ceil_div(shape.out_h, shape.tile);
  w.tiles_w = ceil_div(shape.out_w, shape.tile);
  w.tiles = shape.batch * w.tiles_h * w.tiles_w;
  w.threads = std::max<size_t>(threads, 1);
  w.split_panels = winograd_splits_panels(w.points(), w.in_c_pad, w.out_c_pad, w.tiles, threads);
  if (w.split_panels) {
    // A share of the panels a thread, each over all tiles, in one block.
    w.chunks = w.threads;
    w.chunk_tiles = w.block = w.tiles;
  } else {
    w.chunks = std::clamp<size_t>(threads, 1, w.tiles);
    w.chunk_tiles = ceil_div(w.tiles, w.chunks);
    w.chunks = ceil_div(w.tiles, w.chunk_tiles);
    w.block = winograd_block_tiles(w.points(), w.in_c_pad, w.out_c_pad, w.chunk_tiles);
  }
  w.scratch_floats = w.points() * w.block * (w.in_c_pad + w.out_c_pad);
  // transform_winograd_filter writes every float, the zero lanes too.
  if (transformed == nullptr)
    w.packed =
        AlignedBuffer::allocate(winograd_filter_floats(shape.out_c, shape.in_c, shape.tile) * sizeof(float));
  w.bias = zeroed_floats(w.out_c_pad);
  if ((transformed == nullptr && !w.packed) || !w.bias)
    return fail(Error::DelegateMemoryAllocationFailed, "xnnpack: cannot allocate a Winograd convolution's ",
                "transformed weights");
  if (bias != nullptr) std::memcpy(w.bias.data(), bias, shape.out_c * sizeof(float));
  if (transformed == nullptr) {
    transform_winograd_filter(filter, shape.out_c, shape.in_c, shape.tile, w.packed.as<float>());
    transformed = w.packed.as<float>();
  }
  w.weights = transformed;
  return ptr;
}

namespace {

#if defined(__x86_64__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

// B^T of F(Tile x Tile, 3x3) applied to Tile + 2 vectors a[0], a[s], ...
template <size_t Tile>
__attribute__((target("avx512f"))) inline void input_1d(const __m512* a, size_t s, __m512* o, size_t os) {
  if constexpr (Tile == 4) {
    const __m512 a0 = a[0], a1 = a[s], a2 = a[2 * s], a3 = a[3 * s], a4 = a[4 * s], a5 = a[5 * s];
    const __m512 four = _mm512_set1_ps(4.0f), five = _mm512_set1_ps(5.0f), two = _mm512_set1_ps(2.0f);
    o[0] = _mm512_fmadd_ps(four, a0, _mm512_fnmadd_ps(five, a2, a4));
    o[os] = _mm512_fnmadd_ps(four, _mm512_add_ps(a1, a2), _mm512_add_ps(a3, a4));
    o[2 * os] = _mm512_fmadd_ps(four, _mm512_sub_ps(a1, a2), _mm512_sub_ps(a4, a3));
    o[3 * os] = _mm512_fmadd_ps(two, _mm512_sub_ps(a3, a1), _mm512_sub_ps(a4, a2));
    o[4 * os] = _mm512_fmadd_ps(two, _mm512_sub_ps(a1, a3), _mm512_sub_ps(a4, a2));
    o[5 * os] = _mm512_fmadd_ps(four, a1, _mm512_fnmadd_ps(five, a3, a5));
  } else {
    const __m512 a0 = a[0], a1 = a[s], a2 = a[2 * s], a3 = a[3 * s];
    o[0] = _mm512_sub_ps(a0, a2);
    o[os] = _mm512_add_ps(a1, a2);
    o[2 * os] = _mm512_sub_ps(a2, a1);
    o[3 * os] = _mm512_sub_ps(a1, a3);
  }
}

// A^T of F(Tile x Tile, 3x3) applied to Tile + 2 vectors m[0], m[s], ...,
// giving Tile.
template <size_t Tile>
__attribute__((target("avx512f"))) inline void output_1d(const __m512* m, size_t s, __m512* o, size_t os) {
  if constexpr (Tile == 4) {
    const __m512 s12 = _mm512_add_ps(m[s], m[2 * s]), d12 = _mm512_sub_ps(m[s], m[2 * s]);
    const __m512 s34 = _mm512_add_ps(m[3 * s], m[4 * s]), d34 = _mm512_sub_ps(m[3 * s], m[4 * s]);
    o[0] = _mm512_add_ps(_mm512_add_ps(m[0], s12), s34);
    o[os] = _mm512_fmadd_ps(_mm512_set1_ps(2.0f), d34, d12);
    o[2 * os] = _mm512_fmadd_ps(_mm512_set1_ps(4.0f), s34, s12);
    o[3 * os] = _mm512_add_ps(_mm512_fmadd_ps(_mm512_set1_ps(8.0f), d34, d12), m[5 * s]);
  } else {
    o[0] = _mm512_add_ps(_mm512_add_ps(m[0], m[s]), m[2 * s]);
    o[os] = _mm512_sub_ps(_mm512_sub_ps(m[s], m[2 * s]), m[3 * s]);
  }
}

// The same two transforms on 8-lane vectors, with AVX2 + FMA3.
template <size_t Tile>
__attribute__((target("avx2,fma"))) inline void input_1d(const __m256* a, size_t s, __m256* o, size_t os) {
  if constexpr (Tile == 4) {
    const __m256 a0 = a[0], a1 = a[s], a2 = a[2 * s], a3 = a[3 * s], a4 = a[4 * s], a5 = a[5 * s];
    const __m256 four = _mm256_set1_ps(4.0f), five = _mm256_set1_ps(5.0f), two = _mm256_set1_ps(2.0f);
    o[0] = _mm256_fmadd_ps(four, a0, _mm256_fnmadd_ps(five, a2, a4));
    o[os] = _mm256_fnmadd_ps(four, _mm256_add_ps(a1, a2), _mm256_add_ps(a3, a4));
    o[2 * os] = _mm256_fmadd_ps(four, _mm256_sub_ps(a1, a2), _mm256_sub_ps(a4, a3));
    o[3 * os] = _mm256_fmadd_ps(two, _mm256_sub_ps(a3, a1), _mm256_sub_ps(a4, a2));
    o[4 * os] = _mm256_fmadd_ps(two, _mm256_sub_ps(a1, a3), _mm256_sub_ps(a4, a2));
    o[5 * os] = _mm256_fmadd_ps(four, a1, _mm256_fnmadd_ps(five, a3, a5));
  } else {
    const __m256 a0 = a[0], a1 = a[s], a2 = a[2 * s], a3 = a[3 * s];
    o[0] = _mm256_sub_ps(a0, a2);
    o[os] = _mm256_add_ps(a1, a2);
    o[2 * os] = _mm256_sub_ps(a2, a1);
    o[3 * os] = _mm256_sub_ps(a1, a3);
  }
}

template <size_t Tile>
__attribute__((target("avx2,fma"))) inline void output_1d(const __m256* m, size_t s, __m256* o, size_t os) {
  if constexpr (Tile == 4) {
    const __m256 s12 = _mm256_add_ps(m[s], m[2 * s]), d12 = _mm256_sub_ps(m[s], m[2 * s]);
    const __m256 s34 = _mm256_add_ps(m[3 * s], m[4 * s]), d34 = _mm256_sub_ps(m[3 * s], m[4 * s]);
    o[0] = _mm256_add_ps(_mm256_add_ps(m[0], s12), s34);
    o[os] = _mm256_fmadd_ps(_mm256_set1_ps(2.0f), d34, d12);
    o[2 * os] = _mm256_fmadd_ps(_mm256_set1_ps(4.0f), s34, s12);
    o[3 * os] = _mm256_add_ps(_mm256_fmadd_ps(_mm256_set1_ps(8.0f), d34, d12), m[5 * s]);
  } else {
    o[0] = _mm256_add_ps(_mm256_add_ps(m[0], m[s]), m[2 * s]);
    o[os] = _mm256_sub_ps(_mm256_sub_ps(m[s], m[2 * s]), m[3 * s]);
  }
}

struct TileOrigin {
  size_t n;
  ptrdiff_t y, x;  // top-left output pixel of the tile (the input window starts pad above/left)
};

TileOrigin tile_origin(const Winograd& w, size_t t) {
  const size_t per_image = w.tiles_h * w.tiles_w;
  const size_t n = t / per_image, ty = t % per_image / w.tiles_w, tx = t % w.tiles_w;
  return {n, static_cast<ptrdiff_t>(ty * w.s.tile), static_cast<ptrdiff_t>(tx * w.s.tile)};
}

// Which rows and columns of a tile's input window (s.tile + 2 a side) lie
// inside the image.
struct Window {
  ptrdiff_t y0, x0;  // top-left input pixel (may be outside)
  bool row_in[kMaxAlpha], col_in[kMaxAlpha];
  // Floats from the image's start to window pixel (i, j), which is inside.
  size_t offset(size_t i, size_t j, const WinogradShape& s) const {
    return (static_cast<size_t>(y0 + static_cast<ptrdiff_t>(i)) * s.in_w +
            static_cast<size_t>(x0 + static_cast<ptrdiff_t>(j))) *
           s.in_c;
  }
};

Window window(const Winograd& w, TileOrigin t) {
  const WinogradShape& s = w.s;
  Window win;
  win.y0 = t.y - static_cast<ptrdiff_t>(s.pad_top);
  win.x0 = t.x - static_cast<ptrdiff_t>(s.pad_left);
  for (size_t i = 0; i < s.tile + 2; ++i) {
    const ptrdiff_t y = win.y0 + static_cast<ptrdiff_t>(i), x = win.x0 + static_cast<ptrdiff_t>(i);
    win.row_in[i] = y >= 0 && y < static_cast<ptrdiff_t>(s.in_h);
    win.col_in[i] = x >= 0 && x < static_cast<ptrdiff_t>(s.in_w);
  }
  return win;
}

// Whether every pixel of the window lies inside the image.
template <size_t A>
bool window_inside(const Window& win) {
  for (size_t i = 0; i < A; ++i)
    if (!win.row_in[i] || !win.col_in[i]) return false;
  return true;
}

// V[point][b][c] for tiles [first, first + count) of the block.
template <size_t Tile>
__attribute__((target("avx512f"))) void transform_input(const Winograd& w, const float* x, size_t first,
                                                        size_t count, float* v) {
  constexpr size_t A = Tile + 2, P = A * A;
  const WinogradShape& s = w.s;
  const size_t point_stride = w.block * w.in_c_pad, row_stride = s.in_w * s.in_c;
  for (size_t b = 0; b < count; ++b) {
    const TileOrigin t = tile_origin(w, first + b);
    const Window win = window(w, t);
    const float* image = x + t.n * s.in_h * s.in_w * s.in_c;
    const bool inside = window_inside<A>(win);
    const float* corner = inside ? image + win.offset(0, 0, s) : nullptr;
    for (size_t c = 0; c < w.in_c_pad; c += 16) {
      const size_t lanes = std::min<size_t>(16, s.in_c > c ? s.in_c - c : 0);
      const __mmask16 mask = static_cast<__mmask16>((uint32_t{1} << lanes) - 1);
      __m512 d[P], u[P];
      if (inside) {
#pragma GCC unroll 36
        for (size_t k = 0; k < P; ++k)
          d[k] = _mm512_maskz_loadu_ps(mask, corner + (k / A) * row_stride + (k % A) * s.in_c + c);
      } else {
        for (size_t i = 0; i < A; ++i)
          for (size_t j = 0; j < A; ++j)
            d[i * A + j] = win.row_in[i] && win.col_in[j]
                               ? _mm512_maskz_loadu_ps(mask, image + win.offset(i, j, s) + c)
                               : _mm512_setzero_ps();
      }
      for (size_t j = 0; j < A; ++j) input_1d<Tile>(&d[j], A, &u[j], A);          // columns: B^T d
      for (size_t i = 0; i < A; ++i) input_1d<Tile>(&u[i * A], 1, &d[i * A], 1);  // rows: (B^T d) B
      float* to = v + b * w.in_c_pad + c;
#pragma GCC unroll 36
      for (size_t p = 0; p < P; ++p) _mm512_store_ps(to + p * point_stride, d[p]);
    }
  }
}

// transform_input 8 channels at a time, with AVX2 + FMA3.
template <size_t Tile>
__attribute__((target("avx2,fma"))) void transform_input_avx2(const Winograd& w, const float* x, size_t first,
                                                              size_t count, float* v) {
  constexpr size_t A = Tile + 2, P = A * A;
  const WinogradShape& s = w.s;
  const size_t point_stride = w.block * w.in_c_pad, row_stride = s.in_w * s.in_c;
  for (size_t b = 0; b < count; ++b) {
    const TileOrigin t = tile_origin(w, first + b);
    const Window win = window(w, t);
    const float* image = x + t.n * s.in_h * s.in_w * s.in_c;
    const bool inside = window_inside<A>(win);
    const float* corner = inside ? image + win.offset(0, 0, s) : nullptr;
    for (size_t c = 0; c < w.in_c_pad; c += 8) {
      const size_t lanes = std::min<size_t>(8, s.in_c > c ? s.in_c - c : 0);
      const __m256i mask = lanes_avx2(lanes);
      __m256 d[P], u[P];
      if (inside) {
#pragma GCC unroll 36
        for (size_t k = 0; k < P; ++k)
          d[k] = _mm256_maskload_ps(corner + (k / A) * row_stride + (k % A) * s.in_c + c, mask);
      } else {
        for (size_t i = 0; i < A; ++i)
          for (size_t j = 0; j < A; ++j)
            d[i * A + j] = win.row_in[i] && win.col_in[j]
                               ? _mm256_maskload_ps(image + win.offset(i, j, s) + c, mask)
                               : _mm256_setzero_ps();
      }
      for (size_t j = 0; j < A; ++j) input_1d<Tile>(&d[j], A, &u[j], A);
      for (size_t i = 0; i < A; ++i) input_1d<Tile>(&u[i * A], 1, &d[i * A], 1);
      float* to = v + b * w.in_c_pad + c;
#pragma GCC unroll 36
      for (size_t p = 0; p < P; ++p) _mm256_store_ps(to + p * point_stride, d[p]);
    }
  }
}

// The input transform of tiles [first, first + count) into the block's V at
// v, on the widest instruction set there is.
void input_transform(const Winograd& w, const float* x, size_t first, size_t count, float* v) {
  const bool avx512 = native_avx512_available();
  if (w.s.tile == 2)
    avx512 ? transform_input<2>(w, x, first, count, v) : transform_input_avx2<2>(w, x, first, count, v);
  else
    avx512 ? transform_input<4>(w, x, first, count, v) : transform_input_avx2<4>(w, x, first, count, v);
}

// M[point][b][o] = sum over c of V[point][b][c] U[point][c][o], for the
// output channels of panels [panel_begin, panel_end). The weights stream
// from memory where the tiles are few (each panel is read once per GEMM
// tile of 12 rows): the first whole GEMM tiles of a panel, two to four,
// fetch a part each of the weights read next as they compute
// (native_fetch_parts). With AVX-512, a whole GEMM tile takes two whole
// panels at once (native_gemm_pair), its two halves fetching half of its
// part each.
void multiply(const Winograd& w, size_t count, const float* v, float* m, size_t panel_begin,
              size_t panel_end) {
  const float* rows[kRows + 1];
  const auto panel_weights = [&](size_t p, size_t panel) {
    return w.weights + (p * w.panels + panel) * w.panel_floats;
  };
  // Panels whose 32 channels are all outputs (the last may be narrower).
  const size_t whole_panels = std::min(panel_end, w.s.out_c / kChannels);
  const bool pairs = native_isa() == NativeIsa::kAvx512;
  // The panels taken at once from `panel` on.
  const auto step_at = [&](size_t panel) -> size_t { return pairs && panel + 2 <= whole_panels ? 2 : 1; };
  const size_t parts = native_fetch_parts(count / kRows);
  for (size_t p = 0; p < w.points(); ++p)
    for (size_t panel = panel_begin; panel < panel_end;) {
      const size_t step = step_at(panel);
      const float* u = panel_weights(p, panel);
      // The panels read next: their first's biases skipped, the rest
      // (next_panels x in_c_pad steps of two lines) in `parts` parts.
      const bool same_point = panel + step < panel_end;
      const float* next = same_point           ? panel_weights(p, panel + step)
                          : p + 1 < w.points() ? panel_weights(p + 1, panel_begin)
                                               : nullptr;
      const size_t next_panels = step_at(same_point ? panel + step : panel_begin);
      const size_t part_floats = next_panels * w.in_c_pad * kChannels / parts;
      const size_t channels = std::min(step * kChannels, w.s.out_c - panel * kChannels);
      for (size_t r0 = 0; r0 < count; r0 += kRows) {
        size_t n = std::min(kRows, count - r0);
        const size_t tile = r0 / kRows;
        // On the pair path a lone last row goes with the whole tile before
        // it, as 6 + 7 rows.
        const bool takes_last = step == 2 && count - r0 == kRows + 1;
        if (takes_last) n = kRows + 1;
        // Rows past the last repeat it (their sums are not read).
        for (size_t r = 0; r < std::max(n, kRows); ++r)
          rows[r] = v + (p * w.block + r0 + std::min(r, n - 1)) * w.in_c_pad;
        float* out = m + (p * w.block + r0) * w.out_c_pad + panel * kChannels;
        const float* fetch =
            next != nullptr && tile < parts ? next + kChannels + tile * part_floats : nullptr;
        if (step == 1) {
          native_gemm_panel(n, channels, w.in_c_pad, rows, u, out, w.out_c_pad, -INFINITY, INFINITY, fetch,
                            native_fetch_step(parts, 2 * next_panels));
        } else if (n >= kRows) {
          native_gemm_pair(n, w.in_c_pad, rows, u, w.panel_floats, out, w.out_c_pad, fetch,
                           fetch != nullptr ? fetch + part_floats / 2 : nullptr,
                           native_fetch_step(parts, next_panels));
          if (takes_last) break;
        } else {
          native_gemm_panel(n, kChannels, w.in_c_pad, rows, u, out, w.out_c_pad, -INFINITY, INFINITY, fetch,
                            native_fetch_step(parts, 2 * next_panels));
          native_gemm_panel(n, kChannels, w.in_c_pad, rows, u + w.panel_floats, out + kChannels, w.out_c_pad,
                            -INFINITY, INFINITY);
        }
      }
      panel += step;
    }
}

struct Store {
  const NativeEpilogue* e;
  float lo, hi;
  float* y;
  const float* residual;
  size_t c_begin, c_end;  // the output channels to store
};

// One tile's 16 output channels from c: A^T m A + bias, then the epilogue.
template <size_t Tile, bool Residual, ConvActivation Act>
__attribute__((target("avx512f"))) void transform_output_tile(const Winograd& w, const Store& st,
                                                              const float* m, size_t b, TileOrigin t) {
  constexpr size_t A = Tile + 2, P = A * A;
  const WinogradShape& s = w.s;
  const NativeEpilogue& e = *st.e;
  const size_t rows = std::min<size_t>(Tile, s.out_h - static_cast<size_t>(t.y));
  const size_t cols = std::min<size_t>(Tile, s.out_w - static_cast<size_t>(t.x));
  const __m512 vlo = _mm512_set1_ps(st.lo), vhi = _mm512_set1_ps(st.hi);
  const __m512 rlo = _mm512_set1_ps(e.residual_lo), rhi = _mm512_set1_ps(e.residual_hi);
  const size_t point_stride = w.block * w.out_c_pad;
  const float* from = m + b * w.out_c_pad;
  for (size_t c = st.c_begin; c < st.c_end; c += 16) {
    const size_t lanes = std::min<size_t>(16, s.out_c - c);
    const __mmask16 mask = static_cast<__mmask16>((uint32_t{1} << lanes) - 1);
    __m512 a[P], u[Tile * A], o[Tile * Tile];
#pragma GCC unroll 36
    for (size_t p = 0; p < P; ++p) a[p] = _mm512_load_ps(from + p * point_stride + c);
    for (size_t j = 0; j < A; ++j) output_1d<Tile>(&a[j], A, &u[j], A);                // A^T m: Tile x A
    for (size_t i = 0; i < Tile; ++i) output_1d<Tile>(&u[i * A], 1, &o[i * Tile], 1);  // (A^T m) A
    const __m512 bias = _mm512_load_ps(w.bias.as<float>() + c);
    for (size_t i = 0; i < rows; ++i)
      for (size_t j = 0; j < cols; ++j) {
        const size_t pixel =
            (t.n * s.out_h + static_cast<size_t>(t.y) + i) * s.out_w + static_cast<size_t>(t.x) + j;
        __m512 v = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(o[i * Tile + j], bias), vlo), vhi);
        if constexpr (Residual)
          v = _mm512_min_ps(
              _mm512_max_ps(_mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, st.residual + pixel * s.out_c + c)),
                            rlo),
              rhi);
        if constexpr (Act == ConvActivation::kSwish) v = swish_ps(v);
        if constexpr (Act == ConvActivation::kHardSwish) v = hardswish_ps(v);
        if (e.affine) v = _mm512_fmadd_ps(v, _mm512_set1_ps(e.scale), _mm512_set1_ps(e.shift));
        _mm512_mask_storeu_ps(st.y + pixel * e.out_stride + e.out_offset + c, mask, v);
      }
  }
}

// transform_output_tile 8 channels at a time, with AVX2 + FMA3.
template <size_t Tile, bool Residual, ConvActivation Act>
__attribute__((target("avx2,fma"))) void transform_output_tile_avx2(const Winograd& w, const Store& st,
                                                                    const float* m, size_t b, TileOrigin t) {
  constexpr size_t A = Tile + 2, P = A * A;
  const WinogradShape& s = w.s;
  const NativeEpilogue& e = *st.e;
  const size_t rows = std::min<size_t>(Tile, s.out_h - static_cast<size_t>(t.y));
  const size_t cols = std::min<size_t>(Tile, s.out_w - static_cast<size_t>(t.x));
  const __m256 vlo = _mm256_set1_ps(st.lo), vhi = _mm256_set1_ps(st.hi);
  const __m256 rlo = _mm256_set1_ps(e.residual_lo), rhi = _mm256_set1_ps(e.residual_hi);
  const size_t point_stride = w.block * w.out_c_pad;
  const float* from = m + b * w.out_c_pad;
  for (size_t c = st.c_begin; c < st.c_end; c += 8) {
    const __m256i mask = lanes_avx2(std::min<size_t>(8, s.out_c - c));
    __m256 a[P], u[Tile * A], o[Tile * Tile];
#pragma GCC unroll 36
    for (size_t p = 0; p < P; ++p) a[p] = _mm256_load_ps(from + p * point_stride + c);
    for (size_t j = 0; j < A; ++j) output_1d<Tile>(&a[j], A, &u[j], A);
    for (size_t i = 0; i < Tile; ++i) output_1d<Tile>(&u[i * A], 1, &o[i * Tile], 1);
    const __m256 bias = _mm256_load_ps(w.bias.as<float>() + c);
    for (size_t i = 0; i < rows; ++i)
      for (size_t j = 0; j < cols; ++j) {
        const size_t pixel =
            (t.n * s.out_h + static_cast<size_t>(t.y) + i) * s.out_w + static_cast<size_t>(t.x) + j;
        __m256 v = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(o[i * Tile + j], bias), vlo), vhi);
        if constexpr (Residual)
          v = _mm256_min_ps(
              _mm256_max_ps(_mm256_add_ps(v, _mm256_maskload_ps(st.residual + pixel * s.out_c + c, mask)),
                            rlo),
              rhi);
        if constexpr (Act == ConvActivation::kSwish) v = swish_ps(v);
        if constexpr (Act == ConvActivation::kHardSwish) v = hardswish_ps(v);
        if (e.affine) v = _mm256_fmadd_ps(v, _mm256_set1_ps(e.scale), _mm256_set1_ps(e.shift));
        _mm256_maskstore_ps(st.y + pixel * e.out_stride + e.out_offset + c, mask, v);
      }
  }
}

template <size_t Tile, bool Residual, ConvActivation Act>
void transform_output(const Winograd& w, const Store& st, const float* m, size_t first, size_t count,
                      bool avx512) {
  for (size_t b = 0; b < count; ++b) {
    if (avx512)
      transform_output_tile<Tile, Residual, Act>(w, st, m, b, tile_origin(w, first + b));
    else
      transform_output_tile_avx2<Tile, Residual, Act>(w, st, m, b, tile_origin(w, first + b));
  }
}

#pragma GCC diagnostic pop
#endif

struct Task {
  const Winograd* w;
  Store store;
  const float* x;
};

// The output transform and epilogue of tiles [first, first + count), the
// block's M in `m`, for the channels st says.
void store_output(const Winograd& w, const Store& st, const float* m, size_t first, size_t count,
                  bool avx512) {
#if defined(__x86_64__)
  using A = ConvActivation;
  const auto out = [&]<size_t Tile, bool Residual>() {
    switch (st.e->activation) {
      case A::kSwish: return transform_output<Tile, Residual, A::kSwish>(w, st, m, first, count, avx512);
      case A::kHardSwish:
        return transform_output<Tile, Residual, A::kHardSwish>(w, st, m, first, count, avx512);
      default: return transform_output<Tile, Residual, A::kNone>(w, st, m, first, count, avx512);
    }
  };
  const bool residual = st.residual != nullptr;
  if (w.s.tile == 2)
    residual ? out.template operator()<2, true>() : out.template operator()<2, false>();
  else
    residual ? out.template operator()<4, true>() : out.template operator()<4, false>();
#else
  (void)w, (void)st, (void)m, (void)first, (void)count, (void)avx512;
#endif
}

void run_chunk(void* context, size_t chunk) {
#if defined(__x86_64__)
  // Plain references, not a structured binding: clang before 16 does not let
  // the lambda below capture one.
  const Task& task = *static_cast<const Task*>(context);
  const Winograd& w = *task.w;
  const Store& st = task.store;
  const float* x = task.x;
  float* v = w.scratch + chunk * w.scratch_floats;
  float* m = v + w.points() * w.block * w.in_c_pad;
  const size_t begin = chunk * w.chunk_tiles, end = std::min(w.tiles, begin + w.chunk_tiles);
  const bool avx512 = native_avx512_available();
  for (size_t first = begin; first < end; first += w.block) {
    const size_t count = std::min(w.block, end - first);
    input_transform(w, x, first, count, v);
    multiply(w, count, v, m, 0, w.panels);
    store_output(w, st, m, first, count, avx512);
  }
#else
  (void)context, (void)chunk;
#endif
}

// Split panels: share `part` of w.chunks (one a thread) — whole pairs of
// panels where there are as many pairs as shares, else panels — over all
// tiles, from this share's own transform of their input.
void run_panel_share(void* context, size_t part) {
#if defined(__x86_64__)
  const Task& task = *static_cast<const Task*>(context);
  const Winograd& w = *task.w;
  float* v = w.scratch + part * w.scratch_floats;
  float* m = v + w.points() * w.block * w.in_c_pad;
  const size_t unit = ceil_div(w.panels, 2) >= w.chunks ? 2 : 1;
  const size_t units = ceil_div(w.panels, unit);
  const size_t begin = std::min(w.panels, part * units / w.chunks * unit);
  const size_t end = std::min(w.panels, (part + 1) * units / w.chunks * unit);
  if (begin >= end) return;
  input_transform(w, task.x, 0, w.tiles, v);
  multiply(w, w.tiles, v, m, begin, end);
  Store st = task.store;
  st.c_begin = begin * kChannels;
  st.c_end = std::min(w.s.out_c, end * kChannels);
  store_output(w, st, m, 0, w.tiles, native_avx512_available());
#else
  (void)context, (void)part;
#endif
}

}  // namespace

void run_winograd(const Winograd& w, const NativeEpilogue& e, float lo, float hi, const float* x, float* y,
                  const float* residual, pthreadpool_t pool) {
  Task task{&w, Store{&e, lo, hi, y, e.has_residual ? residual : nullptr, 0, w.s.out_c}, x};
  // The scratch is per chunk (or share of the panels), so a pool with fewer
  // threads than chunks still gives each its own.
  pthreadpool_parallelize_1d(pool, w.split_panels ? run_panel_share : run_chunk, &task, w.chunks, 0);
}

}  // namespace etc::xnnpack
