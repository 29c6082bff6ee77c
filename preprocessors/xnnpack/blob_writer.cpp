#include "preprocessors/xnnpack/blob_writer.h"

#include <cstring>

namespace etc::xnnpack {
namespace {

// Empty vectors are left out of the flatbuffer, so readers see "absent".
template <typename T>
const std::vector<T>* field(const std::vector<T>& v) {
  return v.empty() ? nullptr : &v;
}

}  // namespace

uint32_t BlobWriter::add_tensor(TensorRecord tensor) {
  tensors_.push_back(std::move(tensor));
  return static_cast<uint32_t>(tensors_.size() - 1);
}

uint32_t BlobWriter::add_constant(std::vector<uint64_t> dims, std::vector<float> data) {
  const size_t offset = (constants_size_ + kXnnpackConstantAlignment - 1) / kXnnpackConstantAlignment *
                        kXnnpackConstantAlignment;
  const size_t bytes = data.size() * sizeof(float);
  constants_size_ = offset + bytes;
  TensorRecord t;
  t.dims = std::move(dims);
  t.constant = true;
  t.constant_size = bytes;
  t.constant_offset = offset;
  constants_.push_back(Constant{offset, std::move(data)});
  return add_tensor(std::move(t));
}

std::vector<uint8_t> BlobWriter::finish(uint32_t num_inputs, uint32_t num_outputs,
                                        const std::vector<uint32_t>& debug_ids) {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<fb::Tensor>> tensors;
  for (const TensorRecord& t : tensors_) {
    // The schema marks constants by a non-zero size; every constant written
    // here holds at least one element (the partitioner refuses empty tensors).
    tensors.push_back(fb::CreateTensorDirect(fbb, &t.dims, t.constant_size, t.constant_offset,
                                             t.external_input, t.external_output, t.layout, t.nchw));
  }
  std::vector<flatbuffers::Offset<fb::Node>> nodes;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const NodeRecord& n = nodes_[i];
    nodes.push_back(fb::CreateNodeDirect(
        fbb, n.type, &n.inputs, &n.outputs, field(n.padding), field(n.kernel), field(n.stride),
        field(n.dilation), field(n.adjustment), n.groups, n.group_input_channels, n.group_output_channels,
        n.depth_multiplier, n.input_channels, n.output_min, n.output_max, n.alpha, field(n.new_shape),
        field(n.pre_paddings), field(n.post_paddings), n.padding_value, n.block_size, n.flags, debug_ids[i],
        n.axis, field(n.offsets), field(n.perm), field(n.axes), field(n.strides), field(n.mnk),
        field(n.batch), field(n.indices), n.epsilon, n.reduce_op, n.unary_op, n.infer_dim, field(n.to_end),
        field(n.scales), n.coord_mode, n.nearest_mode, field(n.stride_axes)));
  }
  const auto root =
      fb::CreateGraphDirect(fbb, kXnnpackBlobVersion, &tensors, &nodes, num_inputs, num_outputs);
  fbb.FinishSizePrefixed(root, kXnnpackBlobIdentifier);
  // Written once, in order: no zero fill and no copy of the constants but
  // this one (a model's weights are most of the blob).
  const size_t base = xnnpack_constant_base(fbb.GetSize() - 4);
  std::vector<uint8_t> blob;
  blob.reserve(base + constants_size_);
  blob.insert(blob.end(), fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  for (Constant& c : constants_) {
    blob.resize(base + c.offset, 0);  // alignment padding
    const auto* bytes = reinterpret_cast<const uint8_t*>(c.data.data());
    blob.insert(blob.end(), bytes, bytes + c.data.size() * sizeof(float));
    std::vector<float>().swap(c.data);  // its memory goes as the blob's grows
  }
  blob.resize(base + constants_size_, 0);
  return blob;
}

}  // namespace etc::xnnpack
