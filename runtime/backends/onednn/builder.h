#pragma once
// The Builder behind build_partition (partition_builder.h), internal to this
// backend and split over two files:
//   partition_builder.cpp  the plan: buffers and their lives, memories
//                          (a layout over a buffer), steps, the reorders
//                          between layouts, constants (reordered, or read
//                          in place when prepacked), node outputs
//   node_primitives.cpp    one primitive per blob node kind, made through
//                          the plan's operations
// Throws dnnl::error where oneDNN refuses a node, std::runtime_error where
// prepacked weights do not fit; build() turns both into an Error naming the
// node.

#include <omp.h>

#include <dnnl.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "runtime/backends/onednn/partition_builder.h"
#include "runtime/backends/onednn/winograd_rule.h"

namespace etc::onednn {

using md = dnnl::memory::desc;

dnnl::memory::dims to_dims(const std::vector<int64_t>& dims);
std::vector<int64_t> vec(const flatbuffers::Vector<int64_t>* v);
md plain(const std::vector<int64_t>& dims);  // row-major, up to 6-D
md any(const std::vector<int64_t>& dims);    // the primitive chooses
bool is_plain(const md& desc);
// Whether `desc` is one of the layouts in which a channel slice of one
// image is contiguous (row-major, channel blocks of 16 or 8; 3-D and 4-D),
// and which.
bool slice_tag(const md& desc, dnnl::memory::format_tag& out);
// The oneDNN algorithm of a blob algorithm (undef for None).
dnnl::algorithm to_dnnl(fb::Algorithm a);

// OpenMP's thread count for the calling thread while alive, then `restore`.
class ThreadCount {
 public:
  ThreadCount(int threads, int restore) : restore_(restore) { omp_set_num_threads(threads); }
  ~ThreadCount() { omp_set_num_threads(restore_); }
  ThreadCount(const ThreadCount&) = delete;
  ThreadCount& operator=(const ThreadCount&) = delete;

 private:
  int restore_;
};

// Memories are named by their index in PartitionPlan::memories; arguments
// of a step pair a DNNL_ARG_* with a memory.
using StepArgs = std::vector<std::pair<int, int>>;

class Builder {
 public:
  Builder(const BlobView& view, const CompileOptions& options, CompiledPartition& out, PartitionPlan& plan);
  Status build();

 private:
  // --- The plan (partition_builder.cpp). ---
  int new_buffer(size_t bytes, int64_t arg = -1, void* fixed = nullptr);
  int new_memory(const md& desc, int buffer, size_t offset = 0);
  size_t offset_of(int memory) const { return plan_.memories[static_cast<size_t>(memory)].offset; }
  const md& desc_of(int memory) const { return plan_.memories[static_cast<size_t>(memory)].desc; }
  int buffer_index(int memory) const { return plan_.memories[static_cast<size_t>(memory)].buffer; }
  BufferPlan& buffer_of(int memory) { return plan_.buffers[static_cast<size_t>(buffer_index(memory))]; }
  const TensorInfo& tensor(uint32_t t) const { return view_.tensors[t]; }
  // The argument index of delegate output t, -1 when t is not one.
  int64_t output_arg(uint32_t t) const;

  // A step whose primitive `make` creates later, on `threads` threads (0:
  // the partition's).
  void add_step(std::function<dnnl::primitive()> make, const dnnl::primitive_desc_base& pd, StepArgs args,
                int threads = 0);
  // Attributes of every primitive: a user scratchpad, `post` post-ops.
  static dnnl::primitive_attr attr(const dnnl::post_ops& post = dnnl::post_ops());
  void reorder(int from, int to);
  // Tensor t in layout `want`: its memory, or a converted copy made by a
  // reorder step (kept for later readers wanting the same layout).
  int input(uint32_t t, const md& want);
  // A constant in layout `want`: the blob's bytes in place where they are
  // in that layout and the blob stays (it has prepacked weights), else
  // converted now into an owned buffer. `source` describes row-major blob
  // bytes (maybe with other dims, e.g. grouped weights).
  int constant(uint32_t t, const md& source, const md& want);
  // Whether prepacked tensor t holds exactly layout `want`.
  bool packed_matches(const TensorInfo& info, const md& want) const;
  int in_place(uint32_t t, const md& want, void* blob);
  int held(uint32_t t);  // t's memory in its writer's layout (a constant: row-major)
  md held_desc(uint32_t t) { return desc_of(held(t)); }
  // The memory a node writes tensor t to, in layout `desc`: the delegate's
  // argument where it is row-major, else a new buffer.
  int place_output(uint32_t t, const md& desc);
  // --- Concatenations written in place (partition_builder.h). ---
  // Finds the channel concatenations of one image and each input's slice.
  void plan_concat_slices();
  // The layout to ask a primitive writing tensor t for: its slice's, once
  // the concatenation's layout is chosen, else any.
  md output_desc(uint32_t t) const;
  // Tensor t's slice of its concatenation's output in layout `desc`,
  // choosing that layout if it is the first; -1 where it cannot be.
  int place_in_concat(uint32_t t, const md& desc);
  // Bytes from the start of a concatenation's output (one image) to tensor
  // t's slice starting at `channel`.
  size_t slice_offset(uint32_t t, int64_t channel) const;
  // Whether t's producer wrote it in place as the slice of concatenation
  // output `y` starting at `channel`.
  bool written_in_place(uint32_t t, uint32_t y, int64_t channel) const;
  // place_output, or for a node with a sum post-op the residual's buffer
  // when nothing reads the residual later, else a copy of it.
  int place(const fb::Node& node, const md& desc);
  void log_output(uint32_t t);     // row-major into the log buffer, after the node
  void finish_output(uint32_t t);  // a delegate output reordered into its argument
  dnnl::post_ops post_ops(const fb::Node& node) const;
  void describe(const dnnl::primitive_desc_base& pd);

