#pragma once
// Internal to the GEMM: the per-instruction-set builds behind gemm_f32 and
// gemm_f64 (gemm.h). gemm.cpp picks one once, from what the CPU supports;
// tests call them directly to check that every build agrees.

#include <cstdint>

namespace etc::gemm_isa {

// Built for the baseline ISA of the whole project (runs everywhere).
void gemm_f32_baseline(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                       const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                       int64_t ldc);
void gemm_f64_baseline(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
                       const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c,
                       int64_t ldc);

// True when gemm_avx2.cpp was compiled with AVX2 and FMA enabled; the *_avx2
// functions must only be called when this is true and avx2_supported() is.
bool avx2_built();
// True when the running CPU has AVX2 and FMA (false off x86).
bool avx2_supported();

// Built with -mavx2 -mfma (gemm_avx2.cpp).
void gemm_f32_avx2(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                   int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
void gemm_f64_avx2(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
                   int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc);

}  // namespace etc::gemm_isa
