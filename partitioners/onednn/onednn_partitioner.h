#pragma once
// The oneDNN partitioner: tags the float32 nodes the oneDNN backend runs
// (convolutions with their fused activations, pooling, fully connected
// layers, elementwise ops, concatenation, softmax, batch normalisation and
// the reshapes between them) and gives every other node a reason starting
// "onednn: ". Partitions are tagged "onednn_<k>"; constants read inside a
// partition move into it. The ops are declared once in onednn_ops.def.
//
// Tensors inside a partition take whatever layout the primitives choose for
// the CPU at init (blocked, e.g. nChw16c); a partition converts only at its
// edges, so a partition of data movement alone is not made.

#include <vector>

#include "compiler/backend/capability_partitioner.h"
#include "compiler/backend/partitioner.h"

namespace etc::onednn {

class OnednnPartitioner : public Partitioner {
 public:
  explicit OnednnPartitioner(std::vector<CompileSpec> compile_specs = {}, CapabilityOptions options = {})
      : compile_specs_(std::move(compile_specs)), options_(std::move(options)) {}

  std::string name() const override { return "onednn"; }
  PartitionResult partition(const ir::ExportedProgram& program) const override;
  // oneDNN's time for the node over the XNNPACK backend's, measured by
  // kind of node (onednn_partitioner.cpp): above 1 for most (the XNNPACK
  // backend's own kernels, Winograd included, ran them faster), level for
  // depthwise and grouped convolutions, below 1 for concatenation and
  // global average pooling.
  double relative_cost(const ir::Graph& graph, const ir::Node& node) const override;

  // The per-node rule, public for preprocess, reports and tests.
  static Support is_supported(const ir::Graph& graph, const ir::Node& node);

 private:
  std::vector<CompileSpec> compile_specs_;
  CapabilityOptions options_;
};

}  // namespace etc::onednn
