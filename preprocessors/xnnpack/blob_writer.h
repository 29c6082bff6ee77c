#pragma once
// BlobWriter: collects the tensors, constant data and nodes of one XNNPACK
// partition and serializes them as the blob runtime/backends/xnnpack reads
// (xnnpack_blob.fbs): a size-prefixed flatbuffer, zero padding to 64 bytes,
// then the constants, each 64-byte aligned, those packed for the native
// kernel or transformed for Winograd (native_weights.h) last.

#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "compiler/ir/graph.h"
#include "runtime/backends/xnnpack/xnnpack_blob.h"

namespace etc::xnnpack {

struct TensorRecord {
  std::vector<uint64_t> dims;
  bool constant = false;
  uint64_t constant_size = 0;
  uint64_t constant_offset = 0;
  int32_t external_input = -1;
  int32_t external_output = -1;
  fb::BoundaryLayout layout = fb::BoundaryLayout::Same;
  bool nchw = false;  // a 4-D activation held in ONNX order
  fb::WeightPacking packing = fb::WeightPacking::Plain;
};

// One xnn_define_* call; field meanings as in xnnpack_blob.fbs.
struct NodeRecord {
  fb::NodeType type{};
  std::vector<uint32_t> inputs, outputs;
  std::vector<uint32_t> padding, kernel, stride, dilation, adjustment;  // see the schema for orders
  uint32_t groups = 1;
  uint64_t group_input_channels = 0, group_output_channels = 0;
  uint32_t depth_multiplier = 1;
  uint64_t input_channels = 0;
  float output_min = -INFINITY, output_max = INFINITY;
  float alpha = 0.0f;
  std::vector<uint64_t> new_shape, pre_paddings, post_paddings;
  float padding_value = 0.0f;
  uint32_t block_size = 0;
  uint32_t flags = 0;
  uint32_t axis = 0;
  std::vector<uint64_t> offsets;
  std::vector<uint32_t> perm, axes;
  std::vector<uint64_t> strides, mnk, batch, indices;
  float epsilon = 0.0f;
  fb::ReduceOp reduce_op = fb::ReduceOp::Mean;
  fb::UnaryOp unary_op = fb::UnaryOp::Tanh;
  // How parameters follow the input when the delegate resizes.
  int32_t infer_dim = -1;
  std::vector<uint32_t> to_end;
  std::vector<float> scales;
  uint8_t coord_mode = 0, nearest_mode = 0;
  std::vector<int8_t> stride_axes;
  // A WinogradPanels constant: the filter transformed ahead of time.
  int32_t winograd_filter = -1;
  // The edge nodes this XNNPACK node computes (for the debug handle map).
  std::vector<const ir::Node*> covers;
};

// Writes a constant's floats (its count of them) at `out`.
using ConstantFill = std::function<void(float* out)>;

class BlobWriter {
 public:
  uint32_t add_tensor(TensorRecord tensor);
  // A constant tensor holding `data` (float32, numel(dims) values), kept
  // as given until finish() moves it into the blob (freeing it as it goes;
  // the writer holds no constant data afterwards).
  uint32_t add_constant(std::vector<uint64_t> dims, std::vector<float> data);
  // A constant of `count` floats that `fill` writes when finish() lays out
  // the blob, straight into it: a model's filters, relaid out or packed
  // from the graph's constants, take no memory of their own in between.
  // What `fill` reads must outlive finish().
  uint32_t add_constant(std::vector<uint64_t> dims, size_t count, ConstantFill fill);
  // The floats of constant tensor `id` (computed anew for a deferred one),
  // and how they are written: to build a repacked constant from them.
  std::vector<float> constant_data(uint32_t id) const;
  const ConstantFill& constant_fill(uint32_t id) const;
  size_t constant_count(uint32_t id) const;
  // Constant `id` in another layout: `count` floats that `fill` writes.
  void repack_constant(uint32_t id, size_t count, ConstantFill fill, fb::WeightPacking packing);
  // A constant derived from another, with its dims (`dims`) and in another
  // layout (`packing`): `count` floats that `fill` writes.
  uint32_t add_packed_constant(std::vector<uint64_t> dims, size_t count, ConstantFill fill,
                               fb::WeightPacking packing);
  TensorRecord& tensor(uint32_t id) { return tensors_[id]; }
  const TensorRecord& tensor(uint32_t id) const { return tensors_[id]; }
  size_t num_tensors() const { return tensors_.size(); }
  std::vector<NodeRecord>& nodes() { return nodes_; }
  const std::vector<NodeRecord>& nodes() const { return nodes_; }

  // `debug_ids[i]`: debug_id of node i.
  std::vector<uint8_t> finish(uint32_t num_inputs, uint32_t num_outputs,
                              const std::vector<uint32_t>& debug_ids);

 private:
  std::vector<TensorRecord> tensors_;
  std::vector<NodeRecord> nodes_;
  // Constants in tensor order; offsets are given out by finish().
  struct Constant {
    uint32_t tensor;
    size_t count;
    ConstantFill fill;
  };
  std::vector<Constant> constants_;
  std::vector<size_t> constant_of_;  // per tensor: index into constants_, or SIZE_MAX
};

}  // namespace etc::xnnpack
