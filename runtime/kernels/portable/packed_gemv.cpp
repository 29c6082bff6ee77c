#include "runtime/kernels/portable/packed_gemv.h"

#include <algorithm>

#include "runtime/core/task_pool.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define ETC_PACKED_GEMV_X86 1
#else
#define ETC_PACKED_GEMV_X86 0
#endif

namespace etc {
namespace {

constexpr int64_t kLanes = 16;

int64_t padded(int64_t n) { return (n + kLanes - 1) / kLanes * kLanes; }

// Width of the block of columns starting at j0 (a multiple of 16).
int64_t block_width(int64_t n, int64_t j0) { return std::min(PackedGemv::kBlock, padded(n) - j0); }

#if ETC_PACKED_GEMV_X86

// V vectors (16 columns each) of a block whose rows are `ld` floats apart,
// for R rows of x (row stride ldx) at once: R x V accumulators, the block's
// k rows streamed once for all R. Each column sums its k products in order
// whatever R and V are, so every tiling gives the same bits.
// No software prefetch: asking for the lines 4 KB ahead (a row's 8 lines
// a step) made a recurrent step through a 4 MB R 14% slower on a Zen 4
// core (lstm_speech 14.0 -> 12.0 ms at 1 thread, 6.65 -> 6.0 at 2),
// where it had made one through a 16 MB R on Sapphire Rapids ~4% faster;
// the hardware prefetchers stream the block either way.
template <int V, int R>
__attribute__((target("avx512f"))) void block_avx512(const float* p, int64_t ld, const float* x, int64_t ldx,
                                                     int64_t k, float* y, int64_t ldy, int64_t valid) {
  __m512 acc[R][V];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) acc[r][v] = _mm512_setzero_ps();
  for (int64_t i = 0; i < k; ++i) {
    const float* row = p + i * ld;
    __m512 w[V];
    for (int v = 0; v < V; ++v) w[v] = _mm512_load_ps(row + kLanes * v);
    for (int r = 0; r < R; ++r) {
      const __m512 xi = _mm512_set1_ps(x[r * ldx + i]);
      for (int v = 0; v < V; ++v) acc[r][v] = _mm512_fmadd_ps(xi, w[v], acc[r][v]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) {
      const int64_t left = valid - kLanes * v;
      if (left >= kLanes)
        _mm512_storeu_ps(y + r * ldy + kLanes * v, acc[r][v]);
      else if (left > 0)
        _mm512_mask_storeu_ps(y + r * ldy + kLanes * v, static_cast<__mmask16>((1u << left) - 1u), acc[r][v]);
    }
}

using BlockFn = void (*)(const float*, int64_t, const float*, int64_t, int64_t, float*, int64_t, int64_t);

// One row of x takes a whole block (up to 8 vectors) at a time.
constexpr BlockFn kRowBlocks[] = {block_avx512<1, 1>, block_avx512<2, 1>, block_avx512<3, 1>,
                                  block_avx512<4, 1>, block_avx512<5, 1>, block_avx512<6, 1>,
                                  block_avx512<7, 1>, block_avx512<8, 1>};
static_assert(sizeof(kRowBlocks) / sizeof(kRowBlocks[0]) * kLanes == PackedGemv::kBlock);

// More rows go through a block kStripVectors vectors at a time, kRows rows
// at a time: 6 x 4 accumulators, each weight vector loaded once for six
// rows (3 x 8 loaded each of a block's 8 vectors three times, 27 loads to
// 24 multiply-adds: 73% of one Zen 4 core's peak on lstm_speech's input
// projections, 88% so).
constexpr int kRows = 6;
constexpr int kStripVectors = 4;
template <int R>
constexpr BlockFn kStrips[] = {block_avx512<1, R>, block_avx512<2, R>, block_avx512<3, R>,
                               block_avx512<4, R>};
constexpr const BlockFn* kStripsByRows[] = {kStrips<1>, kStrips<2>, kStrips<3>,
                                            kStrips<4>, kStrips<5>, kStrips<6>};
static_assert(sizeof(kStripsByRows) / sizeof(kStripsByRows[0]) == kRows);
static_assert(sizeof(kStrips<1>) / sizeof(kStrips<1>[0]) == kStripVectors);
#endif

}  // namespace

bool packed_gemv_available() {
#if ETC_PACKED_GEMV_X86
  static const bool available = __builtin_cpu_supports("avx512f");
  return available;
#else
  return false;
#endif
}

PackedGemv PackedGemv::pack(const float* w, int64_t n, int64_t k, int64_t ldw) {
  if (!packed_gemv_available()) return {};
  return pack_always(w, n, k, ldw);
}

int64_t PackedGemv::packed_floats(int64_t n, int64_t k) { return n > 0 && k > 0 ? padded(n) * k : 0; }

void PackedGemv::pack_into(const float* w, int64_t n, int64_t k, int64_t ldw, float* out) {
  // A row of w at a time, a line of it (16 floats) to 16 rows of the block,
  // so that w is read in order: reading a block's column of w, a float a
  // row at the row stride, packed a 512 x 128 matrix in cache 1.5x slower.
  for (int64_t j0 = 0; j0 < n; j0 += kBlock) {
    const int64_t width = block_width(n, j0);
    float* block = out + j0 * k;
    for (int64_t i0 = 0; i0 < k; i0 += kLanes) {
      const int64_t i1 = std::min(k, i0 + kLanes);
      for (int64_t j = 0; j < width; ++j) {
        const float* src = w + (j0 + j) * ldw;
        for (int64_t i = i0; i < i1; ++i) block[i * width + j] = j0 + j < n ? src[i] : 0.0f;
      }
    }
  }
}

PackedGemv PackedGemv::pack_always(const float* w, int64_t n, int64_t k, int64_t ldw) {
  PackedGemv g;
  if (n <= 0 || k <= 0) return g;
  g.data_ = AlignedBuffer::allocate(static_cast<size_t>(packed_floats(n, k)) * sizeof(float));
  if (!g.data_) return g;
  g.data_.populate();
  pack_into(w, n, k, ldw, g.data_.as<float>());
  g.p_ = g.data_.as<const float>();
  g.n_ = n;
  g.k_ = k;
  return g;
}

PackedGemv PackedGemv::view(const float* data, int64_t n, int64_t k) {
  PackedGemv g;
  if (n <= 0 || k <= 0 || data == nullptr ||
      reinterpret_cast<uintptr_t>(data) % AlignedBuffer::kAlignment != 0)
    return g;
  g.p_ = data;
  g.n_ = n;
  g.k_ = k;
  return g;
}

void PackedGemv::run(const float* x, float* y) const { run_rows(x, k_, 1, y, n_); }

void PackedGemv::run_rows(const float* x, int64_t ldx, int64_t rows, float* y, int64_t ldy) const {
  run_blocks(x, ldx, rows, y, ldy, 0, blocks());
}

void PackedGemv::run_blocks(const float* x, int64_t ldx, int64_t rows, float* y, int64_t ldy, int64_t first,
                            int64_t end, bool backward) const {
#if ETC_PACKED_GEMV_X86
  // Block by block, every row through each: a block (up to 128 x k floats)
  // is read from memory once and from cache for the rest of the rows (row
  // by row, an input projection of 50 steps through a 16 MB W read all of it
  // 17 times).
  const float* p = p_;
  for (int64_t b = first; b < end; ++b) {
    const int64_t j0 = (backward ? first + end - 1 - b : b) * kBlock;
    const int64_t width = block_width(n_, j0);
    const int64_t valid = std::min(width, n_ - j0);
    const float* block = p + j0 * k_;
    if (rows == 1) {
      kRowBlocks[width / kLanes - 1](block, width, x, ldx, k_, y + j0, ldy, valid);
      continue;
    }
    for (int64_t c0 = 0; c0 < width; c0 += kStripVectors * kLanes) {
      const int64_t vectors = std::min<int64_t>(kStripVectors, (width - c0) / kLanes);
      for (int64_t r0 = 0; r0 < rows; r0 += kRows) {
        const int64_t r = std::min<int64_t>(kRows, rows - r0);
        kStripsByRows[r - 1][vectors - 1](block + c0, width, x + r0 * ldx, ldx, k_, y + r0 * ldy + j0 + c0,
                                          ldy, valid - c0);
      }
    }
  }
#else
  (void)backward;
  for (int64_t r = 0; r < rows; ++r) portable_blocks(x + r * ldx, y + r * ldy, first, end);
#endif
}

void PackedGemv::run_rows_on(TaskPool* pool, const float* x, int64_t ldx, int64_t rows, float* y, int64_t ldy,
                             bool backward) const {
  const bool split =
      pool != nullptr && pool->threads() > 1 && blocks() > 1 && rows * n_ * k_ >= kThreadedWork;
  TaskPool::run_owned(
      split ? pool : nullptr, static_cast<size_t>(blocks()), backward, [&](size_t first, size_t end) {
        run_blocks(x, ldx, rows, y, ldy, static_cast<int64_t>(first), static_cast<int64_t>(end), backward);
      });
}

void PackedGemv::run_portable(const float* x, float* y) const { portable_blocks(x, y, 0, blocks()); }

void PackedGemv::portable_blocks(const float* x, float* y, int64_t first, int64_t end) const {
  const float* p = p_;
  float acc[kBlock];
  for (int64_t j0 = first * kBlock; j0 < std::min(n_, end * kBlock); j0 += kBlock) {
    const int64_t width = block_width(n_, j0);
    const float* block = p + j0 * k_;
    std::fill_n(acc, width, 0.0f);
    for (int64_t i = 0; i < k_; ++i) {
      const float xi = x[i];
      for (int64_t j = 0; j < width; ++j) acc[j] += xi * block[i * width + j];
    }
    std::copy_n(acc, std::min(width, n_ - j0), y + j0);
  }
}

}  // namespace etc
