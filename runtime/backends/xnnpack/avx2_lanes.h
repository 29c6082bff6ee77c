#pragma once
// The lane mask of AVX2's masked loads and stores (_mm256_maskload_ps,
// _mm256_maskstore_ps), shared by the native kernels' AVX2 versions.

#include <cstddef>
#include <cstdint>

#if defined(__x86_64__)
#include <immintrin.h>

namespace etc::xnnpack {

// Lanes [0, n) of 8 (n <= 8); a masked load reads the rest as zero.
__attribute__((target("avx2,fma"))) inline __m256i lanes_avx2(size_t n) {
  alignas(32) static constexpr int32_t kMask[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kMask + 8 - n));
}

}  // namespace etc::xnnpack
#endif
