#include "runtime/backends/xnnpack/work_estimate.h"

#include <cstddef>

namespace etc::xnnpack {
namespace {

// Multiply-adds per output element of a node whose input 1 is its filter
// (XNNPACK's layouts: [out, ...] for convolutions and fully connected
// nodes, [1, kh, kw, channels] for depthwise ones): the filter's elements
// per output channel.
uint64_t reduction_per_output(const BlobView& view, const fb::Node& node, const TensorInfo& out) {
  if (node.inputs()->size() < 2 || out.rank == 0 || out.dims[out.rank - 1] == 0) return 0;
  const TensorInfo& filter = view.tensors[node.inputs()->Get(1)];
  return filter.numel / out.dims[out.rank - 1];
}

uint64_t node_flops(const BlobView& view, const fb::Node& node) {
  if (node.outputs()->size() == 0) return 0;
  const TensorInfo& out = view.tensors[node.outputs()->Get(0)];
  switch (node.type()) {
    case fb::NodeType::Convolution2d:
    case fb::NodeType::DepthwiseConvolution2d:
    case fb::NodeType::FullyConnected: return 2 * out.numel * reduction_per_output(view, node, out);
    case fb::NodeType::Deconvolution2d: {
      // Each output pixel takes the taps of its phase: kernel / stride of them.
      uint64_t stride = 1;
      if (node.stride() != nullptr)
        for (uint32_t s : *node.stride()) stride *= s == 0 ? 1 : s;
      return 2 * out.numel * reduction_per_output(view, node, out) / stride;
    }
    case fb::NodeType::BatchMatMul:
      return node.mnk() != nullptr && node.mnk()->size() == 3 ? 2 * out.numel * node.mnk()->Get(2)
                                                              : out.numel;
    default: return out.numel;
  }
}

}  // namespace

uint64_t estimated_flops(const BlobView& view) {
  uint64_t total = 0;
  if (view.graph->nodes() != nullptr)
    for (const fb::Node* node : *view.graph->nodes()) total += node_flops(view, *node);
  return total;
}

int threads_worth_using(uint64_t flops, int requested) {
  return requested >= 0 && flops < kFlopsWorthASecondThread ? 1 : requested;
}

}  // namespace etc::xnnpack
