// Folding a standalone clamp (relu, clip) into the node before it: XNNPACK
// applies output_min/output_max inside that node for free.
#include <algorithm>

#include "preprocessors/xnnpack/lowering.h"

namespace etc::xnnpack {
namespace {

bool takes_output_range(fb::NodeType t) {
  switch (t) {
    case fb::NodeType::Convolution2d:
    case fb::NodeType::DepthwiseConvolution2d:
    case fb::NodeType::Deconvolution2d:
    case fb::NodeType::FullyConnected:
    case fb::NodeType::MaxPooling2d:
    case fb::NodeType::AveragePooling2d:
    case fb::NodeType::GlobalAveragePooling2d:
    case fb::NodeType::Add:
    case fb::NodeType::Subtract:
    case fb::NodeType::Multiply:
    case fb::NodeType::ChannelScale:
    case fb::NodeType::Divide:
    case fb::NodeType::Clamp: return true;
    default: return false;
  }
}

}  // namespace

void fold_clamps(BlobWriter& blob) {
  std::vector<NodeRecord>& nodes = blob.nodes();
  std::vector<int> readers(blob.num_tensors(), 0);
  std::vector<int> producer(blob.num_tensors(), -1);
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (uint32_t t : nodes[i].inputs) ++readers[t];
    for (uint32_t t : nodes[i].outputs) producer[t] = static_cast<int>(i);
  }
  std::vector<bool> removed(nodes.size(), false);
  for (size_t i = 0; i < nodes.size(); ++i) {
    NodeRecord& clamp = nodes[i];
    if (clamp.type != fb::NodeType::Clamp) continue;
    const uint32_t mid = clamp.inputs[0];
    const int p = producer[mid];
    if (p < 0 || removed[p] || readers[mid] != 1 || blob.tensor(mid).external_output >= 0) continue;
    NodeRecord& prev = nodes[p];
    if (!takes_output_range(prev.type)) continue;
    const float lo = std::max(prev.output_min, clamp.output_min);
    const float hi = std::min(prev.output_max, clamp.output_max);
    if (!(lo < hi)) continue;  // XNNPACK needs min < max: keep both nodes
    prev.output_min = lo;
    prev.output_max = hi;
    prev.outputs = clamp.outputs;
    producer[clamp.outputs[0]] = p;
    prev.covers.insert(prev.covers.end(), clamp.covers.begin(), clamp.covers.end());
    removed[i] = true;
  }
  std::vector<NodeRecord> kept;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (!removed[i]) kept.push_back(std::move(nodes[i]));
  nodes = std::move(kept);
}

}  // namespace etc::xnnpack
