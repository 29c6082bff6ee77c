#pragma once
// Batched matrix products (native_math.h BatchMatMulOp) on the native
// convolution's micro-kernel (native_conv.h native_gemm_panel and
// native_gemm_pair): each run first packs every batch's B — an activation,
// so it cannot be packed ahead — into the kernel's 32-column panels (zero
// biases, then k rows of 32), into scratch the delegate's products share;
// then each task takes 12 rows of one batch's A against all its panels.
// Attention's Q K^T and its product with V (k and n of 32 to 128) ran at
// about half the FMA peak on the portable GEMM; on the kernel at 75-85% of
// it (transformer_encoder on Zen 5).
//
// It takes a product whose A rows are contiguous (unit column stride; the
// product's columns always are), on a CPU that runs the native kernels;
// others stay on the portable GEMM.

#include <pthreadpool.h>

#include <cstddef>

#include "runtime/backends/xnnpack/native_math.h"

namespace etc::xnnpack {

// Whether the kernel can compute `op` (checked, compiled).
bool matmul_runs_on_kernel(const BatchMatMulOp& op);

// Floats of packed B a run writes: every batch's panels.
size_t matmul_scratch_floats(const BatchMatMulOp& op);

// Runs `op` on the kernel, packing into `packed` (matmul_scratch_floats,
// 64-byte aligned). `data[t]` is where tensor t lives.
void run_matmul_on_kernel(const BatchMatMulOp& op, float* const* data, float* packed, pthreadpool_t pool);

}  // namespace etc::xnnpack
