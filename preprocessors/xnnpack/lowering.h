#pragma once
// The state shared by the XNNPACK node emitters while preprocess walks one
// partition: which blob tensor holds each edge value, in which layout.
//
// Layout rule: a 4-D activation is NHWC when spatial nodes touch its group
// of layout-agnostic nodes and NCHW otherwise (plan_nhwc, layout_plan.cpp).
// External NHWC inputs are marked NchwToNhwc and NHWC outputs NhwcToNchw, so
// the runtime converts at the boundary; a node that needs an operand in the
// other layout gets a native transpose (value_as / output_as). Constants are
// written in the layout of the node that reads them, at most once per
// (value, layout).

#include <cstdint>
#include <map>
#include <span>
#include <utility>
#include <vector>

#include "compiler/ir/graph.h"
#include "preprocessors/xnnpack/blob_writer.h"

namespace etc::xnnpack {

// The dims a tensor of ONNX shape `shape` has in the blob: NHWC order when
// `nhwc` (rank 4 only), else unchanged ([1] for a scalar).
std::vector<uint64_t> xnn_dims(const Shape& shape, bool nhwc);
// Float data of an NCHW tensor, reordered to NHWC (rank 4 only).
std::vector<float> nchw_to_nhwc(const std::vector<float>& data, const Shape& shape);
// Per value of `g`: a 4-D activation held NHWC (layout_plan.cpp).
std::vector<bool> plan_nhwc(const ir::Graph& g);
// Stored position of each ONNX axis of a rank-`rank` tensor ({0, 3, 1, 2}
// for NHWC, the identity otherwise).
std::vector<uint32_t> stored_axes(int rank, bool nhwc);

class Lowering {
 public:
  Lowering(const ir::ExportedProgram& partition, BlobWriter& blob);

  const ir::Graph& graph() const { return g_; }
  BlobWriter& blob() { return blob_; }

  // Whether value v is held NHWC (a 4-D activation of an NHWC group).
  bool nhwc(ir::ValueId v) const { return nhwc_[v]; }
  // v's dims in the blob.
  std::vector<uint64_t> dims(ir::ValueId v) const;

  // The tensor of an activation in its planned layout (or of a constant read
  // as an activation: NCHW). Intermediates are created on first use.
  uint32_t value(ir::ValueId v);
  // v as an input held in the given layout: converted once (a native
  // transpose) when planned otherwise; a constant is stored that way.
  uint32_t value_as(ir::ValueId v, bool nhwc);
  // Where a node that computes v in the given layout writes: v's tensor, or
  // a new one converted into v's tensor by the next flush().
  uint32_t output_as(ir::ValueId v, bool nhwc);
  // Appends the conversions output_as promised; called after each node.
  void flush();
  // Appends a native transpose of tensor `in` (blob dims `in_dims`) by
  // `perm` and returns its output tensor, standing for `edge`.
  uint32_t add_transpose(uint32_t in, const std::vector<uint64_t>& in_dims, const std::vector<uint32_t>& perm,
                         const ir::Node& edge);

  // Nodes another node computes as part of itself (a transpose folded into a
  // matrix product's strides): the main loop skips them.
  std::vector<bool>& folded() { return folded_; }
  // The bias add folded into matmul `n`'s fully connected node, or null.
  const ir::Node* bias_add(const ir::Node& n) const {
    auto it = bias_adds_.find(n.id);
    return it == bias_adds_.end() ? nullptr : it->second;
  }
  void set_bias_add(const ir::Node& n, const ir::Node& add) { bias_adds_[n.id] = &add; }
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
  // The same values read in place (valid while the partition lives): no
  // copy of a large filter only to relayout it.
  std::span<const float> float_view(ir::ValueId v) const;

  // Appends an XNNPACK node that computes (part of) `edge`, whose debug
  // handles it takes. The reference is valid until the next add_node.
  NodeRecord& add_node(fb::NodeType type, const ir::Node& edge);

 private:
  // Creates the tensor of partition input / output `index`, NCHW outside and
  // NHWC inside when 4-D.
  void add_boundary(const ir::Value& v, bool is_input, int32_t index);

  // Appends the conversion of tensor `from` (value v's data) into the other
  // layout: into tensor `into`, or a new one when -1. Returns the tensor.
  uint32_t convert(uint32_t from, ir::ValueId v, bool to_nhwc, const ir::Node& edge, int64_t into = -1);

  const ir::Graph& g_;
  BlobWriter& blob_;
  std::vector<bool> nhwc_;
  std::vector<int64_t> tensor_of_;  // value id → tensor id, -1 when none yet
  std::map<std::pair<ir::ValueId, int>, uint32_t> constants_;
  std::map<ir::ValueId, uint32_t> converted_;  // activations converted for a reader
  struct Pending {
    uint32_t from;
    ir::ValueId v;
    const ir::Node* edge;
  };
  std::vector<Pending> pending_;
  std::vector<bool> folded_;
  std::map<ir::NodeId, const ir::Node*> bias_adds_;
};

// Constant kinds for Lowering::constant (one per layout transform).
enum ConstantKind : int {
  kAsActivation = 0,
  kAsNhwcActivation,
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
// concat, slice, split, channel shuffle, transpose (native nodes)
void emit_movement(Lowering& l, const ir::Node& n);
void emit_matmul(Lowering& l, const ir::Node& n);     // fully connected or a native batch matmul
void emit_normalize(Lowering& l, const ir::Node& n);  // layer_norm, batch_norm
void emit_reduce(Lowering& l, const ir::Node& n);
void emit_math(Lowering& l, const ir::Node& n);  // tanh, erf, exp, log, reciprocal, softplus

// Marks the transposes that matrix products will fold into their strides
// and the bias adds fully connected nodes take in (Lowering::folded,
// bias_add); called once before emitting.
void fold_into_matmuls(Lowering& l);
// The add of matmul `n`'s fully connected node that can become its bias.
const ir::Node* foldable_bias_add(const ir::Graph& g, const std::vector<std::vector<ir::NodeId>>& users,
                                  const ir::Node& n);

// Clamp attributes of a fused activation (clamp_min / clamp_max).
void set_output_range(NodeRecord& r, const ir::Node& n);

// Merges each clamp into the node producing its input when that node takes
// an output range and nothing else reads the intermediate.
void fold_clamps(BlobWriter& blob);

}  // namespace etc::xnnpack
