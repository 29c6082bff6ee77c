#pragma once
// y[0:n] = x[0:k] · Wᵀ for a constant W [n, k] (row-major), with W packed once
// into column blocks so that one product streams it exactly once, front to
// back: the recurrent products of LSTM and GRU cells (a hidden-state row
// times Rᵀ at every time step), which are too small for a GEMM to amortise
// its packing and too long-lived to pack every call, and their input
// projections (all time steps' rows times Wᵀ, a few rows at a time).
//
// Packing happens only where the AVX-512 kernel runs (packed_gemv_available());
// elsewhere pack() gives an empty PackedGemv and callers keep their GEMM on W
// as it is (Eigen's kernels: the path every other CPU, ARM included, takes).

#include <cstdint>

#include "runtime/core/aligned_buffer.h"

namespace etc {

// True when this CPU runs the AVX-512 kernel.
bool packed_gemv_available();

class PackedGemv {
 public:
  // Columns per block: 8 AVX-512 registers of accumulators.
  static constexpr int64_t kBlock = 128;

  // W [n, k] with row stride ldw. Empty when !packed_gemv_available() or
  // allocation fails (callers then take their unpacked path).
  static PackedGemv pack(const float* w, int64_t n, int64_t k, int64_t ldw);
  // As pack(), whatever the CPU: for tests of the layout and the portable loop.
  static PackedGemv pack_always(const float* w, int64_t n, int64_t k, int64_t ldw);

  bool packed() const { return static_cast<bool>(data_); }
  int64_t rows() const { return n_; }
  int64_t cols() const { return k_; }

  // y = x · Wᵀ; y may not alias x. Requires packed().
  void run(const float* x, float* y) const;
  // The same for `rows` rows of x (row stride ldx) into rows of y (stride
  // ldy), three at a time: each block of W is read once per three rows.
  void run_rows(const float* x, int64_t ldx, int64_t rows, float* y, int64_t ldy) const;
  // The same product by a plain loop over the packed layout (any CPU).
  void run_portable(const float* x, float* y) const;

 private:
  AlignedBuffer data_;  // per block of up to kBlock columns: [k][width], width a multiple of 16
  int64_t n_ = 0;
  int64_t k_ = 0;
};

}  // namespace etc
