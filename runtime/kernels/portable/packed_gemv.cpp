#include "runtime/kernels/portable/packed_gemv.h"

#include <algorithm>
#include <cstring>

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
// One block: V registers of 16 columns, all k rows of the block streamed once.
template <int V>
__attribute__((target("avx512f"))) void block_avx512(const float* p, const float* x, int64_t k, float* y,
                                                     int64_t valid) {
  __m512 acc[V];
  for (int v = 0; v < V; ++v) acc[v] = _mm512_setzero_ps();
  for (int64_t i = 0; i < k; ++i) {
    const __m512 xi = _mm512_set1_ps(x[i]);
    const float* row = p + i * (kLanes * V);
    for (int v = 0; v < V; ++v) acc[v] = _mm512_fmadd_ps(xi, _mm512_load_ps(row + kLanes * v), acc[v]);
  }
  for (int v = 0; v < V; ++v) {
    const int64_t left = valid - kLanes * v;
    if (left >= kLanes)
      _mm512_storeu_ps(y + kLanes * v, acc[v]);
    else if (left > 0)
      _mm512_mask_storeu_ps(y + kLanes * v, static_cast<__mmask16>((1u << left) - 1u), acc[v]);
  }
}

using BlockFn = void (*)(const float*, const float*, int64_t, float*, int64_t);
constexpr BlockFn kBlocks[] = {block_avx512<1>, block_avx512<2>, block_avx512<3>, block_avx512<4>,
                               block_avx512<5>, block_avx512<6>, block_avx512<7>, block_avx512<8>};
static_assert(sizeof(kBlocks) / sizeof(kBlocks[0]) * kLanes == PackedGemv::kBlock);
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

PackedGemv PackedGemv::pack_always(const float* w, int64_t n, int64_t k, int64_t ldw) {
  PackedGemv g;
  if (n <= 0 || k <= 0) return g;
  g.data_ = AlignedBuffer::allocate(static_cast<size_t>(padded(n) * k) * sizeof(float));
  if (!g.data_) return g;
  g.n_ = n;
  g.k_ = k;
  float* out = g.data_.as<float>();
  for (int64_t j0 = 0; j0 < n; j0 += kBlock) {
    const int64_t width = block_width(n, j0);
    float* block = out + j0 * k;
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < width; ++j) block[i * width + j] = j0 + j < n ? w[(j0 + j) * ldw + i] : 0.0f;
  }
  return g;
}

void PackedGemv::run(const float* x, float* y) const {
#if ETC_PACKED_GEMV_X86
  const float* p = data_.as<const float>();
  for (int64_t j0 = 0; j0 < n_; j0 += kBlock) {
    const int64_t width = block_width(n_, j0);
    kBlocks[width / kLanes - 1](p + j0 * k_, x, k_, y + j0, std::min(width, n_ - j0));
  }
#else
  run_portable(x, y);
#endif
}

void PackedGemv::run_portable(const float* x, float* y) const {
  const float* p = data_.as<const float>();
  float acc[kBlock];
  for (int64_t j0 = 0; j0 < n_; j0 += kBlock) {
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
