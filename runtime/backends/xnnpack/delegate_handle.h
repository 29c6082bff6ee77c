#pragma once
// What one initialised XNNPACK delegate holds (the backend's DelegateHandle):
// its stages (stages.h) ready to run, the memory of its shared tensors and
// how each delegate argument reaches XNNPACK. Built by instance.h
// at init, run by run_stages.h at execute.

#include <xnnpack.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <variant>
#include <vector>

#include "runtime/backends/xnnpack/blob_reader.h"
#include "runtime/backends/xnnpack/native_ops.h"
#include "runtime/backends/xnnpack/packing_pool.h"
#include "runtime/backends/xnnpack/threadpool.h"
#include "runtime/core/aligned_buffer.h"
#include "runtime/devtools/event_tracer.h"

namespace etc::xnnpack {

inline constexpr size_t kBlobAlignment = AlignedBuffer::kAlignment;

// Floats with the XNN_EXTRA_BYTES XNNPACK may read past the end; empty when
// out of memory.
inline AlignedBuffer allocate_floats(size_t count) {
  return AlignedBuffer::allocate(count * sizeof(float), XNN_EXTRA_BYTES);
}

// One delegate argument and how it reaches XNNPACK.
struct Argument {
  uint32_t tensor_id = 0;
  bool is_input = true;
  size_t index = 0;  // among inputs or among outputs
  TensorInfo tensor;
  // Layout conversion through `staging`; Same binds the argument directly.
  fb::BoundaryLayout layout = fb::BoundaryLayout::Same;
  size_t n = 0, c = 0, hw = 0;
  float* staging = nullptr;
};

// A node output logged as an intermediate output (DelegateDetail::kNodeOutputs).
struct LoggedOutput {
  uint32_t tensor = 0;
  size_t rank = 0;
  size_t dims[kMaxTensorRank] = {};  // the blob's
  bool nhwc = false;                 // turned to NCHW before it is logged
};

// A run of XNNPACK nodes as one XNNPACK runtime.
struct XnnpackStage {
  struct RuntimeDeleter {
    void operator()(xnn_runtime_t r) const { xnn_delete_runtime(r); }
  };
  std::unique_ptr<xnn_runtime, RuntimeDeleter> runtime;
  std::vector<uint32_t> externals;        // tensor id of each external value id
  std::vector<xnn_external_value> bound;  // what xnn_setup_runtime last saw
  bool set_up = false;
};

// What runs one stage (stages.h): an XNNPACK runtime or a native node.
using StageWork = std::variant<XnnpackStage, NativeOp>;

// One stage, and what developer tools see of it.
struct StageRun {
  StageWork work;
  // The key of the delegate's debug handle map this stage's time belongs to:
  // the debug id all its nodes share; unset when they have none or differ
  // (a fused run of nodes), and then the stage reports no event.
  int64_t debug_id = kUnsetDelegateDebugIntId;
  std::vector<uint8_t> metadata;      // profiling_metadata.h
  std::vector<LoggedOutput> outputs;  // empty unless outputs are logged
  bool serial = false;                // Stage::serial: runs without the pool
};

struct XnnpackHandle {
  // What XNNPACK allocated while creating the runtimes (packing_pool.h):
  // first, so that it goes last, after every runtime made from it.
  std::unique_ptr<PackingPool> packing;
  SharedThreadpool pool;
  std::vector<StageRun> runs;  // one per stage
  std::vector<float*> data;    // per tensor: where a shared tensor lives
  std::vector<Argument> args;
  std::vector<AlignedBuffer> owned;  // staging and shared buffers, run-time constants
  // Bytes the activations and scratch take: the arena between stages, the
  // arguments' staging buffers, the native stages' shared and own scratch
  // and the buffer of logged outputs (not XNNPACK's runtimes' own
  // workspace).
  size_t activation_bytes = 0;
  // Weights packed ahead of time that native convolutions read in place
  // from the blob, which must then outlive the instance: [begin, end).
  std::vector<std::pair<const uint8_t*, const uint8_t*>> blob_reads;
  // Where a rank-4 output is turned into the program's NCHW before it is
  // logged; null unless outputs are logged.
  float* log_buffer = nullptr;

  XnnpackHandle() = default;
  XnnpackHandle(const XnnpackHandle&) = delete;
  XnnpackHandle& operator=(const XnnpackHandle&) = delete;
  // The runtimes go first: they may read the owned constants until deleted.
  ~XnnpackHandle() { runs.clear(); }
};

}  // namespace etc::xnnpack