  // The primitive `make` creates, for weights prepacked with another thread
  // count made again at that count where the layout then matches (oneDNN
  // picks some layouts, Winograd's, by the threads at creation; the
  // primitive then runs on that many threads).
  template <typename Make>
  auto matching_packed(const Make& make, uint32_t weights) {
    auto pd = make();
    const TensorInfo& info = tensor(weights);
    const int packed = static_cast<int>(view_.packed_threads);
    if (info.packed_desc == nullptr || packed_matches(info, pd.weights_desc()) || packed == 0 ||
        packed == out_.num_threads)
      return pd;
    auto retry = [&] {
      const ThreadCount at_packing(packed, out_.num_threads);
      return make();
    }();
    if (!packed_matches(info, retry.weights_desc())) return pd;  // constant() names the mismatch
    group_->metadata_suffix = ";threads=" + std::to_string(packed);
    group_->threads = packed;
    return retry;
  }

  // The node's step: its primitive, to be made at the thread count its
  // descriptor was (a primitive sizes its work split when made), then the
  // reorder of output t to its delegate argument where needed.
  template <typename Primitive, typename PrimitiveDesc>
  void add_node_step(const PrimitiveDesc& pd, StepArgs args, uint32_t t) {
    describe(pd);
    add_step([pd]() -> dnnl::primitive { return Primitive(pd); }, pd, std::move(args), group_->threads);
    finish_output(t);
  }

  // A primitive reading tensor x in the layout it chose and writing y.
  template <typename Primitive, typename PrimitiveDesc>
  void source_to_output(const PrimitiveDesc& pd, uint32_t x, uint32_t y) {
    StepArgs args = {{DNNL_ARG_SRC, input(x, pd.src_desc())}, {DNNL_ARG_DST, place_output(y, pd.dst_desc())}};
    add_node_step<Primitive>(pd, std::move(args), y);
  }

  // --- One primitive per node kind (node_primitives.cpp). ---
  void build_node(const fb::Node& node);
  bool winograd_candidate(const fb::Node& node, const std::vector<int64_t>& weights) const;
  void convolution(const fb::Node& node);
  void pooling(const fb::Node& node);
  void binary(const fb::Node& node);
  void eltwise(const fb::Node& node);
  void concat(const fb::Node& node);
  void inner_product(const fb::Node& node);
  void softmax(const fb::Node& node);
  void reshape(const fb::Node& node);
  void batch_norm(const fb::Node& node);

  const BlobView& view_;
  const CompileOptions& options_;
  CompiledPartition& out_;
  PartitionPlan& plan_;
  std::vector<int> held_;                    // tensor -> memory in its writer's layout
  std::vector<std::vector<int>> converted_;  // tensor -> memories in other layouts
  std::set<int> shared_;                     // buffers holding several tensors (reshapes, concatenations)
  struct ConcatPlan {
    uint32_t output = 0;
    dnnl::memory::format_tag preferred;  // asked of its first producer (any: none)
    std::vector<int64_t> channels;       // of each input
  };
  struct ConcatSlice {
    int concat = 0;        // index into concats_
    int64_t channel = 0;   // the slice's first channel
    bool written = false;  // its producer wrote it in place
  };
  std::vector<ConcatPlan> concats_;
  std::vector<int> slice_of_;  // tensor -> index into slices_, -1: none
  std::vector<ConcatSlice> slices_;
  PlannedGroup* group_ = nullptr;
  uint32_t node_ = 0;
  int steps_ = 0;
  int reorders_ = 0;
};

}  // namespace etc::onednn
