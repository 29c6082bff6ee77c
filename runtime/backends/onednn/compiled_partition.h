#pragma once
// A oneDNN partition ready to run: its primitives, created at init for this
// CPU from a verified blob (blob_reader.h), with the memory they use.
//
// Layouts: each primitive picks the layouts it runs fastest in (blocked,
// e.g. nChw16c, or NHWC), and a tensor is converted (a reorder) only where
// a reader needs another layout than its writer chose: at the partition's
// edges, where ONNX's row-major order meets the primitives', and between
// primitives that disagree. Weights are reordered once, here.
//
// Memory: activations live in one arena whose offsets are planned here from
// each buffer's first and last use; a convolution whose sum post-op reads a
// residual that nothing reads later writes over that residual in place. The
// delegate's arguments are bound (not copied) where the edge layout is
// row-major. Each primitive's scratchpad is a buffer of the arena too, live
// for its step alone: it takes room that activations leave free then.
//
// Errors: init failures name the blob node and oneDNN's reason.

#include <dnnl.hpp>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/backend/context.h"
#include "runtime/backends/onednn/blob_reader.h"
#include "runtime/backends/onednn/winograd_rule.h"
#include "runtime/core/aligned_buffer.h"
#include "runtime/core/evalue.h"
#include "runtime/core/result.h"
#include "runtime/core/span.h"

namespace etc::onednn {

struct CompileOptions {
  WinogradMode winograd = WinogradMode::kAuto;
  int num_threads = 1;
  // Each node's output is also reordered to row-major after it runs, to be
  // logged as an intermediate output (DelegateDetail::kNodeOutputs).
  bool log_outputs = false;
};

// A constant the primitives read in another layout than the blob's: what
// prepacking (prepack.h) writes into the blob in its place.
struct PackedConstant {
  uint32_t tensor = 0;
  dnnl::memory::desc desc;
  const void* data = nullptr;  // owned by the partition
};

struct Step {
  dnnl::primitive primitive;
  std::unordered_map<int, dnnl::memory> args;
};

// One blob node's work: the reorders it needs, its primitive, and the
// reorder of its output to the delegate's argument; one profiling event.
struct StepGroup {
  std::vector<Step> steps;
  uint32_t debug_id = kNoDebugId;
  std::string metadata;  // "impl=...;reorders=N"
  int threads = 0;       // a primitive made for prepacked weights' thread count (0: the partition's)
  // With CompileOptions::log_outputs: the last step wrote the node's output
  // row-major into the partition's log buffer, with this shape.
  bool logs_output = false;
  Shape output_shape;
};

struct CompiledPartition {
  dnnl::engine engine;
  dnnl::stream stream;
  std::vector<StepGroup> groups;
  // Memories whose data is a delegate argument's (index: inputs, then
  // outputs), rebound at every execute.
  std::vector<std::pair<dnnl::memory, size_t>> bindings;
  std::vector<int64_t> arg_numel;    // expected elements of each argument
  AlignedBuffer arena;               // activations and scratchpads
  std::vector<AlignedBuffer> owned;  // reordered weights, copied constants
  int num_threads = 1;
  // Memories read blob bytes in place (prepacked weights, and then every
  // constant whose layout matches): the blob must outlive the partition.
  bool reads_blob = false;
  AlignedBuffer log_buffer;  // CompileOptions::log_outputs
  AlignedBuffer blob_copy;   // the blob, when it had to be copied to be aligned
  std::vector<PackedConstant> packed;
};

// This machine's cores: the most threads a partition uses.
int machine_threads();

// Errors: InvalidProgram when oneDNN refuses a node (naming it);
// DelegateMemoryAllocationFailed.
Result<std::unique_ptr<CompiledPartition>> compile_partition(const BlobView& view,
                                                             const CompileOptions& options);

// Binds the arguments (float32, numel as the blob declares) and runs every
// step. Profiling events carry each group's debug id and metadata.
Status run_partition(CompiledPartition& partition, BackendExecutionContext& context, Span<EValue*> args);

}  // namespace etc::onednn
