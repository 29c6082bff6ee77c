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
// The layout is the same on every CPU, so the compiler can pack ahead of
// time (pack_into) and the kernel read the program's bytes in place (view).

#include <cstdint>

#include "runtime/core/aligned_buffer.h"

namespace etc {

class TaskPool;

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
  // Floats of the packed form of an [n, k] matrix (n rounded up to 16, times k).
  static int64_t packed_floats(int64_t n, int64_t k);
  // Writes the packed form of W [n, k] (row stride ldw) to out
  // (packed_floats(n, k) floats, any alignment): what pack() holds.
  static void pack_into(const float* w, int64_t n, int64_t k, int64_t ldw, float* out);
  // The packed form at `data` (packed_floats(n, k) floats, as pack_into
  // wrote them), used in place: not copied, not owned; it must outlive the
  // view. Empty when data is not 64-byte aligned (the kernel's loads are) or
  // n or k is not positive.
  static PackedGemv view(const float* data, int64_t n, int64_t k);

  bool packed() const { return p_ != nullptr; }
  int64_t rows() const { return n_; }
  int64_t cols() const { return k_; }

  // y = x · Wᵀ; y may not alias x. Requires packed().
  void run(const float* x, float* y) const;
  // The same for `rows` rows of x (row stride ldx) into rows of y (stride
  // ldy): block by block of W, each through all the rows six at a time,
  // so that a block comes from memory once and from cache for the rest.
  void run_rows(const float* x, int64_t ldx, int64_t rows, float* y, int64_t ldy) const;
  // run_rows split over the pool's threads by column blocks, each thread
  // a contiguous range of them (the same one every call, so its part of W
  // stays in its core's cache where it fits), when the product is large
  // enough to gain (kThreadedWork); on the calling thread otherwise or
  // with a null pool.
  // With `backward`, each thread takes its blocks last to first: a product
  // repeated on a W larger than the cache, in alternate directions, finds
  // the blocks it read last still there (a recurrent step through a 4 MB R
  // on one Sapphire Rapids core, 4 MB of L2: a third faster).
  void run_rows_on(TaskPool* pool, const float* x, int64_t ldx, int64_t rows, float* y, int64_t ldy,
                   bool backward = false) const;
  // Below this many multiply-adds (rows x W's size) a product runs on one
  // thread: a loop's hand-off costs microseconds. One row through 2^17
  // weights (512 KB) gains on two threads; through 2^16 (an LSTM of hidden
  // 128) it loses 25% (2-vCPU Sapphire Rapids VM); an input projection of
  // 64 rows gains through far less.
  static constexpr int64_t kThreadedWork = int64_t{1} << 17;
  // The same product by a plain loop over the packed layout (any CPU).
  void run_portable(const float* x, float* y) const;

 private:
  int64_t blocks() const { return (n_ + kBlock - 1) / kBlock; }
  // run_rows over column blocks [first, end) only; run_portable likewise.
  void run_blocks(const float* x, int64_t ldx, int64_t rows, float* y, int64_t ldy, int64_t first,
                  int64_t end, bool backward = false) const;
  void portable_blocks(const float* x, float* y, int64_t first, int64_t end) const;

  AlignedBuffer data_;        // owned packed form (pack); empty for a view
  const float* p_ = nullptr;  // per block of up to kBlock columns: [k][width], width a multiple of 16
  int64_t n_ = 0;
  int64_t k_ = 0;
};

}  // namespace etc
