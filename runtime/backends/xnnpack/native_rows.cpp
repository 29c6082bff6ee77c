#include "runtime/backends/xnnpack/native_rows.h"

#include <cmath>
#include <cstdint>

#include "runtime/backends/xnnpack/avx2_lanes.h"
#include "runtime/backends/xnnpack/native_isa.h"
#include "runtime/backends/xnnpack/swish.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace etc::xnnpack {
namespace {

#if defined(__x86_64__)
// GCC 12 reads the AVX-512 intrinsics' pass-through operands (of the
// reductions too) as uninitialised.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

__attribute__((target("avx512f"))) void row_avx512(const float* x, float* y, size_t n, bool log) {
  const size_t whole = n / 16 * 16;
  const auto tail = static_cast<__mmask16>((uint32_t{1} << (n - whole)) - 1);
  __m512 top = _mm512_set1_ps(-INFINITY);
  for (size_t i = 0; i < whole; i += 16) top = _mm512_max_ps(top, _mm512_loadu_ps(x + i));
  top = _mm512_mask_max_ps(top, tail, top, _mm512_maskz_loadu_ps(tail, x + whole));
  const __m512 max = _mm512_set1_ps(_mm512_reduce_max_ps(top));
  __m512 sum = _mm512_setzero_ps();
  for (size_t i = 0; i < whole; i += 16) {
    const __m512 e = exp_ps(_mm512_sub_ps(_mm512_loadu_ps(x + i), max));
    if (!log) _mm512_storeu_ps(y + i, e);
    sum = _mm512_add_ps(sum, e);
  }
  if (tail != 0) {
    const __m512 e = exp_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, x + whole), max));
    if (!log) _mm512_mask_storeu_ps(y + whole, tail, e);
    sum = _mm512_mask_add_ps(sum, tail, sum, e);
  }
  const float total = _mm512_reduce_add_ps(sum);
  if (log) {
    const __m512 shift = _mm512_add_ps(max, _mm512_set1_ps(std::log(total)));
    for (size_t i = 0; i < whole; i += 16)
      _mm512_storeu_ps(y + i, _mm512_sub_ps(_mm512_loadu_ps(x + i), shift));
    _mm512_mask_storeu_ps(y + whole, tail, _mm512_sub_ps(_mm512_maskz_loadu_ps(tail, x + whole), shift));
    return;
  }
  const __m512 scale = _mm512_set1_ps(1.0f / total);
  for (size_t i = 0; i < whole; i += 16)
    _mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_loadu_ps(y + i), scale));
  _mm512_mask_storeu_ps(y + whole, tail, _mm512_mul_ps(_mm512_maskz_loadu_ps(tail, y + whole), scale));
}

__attribute__((target("avx512f"))) void layer_norm_avx512(const float* x, float* y, size_t n,
                                                          const float* scale, const float* bias,
                                                          float epsilon) {
  const size_t whole = n / 16 * 16;
  const auto tail = static_cast<__mmask16>((uint32_t{1} << (n - whole)) - 1);
  __m512 sum = _mm512_maskz_loadu_ps(tail, x + whole);
  for (size_t i = 0; i < whole; i += 16) sum = _mm512_add_ps(sum, _mm512_loadu_ps(x + i));
  const __m512 mean = _mm512_set1_ps(_mm512_reduce_add_ps(sum) / static_cast<float>(n));
  const __m512 last = _mm512_maskz_sub_ps(tail, _mm512_maskz_loadu_ps(tail, x + whole), mean);
  __m512 squares = _mm512_mul_ps(last, last);
  for (size_t i = 0; i < whole; i += 16) {
    const __m512 d = _mm512_sub_ps(_mm512_loadu_ps(x + i), mean);
    squares = _mm512_fmadd_ps(d, d, squares);
  }
  const float var = _mm512_reduce_add_ps(squares) / static_cast<float>(n);
  const __m512 inv = _mm512_set1_ps(1.0f / std::sqrt(var + epsilon));
  for (size_t i = 0; i < n; i += 16) {
    const __mmask16 m = i < whole ? static_cast<__mmask16>(0xFFFF) : tail;
    const __m512 d = _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), mean), inv);
    __m512 v = _mm512_mul_ps(d, _mm512_maskz_loadu_ps(m, scale + i));
    if (bias != nullptr) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, bias + i));
    _mm512_mask_storeu_ps(y + i, m, v);
  }
}

__attribute__((target("avx2,fma"))) float sum_avx2(__m256 v) {
  const __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 q = _mm_add_ps(h, _mm_movehl_ps(h, h));
  return _mm_cvtss_f32(_mm_add_ss(q, _mm_movehdup_ps(q)));
}

__attribute__((target("avx2,fma"))) float max_avx2(__m256 v) {
  const __m128 h = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 q = _mm_max_ps(h, _mm_movehl_ps(h, h));
  return _mm_cvtss_f32(_mm_max_ss(q, _mm_movehdup_ps(q)));
}

