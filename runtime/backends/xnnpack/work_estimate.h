#pragma once
// How much arithmetic one run of a delegate does, estimated from its blob,
// and how many threads that work is worth. A second thread costs its start
// before the first output (on a VM, also the wake of an idle virtual CPU:
// README, "Tests and benchmarks") and a synchronisation at every parallel
// stage after it; a delegate whose whole run is some tens of microseconds
// of one core's work gains less from splitting than that. Such a delegate
// runs on the calling thread, whatever thread count was asked for, and no
// pool of more threads is created for it (RuntimeOptions::fit_threads_to_work).
// The estimate re-derives from the blob alone what the compiler counts for
// a partition (`etc partition`).

#include <cstdint>

#include "runtime/backends/xnnpack/blob_reader.h"

namespace etc::xnnpack {

// Below this many floating-point operations a run, a delegate runs on one
// thread: some tens of microseconds of one core on the small,
// cache-resident operations such delegates hold.
inline constexpr uint64_t kFlopsWorthASecondThread = 2'000'000;

// Floating-point operations of one run of `view` at its compiled sizes:
// 2 per multiply-add of the convolutions, fully connected nodes and matrix
// products (a deconvolution's taps that land on each output counted once),
// one per output element of every other node. A verified blob
// (read_xnnpack_blob) is required.
uint64_t estimated_flops(const BlobView& view);

// The thread count to run a delegate of `flops` operations a run on when
// `requested` were asked for (0: one per core): 1 when `requested` is 0 or
// more than 1 and `flops` is below kFlopsWorthASecondThread, else
// `requested` (a negative count is left for the pool to refuse).
int threads_worth_using(uint64_t flops, int requested);

}  // namespace etc::xnnpack
