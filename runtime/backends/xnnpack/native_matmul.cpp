#include "runtime/backends/xnnpack/native_matmul.h"

#include <algorithm>
#include <cstring>

#include "runtime/backends/xnnpack/native_conv.h"
#include "runtime/backends/xnnpack/native_isa.h"
#include "runtime/backends/xnnpack/native_plan.h"

namespace etc::xnnpack {
namespace {

constexpr size_t kRows = kNativeGemmRows;
constexpr size_t kChannels = kNativeGemmChannels;

size_t ceil_div(size_t v, size_t d) { return (v + d - 1) / d; }
size_t panels(const BatchMatMulOp& op) { return ceil_div(op.n, kChannels); }
size_t panel_floats(const BatchMatMulOp& op) { return kChannels + op.k * kChannels; }

// Where batch `batch`'s A, B and product start.
struct Offsets {
  size_t a = 0, b = 0, c = 0;
};

Offsets offsets(const BatchMatMulOp& op, size_t batch) {
  Offsets o;
  for (size_t d = op.batch.size(); d-- > 0;) {
    const size_t i = batch % op.batch[d];
    batch /= op.batch[d];
    o.a += i * op.sa.batch[d], o.b += i * op.sb.batch[d], o.c += i * op.sc.batch[d];
  }
  return o;
}

struct Task {
  const BatchMatMulOp* op;
  float* const* data;
  float* packed;
};

// Panel `panel` of batch `batch`'s B: 32 zero biases, then k rows of its 32
// columns (zeros past n).
void pack_panel(void* context, size_t batch, size_t panel) {
  const Task& t = *static_cast<const Task*>(context);
  const BatchMatMulOp& op = *t.op;
  float* to = t.packed + (batch * panels(op) + panel) * panel_floats(op);
  std::memset(to, 0, kChannels * sizeof(float));
  to += kChannels;
  const size_t first = panel * kChannels, cols = std::min(kChannels, op.n - first);
  const float* from = t.data[op.b] + offsets(op, batch).b + first * op.sb.col;
  for (size_t k = 0; k < op.k; ++k, to += kChannels, from += op.sb.row) {
    if (op.sb.col == 1) {
      std::memcpy(to, from, cols * sizeof(float));
    } else {
      for (size_t j = 0; j < cols; ++j) to[j] = from[j * op.sb.col];
    }
    std::fill(to + cols, to + kChannels, 0.0f);
  }
}

// Rows [12 tile, 12 tile + 12) of batch `batch`'s product, every panel:
// two whole panels at a time with AVX-512 where the tile is whole.
void multiply_tile(void* context, size_t batch, size_t tile) {
  const Task& t = *static_cast<const Task*>(context);
  const BatchMatMulOp& op = *t.op;
  const Offsets o = offsets(op, batch);
  const size_t first = tile * kRows, rows = std::min(kRows, op.m - first);
  const float* a[kRows];
  for (size_t r = 0; r < kRows; ++r) a[r] = t.data[op.a] + o.a + (first + std::min(r, rows - 1)) * op.sa.row;
  float* y = t.data[op.c] + o.c + first * op.sc.row;
  const size_t floats = panel_floats(op);
  const float* w = t.packed + batch * panels(op) * floats;
  const size_t whole = op.n / kChannels;
  const bool pairs = native_avx512_available() && rows == kRows;
  for (size_t p = 0; p < panels(op);) {
    if (pairs && p + 2 <= whole) {
      native_gemm_pair(kRows, op.k, a, w + p * floats, floats, y + p * kChannels, op.sc.row);
      p += 2;
    } else {
      native_gemm_panel(rows, std::min(kChannels, op.n - p * kChannels), op.k, a, w + p * floats,
                        y + p * kChannels, op.sc.row);
      ++p;
    }
  }
}

}  // namespace

bool matmul_runs_on_kernel(const BatchMatMulOp& op) {
  // Fewer rows than a tile would pack B for less work than packing it.
  return native_convolution_available() && op.sa.col == 1 && op.sc.col == 1 && op.m >= kRows;
}

size_t matmul_scratch_floats(const BatchMatMulOp& op) {
  return matmul_runs_on_kernel(op) ? op.batches * panels(op) * panel_floats(op) : 0;
}

void run_matmul_on_kernel(const BatchMatMulOp& op, float* const* data, float* packed, pthreadpool_t pool) {
  Task task{&op, data, packed};
  pthreadpool_parallelize_2d(pool, pack_panel, &task, op.batches, panels(op), 0);
  pthreadpool_parallelize_2d(pool, multiply_tile, &task, op.batches, ceil_div(op.m, kRows), 0);
}

}  // namespace etc::xnnpack