__attribute__((target("avx2,fma"))) void layer_norm_avx2(const float* x, float* y, size_t n,
                                                         const float* scale, const float* bias,
                                                         float epsilon) {
  const size_t whole = n / 8 * 8;
  const __m256i tail = lanes_avx2(n - whole);
  __m256 sum = _mm256_maskload_ps(x + whole, tail);
  for (size_t i = 0; i < whole; i += 8) sum = _mm256_add_ps(sum, _mm256_loadu_ps(x + i));
  const __m256 mean = _mm256_set1_ps(sum_avx2(sum) / static_cast<float>(n));
  const __m256 last =
      _mm256_and_ps(_mm256_sub_ps(_mm256_maskload_ps(x + whole, tail), mean), _mm256_castsi256_ps(tail));
  __m256 squares = _mm256_mul_ps(last, last);
  for (size_t i = 0; i < whole; i += 8) {
    const __m256 d = _mm256_sub_ps(_mm256_loadu_ps(x + i), mean);
    squares = _mm256_fmadd_ps(d, d, squares);
  }
  const float var = sum_avx2(squares) / static_cast<float>(n);
  const __m256 inv = _mm256_set1_ps(1.0f / std::sqrt(var + epsilon));
  for (size_t i = 0; i < n; i += 8) {
    const __m256i m = i < whole ? _mm256_set1_epi32(-1) : tail;
    const __m256 d = _mm256_mul_ps(_mm256_sub_ps(_mm256_maskload_ps(x + i, m), mean), inv);
    __m256 v = _mm256_mul_ps(d, _mm256_maskload_ps(scale + i, m));
    if (bias != nullptr) v = _mm256_add_ps(v, _mm256_maskload_ps(bias + i, m));
    _mm256_maskstore_ps(y + i, m, v);
  }
}

__attribute__((target("avx2,fma"))) void row_avx2(const float* x, float* y, size_t n, bool log) {
  const size_t whole = n / 8 * 8;
  const __m256i tail = lanes_avx2(n - whole);
  const __m256 none = _mm256_set1_ps(-INFINITY);
  __m256 top = none;
  for (size_t i = 0; i < whole; i += 8) top = _mm256_max_ps(top, _mm256_loadu_ps(x + i));
  top = _mm256_max_ps(top,
                      _mm256_blendv_ps(none, _mm256_maskload_ps(x + whole, tail), _mm256_castsi256_ps(tail)));
  const __m256 max = _mm256_set1_ps(max_avx2(top));
  __m256 sum = _mm256_setzero_ps();
  for (size_t i = 0; i < whole; i += 8) {
    const __m256 e = exp_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), max));
    if (!log) _mm256_storeu_ps(y + i, e);
    sum = _mm256_add_ps(sum, e);
  }
  if (n > whole) {
    const __m256 e = _mm256_and_ps(exp_ps(_mm256_sub_ps(_mm256_maskload_ps(x + whole, tail), max)),
                                   _mm256_castsi256_ps(tail));
    if (!log) _mm256_maskstore_ps(y + whole, tail, e);
    sum = _mm256_add_ps(sum, e);
  }
  const float total = sum_avx2(sum);
  if (log) {
    const __m256 shift = _mm256_add_ps(max, _mm256_set1_ps(std::log(total)));
    for (size_t i = 0; i < whole; i += 8)
      _mm256_storeu_ps(y + i, _mm256_sub_ps(_mm256_loadu_ps(x + i), shift));
    _mm256_maskstore_ps(y + whole, tail, _mm256_sub_ps(_mm256_maskload_ps(x + whole, tail), shift));
    return;
  }
  const __m256 scale = _mm256_set1_ps(1.0f / total);
  for (size_t i = 0; i < whole; i += 8) _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_loadu_ps(y + i), scale));
  _mm256_maskstore_ps(y + whole, tail, _mm256_mul_ps(_mm256_maskload_ps(y + whole, tail), scale));
}

#pragma GCC diagnostic pop
#endif

}  // namespace

bool softmax_runs_natively(const fb::Node& node) {
  return node.type() == fb::NodeType::Softmax && node.flags() == 0 && native_convolution_available();
}

void softmax_row(const float* x, float* y, size_t n, bool log) {
#if defined(__x86_64__)
  if (native_avx512_available())
    row_avx512(x, y, n, log);
  else
    row_avx2(x, y, n, log);
#else
  (void)x, (void)y, (void)n, (void)log;
#endif
}

void layer_norm_row(const float* x, float* y, size_t n, const float* scale, const float* bias,
                    float epsilon) {
#if defined(__x86_64__)
  if (native_avx512_available())
    layer_norm_avx512(x, y, n, scale, bias, epsilon);
  else
    layer_norm_avx2(x, y, n, scale, bias, epsilon);
#else
  (void)x, (void)y, (void)n, (void)scale, (void)bias, (void)epsilon;
#endif
}

}  // namespace etc::xnnpack
