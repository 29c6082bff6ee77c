#pragma once
// The state shared by the XNNPACK node emitters while preprocess walks one
// partition: which blob tensor holds each edge value, in which layout.
//
// Layout rule: every 4-D activation inside the partition is NHWC. External
// 4-D inputs are marked NchwToNhwc and external 4-D outputs NhwcToNchw, so
// the runtime converts at the boundary only. Constants are written in the
// layout of the node that reads them (see the emitters), at most once per
// (value, layout).

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "compiler/ir/graph.h"
#include "preprocessors/xnnpack/blob_writer.h"

namespace etc::xnnpack {

// NCHW dims → NHWC dims for rank 4; other ranks unchanged.
std::vector<uint64_t> xnn_dims(const Shape& shape);
// Float data of an NCHW tensor, reordered to NHWC (rank 4 only).
std::vector<float> nchw_to_nhwc(const std::vector<float>& data, const Shape& shape);

class Lowering {
 public:
  Lowering(const ir::ExportedProgram& partition, BlobWriter& blob);

  const ir::Graph& graph() const { return g_; }
  BlobWriter& blob() { return blob_; }

  // The tensor of an activation (or of a constant read as an activation:
  // NHWC when 4-D). Intermediates are created on first use.
  uint32_t value(ir::ValueId v);
  // A constant in a layout that only the caller knows, built once per key.
  template <typename Make>
  uint32_t constant(ir::ValueId v, int kind, Make make) {
    const auto key = std::make_pair(v, kind);
    auto it = constants_.find(key);
    if (it != constants_.end()) return it->second;
    const uint32_t id = make();
    constants_.emplace(key, id);
    return id;
  }
  std::vector<float> floats(ir::ValueId v) const;  // a float32 constant's values

  // Appends an XNNPACK node that computes (part of) `edge`, whose debug
  // handles it takes. The reference is valid until the next add_node.
  NodeRecord& add_node(fb::NodeType type, const ir::Node& edge);

 private:
  // Creates the tensor of partition input / output `index`, NCHW outside and
  // NHWC inside when 4-D.
  void add_boundary(const ir::Value& v, bool is_input, int32_t index);

  const ir::Graph& g_;
  BlobWriter& blob_;
  std::vector<int64_t> tensor_of_;  // value id → tensor id, -1 when none yet
  std::map<std::pair<ir::ValueId, int>, uint32_t> constants_;
};

// Constant kinds for Lowering::constant (one per layout transform).
enum ConstantKind : int {
  kAsActivation = 0,
  kConvFilter,
  kDepthwiseFilter,
  kDeconvFilter,
  kBias,
  kBroadcastNhwc,
  kPreluSlope,
};

// Emitters, one per node family. Each appends the XNNPACK node(s) for `n`.
void emit_conv(Lowering& l, const ir::Node& n);
void emit_conv_transpose(Lowering& l, const ir::Node& n);
void emit_linear(Lowering& l, const ir::Node& n);
void emit_pool(Lowering& l, const ir::Node& n);
void emit_binary(Lowering& l, const ir::Node& n);
void emit_unary(Lowering& l, const ir::Node& n);
void emit_softmax(Lowering& l, const ir::Node& n);
void emit_prelu(Lowering& l, const ir::Node& n);
void emit_shape(Lowering& l, const ir::Node& n);  // reshape, pad, resize, depth_to_space
// concat, slice, split, channel shuffle (native nodes)
void emit_movement(Lowering& l, const ir::Node& n);

// Clamp attributes of a fused activation (clamp_min / clamp_max).
void set_output_range(NodeRecord& r, const ir::Node& n);

// Merges each clamp into the node producing its input when that node takes
// an output range and nothing else reads the intermediate.
void fold_clamps(BlobWriter& blob);

}  // namespace etc::xnnpack
