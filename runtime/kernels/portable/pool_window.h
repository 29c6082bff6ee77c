#pragma once
// Internal to the pool kernel family: parameters shared by pool.cpp (shape
// functions, op defs) and the kernels in pool_kernels.cpp.

#include <cstdint>
#include <memory>

#include "runtime/core/dtype.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/portable/conv_geometry.h"

namespace etc {

struct PoolParams {
  WindowGeometry g;
  int64_t batch = 1;
  int64_t channels = 1;
  bool count_include_pad = false;     // avg_pool: divide by the taps inside the padded input
  bool column_major_indices = false;  // max_pool: storage_order = 1
  bool with_indices = false;          // max_pool: second output (int64 flat input indices)
};

// Kernels for validated params (max: float32, float64, int8, uint8; avg: float32, float64).
std::unique_ptr<Kernel> make_max_pool_kernel(DType dtype, const PoolParams& p);
std::unique_ptr<Kernel> make_avg_pool_kernel(DType dtype, const PoolParams& p);

}  // namespace etc
