#pragma once
// The XNNPACK partitioner: tags the float32 nodes that Debian's 2022 XNNPACK
// subgraph API can run (convolutions, fully connected layers, pooling,
// elementwise ops with numpy broadcasting, softmax, pad, reshape, resize,
// depth_to_space) and gives every other node a reason starting "xnnpack: ".
// Partitions are tagged "xnnpack_<k>"; constants read inside a partition move
// into it. Inside a partition 4-D activations are NHWC (see
// preprocessors/xnnpack), so layout-sensitive nodes are accepted only when
// that layout can express them. Tensors must have rank 1 to 4.

#include <vector>

#include "compiler/backend/capability_partitioner.h"
#include "compiler/backend/partitioner.h"

namespace etc::xnnpack {

class XnnpackPartitioner : public Partitioner {
 public:
  explicit XnnpackPartitioner(std::vector<CompileSpec> compile_specs = {}, CapabilityOptions options = {})
      : compile_specs_(std::move(compile_specs)), options_(options) {}

  std::string name() const override { return "xnnpack"; }
  PartitionResult partition(const ir::ExportedProgram& program) const override;

  // The per-node rule, public for preprocess, reports and tests.
  static Support is_supported(const ir::Graph& graph, const ir::Node& node);

 private:
  std::vector<CompileSpec> compile_specs_;
  CapabilityOptions options_;
};

}  // namespace etc::xnnpack
