#include "preprocessors/xnnpack/blob_writer.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

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
  constant_of_.push_back(SIZE_MAX);
  return static_cast<uint32_t>(tensors_.size() - 1);
}

uint32_t BlobWriter::add_constant(std::vector<uint64_t> dims, std::vector<float> data) {
  const size_t count = data.size();
  auto held = std::make_shared<const std::vector<float>>(std::move(data));
  return add_constant(std::move(dims), count, [held](float* out) {
    if (!held->empty()) std::memcpy(out, held->data(), held->size() * sizeof(float));
  });
}

uint32_t BlobWriter::add_constant(std::vector<uint64_t> dims, size_t count, ConstantFill fill) {
  TensorRecord t;
  t.dims = std::move(dims);
  t.constant = true;
  t.constant_size = count * sizeof(float);
  const uint32_t id = add_tensor(std::move(t));
  constant_of_[id] = constants_.size();
  constants_.push_back(Constant{id, count, std::move(fill)});
  return id;
}

std::vector<float> BlobWriter::constant_data(uint32_t id) const {
  const Constant& c = constants_[constant_of_[id]];
  std::vector<float> data(c.count);
  c.fill(data.data());
  return data;
}

const ConstantFill& BlobWriter::constant_fill(uint32_t id) const { return constants_[constant_of_[id]].fill; }

size_t BlobWriter::constant_count(uint32_t id) const { return constants_[constant_of_[id]].count; }

void BlobWriter::repack_constant(uint32_t id, size_t count, ConstantFill fill, fb::WeightPacking packing) {
  tensors_[id].constant_size = count * sizeof(float);
  tensors_[id].packing = packing;
  Constant& c = constants_[constant_of_[id]];
  c.count = count;
  c.fill = std::move(fill);
}

uint32_t BlobWriter::add_packed_constant(std::vector<uint64_t> dims, size_t count, ConstantFill fill,
                                         fb::WeightPacking packing) {
  const uint32_t id = add_constant(std::move(dims), count, std::move(fill));
  tensors_[id].packing = packing;
  return id;
}

std::vector<uint8_t> BlobWriter::finish(uint32_t num_inputs, uint32_t num_outputs,
                                        const std::vector<uint32_t>& debug_ids) {
  // Each constant 64-byte aligned, in the order they were added, those
  // packed for the native kernel or transformed for Winograd last: the runtime reads them in place
  // after init and releases the pages of the rest, which then share none
  // of their pages (nor the neighbourhood a page fault maps around itself).
  std::stable_partition(constants_.begin(), constants_.end(), [&](const Constant& c) {
    return tensors_[c.tensor].packing == fb::WeightPacking::Plain;
  });
  for (size_t i = 0; i < constants_.size(); ++i) constant_of_[constants_[i].tensor] = i;
  size_t constants_size = 0;
  for (const Constant& c : constants_) {
    const size_t offset = (constants_size + kXnnpackConstantAlignment - 1) / kXnnpackConstantAlignment *
                          kXnnpackConstantAlignment;
    tensors_[c.tensor].constant_offset = offset;
    constants_size = offset + tensors_[c.tensor].constant_size;
  }
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<fb::Tensor>> tensors;
  for (const TensorRecord& t : tensors_) {
    // The schema marks constants by a non-zero size; every constant written
    // here holds at least one element (the partitioner refuses empty tensors).
    tensors.push_back(fb::CreateTensorDirect(fbb, &t.dims, t.constant_size, t.constant_offset,
                                             t.external_input, t.external_output, t.layout, t.nchw,
                                             t.packing));
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
        field(n.scales), n.coord_mode, n.nearest_mode, field(n.stride_axes), n.winograd_filter));
  }
  const auto root =
      fb::CreateGraphDirect(fbb, kXnnpackBlobVersion, &tensors, &nodes, num_inputs, num_outputs);
  fbb.FinishSizePrefixed(root, kXnnpackBlobIdentifier);
  // Each constant written once, in place: the fills write the relaid-out,
  // packed or transformed filters straight into the blob (a model's weights
  // are most of it), each fill freed once it has run. The fills read only
  // the graph's constants and write disjoint ranges, so they run on a few
  // threads, each taking the next constant: the same bytes, sooner (the
  // kernel clears the blob's fresh pages on the thread that first writes
  // them, and Winograd's transforms are arithmetic).
  const size_t base = xnnpack_constant_base(fbb.GetSize() - 4);
  std::vector<uint8_t> blob(base + constants_size);
  std::memcpy(blob.data(), fbb.GetBufferPointer(), fbb.GetSize());
  std::atomic<size_t> next{0};
  std::mutex failed_mutex;
  std::exception_ptr failed;
  const auto fill = [&] {
    for (size_t i = next++; i < constants_.size(); i = next++) {
      Constant& c = constants_[i];
      try {
        if (c.count > 0)
          c.fill(reinterpret_cast<float*>(blob.data() + base + tensors_[c.tensor].constant_offset));
      } catch (...) {
        const std::lock_guard<std::mutex> lock(failed_mutex);
        if (!failed) failed = std::current_exception();
      }
      c.fill = nullptr;
    }
  };
  const size_t helpers = std::min<size_t>({std::thread::hardware_concurrency(), 4, constants_.size()});
  std::vector<std::thread> threads;
  for (size_t t = 1; t < helpers; ++t) threads.emplace_back(fill);
  fill();
  for (std::thread& t : threads) t.join();
  if (failed) std::rethrow_exception(failed);
  return blob;
}

}  // namespace etc::xnnpack
