#pragma once
// How one XNNPACK delegate runs: its nodes (in blob order) split into stages,
// each either a maximal run of XNNPACK nodes — one xnn_runtime — or one
// native node (native_ops.h, native_conv.h). Every activation (every tensor
// that is not a constant) is "shared": XNNPACK sees it as an external value,
// bound to memory the backend owns or to a delegate argument. Intermediates
// get buffers planned node by node over the whole delegate, reused once their
// last reader has run, so splitting into stages costs no extra memory.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "runtime/backend/options.h"
#include "runtime/backends/xnnpack/blob_reader.h"

namespace etc::xnnpack {

struct Stage {
  bool native = false;
  size_t first_node = 0, end_node = 0;  // nodes [first_node, end_node)
  // Too little work to share between threads: run on the calling thread
  // alone, so no other core is woken and waited for (is_small_node).
  bool serial = false;
};

// Whether a node runs better on one thread: its work (an estimate in
// nanoseconds on one core) is below what waking and joining another thread
// costs, or it only moves or lightly combines data (bound by memory, which
// a second core does not make faster: on a Zen 5 VM XNNPACK's broadcasting
// multiply and global average pooling took twice as long on two threads).
bool is_small_node(const BlobView& view, const fb::Node& node);

// offset_of of a tensor the delegate's activation arena does not hold.
inline constexpr int64_t kNoOffset = -1;

// What a native convolution applies to each clamped result before storing.
enum class ConvActivation : uint8_t { kNone, kSwish, kHardSwish };

// Where a native convolution (or a native nearest resize, with an Add's
// other operand as its residual) writes instead of its own output: channels
// [channel_offset, +its channels) of every pixel of `tensor`, whose pixels
// are `pixel_stride` floats apart (its slice of a channel concatenation, or
// the output of a swish, hardswish or residual Add it computes in its
// epilogue). Native depthwise convolutions (native_depthwise.h) take the same.
struct ConvOutput {
  bool active = false;
  uint32_t tensor = 0;
  size_t channel_offset = 0, pixel_stride = 0;
  ConvActivation activation = ConvActivation::kNone;
  // A residual Add folded in: its other operand, added after the
  // convolution's clamp, and the Add's clamp; -1 when none.
  int64_t residual = -1;
  float residual_lo = 0, residual_hi = 0;
  // A multiplication by and an addition of scalars that followed (a
  // learnable affine block), applied last: y * scale + shift.
  bool affine = false;
  float scale = 1, shift = 0;
};

// Where a native convolution (native_conv.h, native_depthwise.h) stores its
// results and what it does to them first: the ConvOutput a plan gives it,
// applied at init (apply_conv_output).
struct NativeEpilogue {
  // Output pixel p, channel o goes to data[output] + p * out_stride +
  // out_offset + o (out_stride = the channels, out_offset = 0 unless the
  // output is a slice of a channel concatenation).
  uint32_t output = 0;
  size_t out_stride = 0, out_offset = 0;
  ConvActivation activation = ConvActivation::kNone;  // applied to the clamped sum
  // Add tensor `residual` (the sums' layout) after the clamp, then clamp to
  // [residual_lo, residual_hi].
  bool has_residual = false;
  uint32_t residual = 0;
  float residual_lo = -INFINITY, residual_hi = INFINITY;
  // Then, with `affine`, y * scale + shift.
  bool affine = false;
  float scale = 1, shift = 0;
};

// Makes the convolution write where `out` says (when active), add its
// residual (when given) and apply its affine (when given).
void apply_conv_output(const ConvOutput& out, NativeEpilogue& e);

struct StagePlan {
  std::vector<Stage> stages;
  std::vector<bool> shared;  // per tensor: an activation (not a constant)
  // Per tensor: where an intermediate (an activation that is not a delegate
  // argument, and is written) lives in the delegate's activation arena, in
  // floats from its start, 64-byte aligned; kNoOffset otherwise. Tensors
  // live at once never overlap.
  std::vector<int64_t> offset_of;
  size_t arena_elements = 0;  // float32 elements of the arena
  // Per node: for a native convolution, where it writes instead of its own
  // output; for a Concatenate, which inputs are then already in place.
  std::vector<ConvOutput> writes_into;
  std::vector<std::vector<bool>> in_place;
  // Per node: folded into another node (a sigmoid or multiply of a swish, a
  // residual Add), so in no stage.
  std::vector<bool> elided;
  // Per node: the node whose stage computes it when it is folded (elided, or
  // a sigmoid of a native swish), -1 otherwise.
  std::vector<int64_t> folded_into;
  // Per node: for a Multiply that runs as a native swish, out = x *
  // sigmoid(x), the tensor x; -1 otherwise.
  std::vector<int64_t> swish_input;
  // Per node: for a native convolution, the ChannelScale node (x * s per
  // channel, a squeeze-and-excitation gate) folded into it — it reads x and
  // scales its weights by s on each run — and -1 otherwise.
  std::vector<int64_t> input_scale;
  // Per node: for a native pointwise convolution, the depthwise convolution
  // that alone reads its output and runs in its stage, on the rows as the
  // convolution computes them (native_expand.h; the depthwise node is
  // elided), -1 otherwise.
  std::vector<int64_t> expands_into;
  // Per tensor: a delegate output its producer, a native bilinear resize,
  // writes in NCHW straight into the argument (ResizeBilinearNchwOp): the
  // argument has no staging buffer and no transpose.
  std::vector<bool> nchw_output;
  // Per tensor: a delegate input whose only reader, a native convolution
  // with padded rows (the stem of an image model: 3 channels), reads the
  // argument's NCHW layout itself (read_input_as_nchw): the argument has no
  // staging buffer and no transpose.
  std::vector<bool> nchw_input;
};

// `view` must have passed read_xnnpack_blob. Stages are serial or parallel
// as their nodes are small or not; consecutive XNNPACK nodes share a stage
// only when of one kind. Convolutions the backend's
// kernel takes (native_conv.h) are native stages too: none (kOff), those
// runs_natively picks (kAuto) or every one can_run_natively allows (kAll).
// `detail` (options.h): kFused merges runs of XNNPACK nodes into one stage;
// kPerNode makes every node its own stage; kNodeOutputs also folds nothing
// (no swish, residual or in-place concatenation), so every node's output
// exists on its own.
// Which convolutions a delegate runs on the kernel (compile spec
// "native_convolution": "auto", "on", "off").
enum class NativeConvolutions { kOff, kAuto, kAll };

StagePlan plan_stages(const BlobView& view, NativeConvolutions convolutions,
                      DelegateDetail detail = DelegateDetail::kFused);

}  // namespace etc::xnnpack
