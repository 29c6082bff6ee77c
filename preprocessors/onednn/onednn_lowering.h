#pragma once
// Lowering of one oneDNN partition into the blob runtime/backends/onednn
// reads (onednn_blob.fbs). The emit_* functions (the Emit column of
// partitioners/onednn/onednn_ops.def) add one blob node each for an edge
// node; preprocess then folds what follows a node into its post-ops.
//
// Errors: CompileError naming the reason (preprocess adds file and node).

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "compiler/ir/graph.h"
#include "runtime/backends/onednn/onednn_blob.h"

namespace etc::onednn {

// A blob node with the edge nodes it computes (for the debug handle map).
struct LoweredNode {
  std::unique_ptr<fb::NodeT> node;
  std::vector<const ir::Node*> covers;
};

class Lowering {
 public:
  explicit Lowering(const ir::ExportedProgram& partition);

  const ir::Graph& graph() const { return graph_; }
  // The blob tensor of an edge value: the partition's inputs and outputs
  // are external, a constant's data is copied into the blob (float32).
  uint32_t tensor(ir::ValueId v);
  // A constant of the blob's own (weights in another order, a bias).
  uint32_t constant(std::vector<int64_t> dims, std::vector<float> data);
  // An internal tensor the blob adds (between a pooling and its reshape).
  uint32_t intermediate(std::vector<int64_t> dims);
  // The float data of a constant edge value, read in place.
  std::span<const float> floats(ir::ValueId v) const;
  // Adds a node computing `covers`; its inputs and outputs are set by the
  // caller.
  fb::NodeT& add(fb::NodeKind kind, const ir::Node& covers);
  std::vector<LoweredNode>& nodes() { return nodes_; }

  // The blob: flatbuffer, padding, constants. `debug_ids[i]` is node i's key
  // in the debug handle map.
  std::vector<uint8_t> finish(const std::vector<uint32_t>& debug_ids);

 private:
  // Makes tensor `id` a constant holding `data` (alive until finish).
  void add_constant_data(uint32_t id, std::span<const float> data);

  const ir::Graph& graph_;
  fb::GraphT blob_;
  std::map<ir::ValueId, uint32_t> tensors_;
  // By constant, in tensor order: derived data the lowering owns, or a
  // graph constant read in place at finish (the partition outlives it).
  std::vector<std::vector<float>> owned_data_;
  std::vector<std::span<const float>> constant_data_;
  std::vector<uint32_t> constant_tensors_;
  std::vector<LoweredNode> nodes_;
};

void emit_conv(Lowering& l, const ir::Node& n);
void emit_pool(Lowering& l, const ir::Node& n);
void emit_inner_product(Lowering& l, const ir::Node& n);
void emit_binary(Lowering& l, const ir::Node& n);
void emit_eltwise(Lowering& l, const ir::Node& n);
void emit_concat(Lowering& l, const ir::Node& n);
void emit_softmax(Lowering& l, const ir::Node& n);
void emit_reshape(Lowering& l, const ir::Node& n);
void emit_batch_norm(Lowering& l, const ir::Node& n);

// The eltwise algorithm and alpha, beta of an activation edge node (relu,
// clip, sigmoid…); Algorithm::None when it is not one oneDNN has.
struct Activation {
  fb::Algorithm algorithm = fb::Algorithm::None;
  float alpha = 0.0f, beta = 0.0f;
};
Activation activation_of(const ir::Node& n);
// A conv/gemm/matmul's fused clamp_min/clamp_max (fuse_activation), as an
// eltwise post-op; Algorithm::None when it has none.
Activation fused_clamp(const ir::Node& n);
// Appends `a` to the node's post-ops (nothing for Algorithm::None).
void add_activation(fb::NodeT& node, const Activation& a);

}  // namespace etc::onednn
