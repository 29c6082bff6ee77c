#pragma once
// build_partition: creates one blob's primitives in node order and plans
// what compile_partition (compiled_partition.h) then allocates and binds:
// buffers with their lives in steps, memories (a layout over a buffer) and
// steps (a primitive and its arguments, by memory index).
//
// Per node:
//   1. create the primitive descriptor, letting it choose its layouts
//      (format "any") except where its input's layout can be kept;
//   2. convert each input into the layout the primitive chose (a reorder
//      step, shared by later readers of the same tensor in that layout);
//   3. place the output: a delegate argument when the layout is row-major,
//      the residual's buffer for a sum post-op whose residual dies here, its
//      slice of a channel concatenation that reads it (below), else a new
//      buffer; then a reorder to the argument when it is not.
// A channel concatenation of one image whose inputs' producers write their
// slices of its output in place needs no step of its own: where a layout
// keeps each input's channels contiguous (row-major, or channel blocks of
// 8 or 16 with every slice starting on a block), the first producer
// chooses it, later producers are asked for it, and an input that cannot
// be written in place is copied into its slice.
// Constants are converted at once (weights into the primitive's layout),
// into owned buffers. Throws dnnl::error where oneDNN refuses.

#include <dnnl.hpp>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/backends/onednn/compiled_partition.h"

namespace etc::onednn {

struct BufferPlan {
  size_t bytes = 0;
  int first = INT32_MAX, last = -1;  // steps writing first and reading last
  size_t offset = 0;                 // into the arena
  int64_t arg = -1;                  // a delegate argument's data
  void* fixed = nullptr;             // owned data (constants)
};

struct MemoryPlan {
  dnnl::memory::desc desc;
  int buffer = -1;
  size_t offset = 0;  // bytes into the buffer (a slice of a concatenation)
};

struct PlannedStep {
  // Made by create_primitives (compiled_partition.cpp), several at a time:
  // `make` on `threads` OpenMP threads (a primitive splits its work when
  // made); `node` names the blob node should oneDNN refuse.
  std::function<dnnl::primitive()> make;
  int threads = 1;
  uint32_t node = 0;
  dnnl::primitive primitive;
  std::vector<std::pair<int, int>> args;  // DNNL_ARG_* -> memory index
  dnnl::memory::desc scratchpad;
  int scratch_buffer = -1;  // the scratchpad's buffer, live for this step alone (none: -1)
};

struct PlannedGroup {
  std::vector<PlannedStep> steps;
  uint32_t debug_id = kNoDebugId;
  std::string metadata;
  std::string metadata_suffix;  // ";threads=N" for a primitive made at another thread count
  int threads = 0;              // that count (0: the partition's): it runs on as many
  bool logs_output = false;
  Shape output_shape;
};

struct PartitionPlan {
  std::vector<BufferPlan> buffers;
  std::vector<MemoryPlan> memories;
  std::vector<PlannedGroup> groups;
};

Status build_partition(const BlobView& view, const CompileOptions& options, CompiledPartition& out,
                       PartitionPlan& plan);

}  // namespace etc::onednn
