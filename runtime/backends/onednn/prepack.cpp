#include "runtime/backends/onednn/prepack.h"

#include <cstring>
#include <map>
#include <memory>
#include <string>

#include "runtime/backends/onednn/blob_reader.h"

namespace etc::onednn {

std::string packing_target(int threads) {
  const dnnl_version_t* v = dnnl_version();
  char isa[16];
  std::snprintf(isa, sizeof(isa), "0x%x", static_cast<unsigned>(dnnl::get_effective_cpu_isa()));
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
         std::to_string(v->patch) + ", CPU ISA " + isa;
}

Result<std::vector<uint8_t>> prepack_blob(std::span<const uint8_t> blob, const CompileOptions& options) {
  AlignedBuffer aligned = AlignedBuffer::allocate(blob.size());
  if (!aligned) return fail(Error::MemoryAllocationFailed, "onednn: cannot copy a blob to prepack");
  std::memcpy(aligned.data(), blob.data(), blob.size());
  ETC_ASSIGN_OR_RETURN(BlobView view, read_onednn_blob(aligned.data(), blob.size()));
  ETC_ASSIGN_OR_RETURN(std::unique_ptr<CompiledPartition> partition, compile_partition(view, options));
  // A tensor read in two layouts (by two primitives) stays row-major: one
  // packed layout could not serve both.
  std::map<uint32_t, const PackedConstant*> packed;
  std::map<uint32_t, int> layouts;
  for (const PackedConstant& p : partition->packed) {
    packed.emplace(p.tensor, &p);
    ++layouts[p.tensor];
  }
  for (const auto& [tensor, count] : layouts)
    if (count > 1) packed.erase(tensor);
  std::unique_ptr<fb::GraphT> graph(view.graph->UnPack());
  graph->packed_threads = packed.empty() ? 0 : static_cast<uint32_t>(partition->num_threads);
  const std::string target = packing_target(partition->num_threads);
  // Constants in tensor order, packed or as they were.
  std::vector<std::pair<const void*, size_t>> data;
  uint64_t size = 0;
  for (uint32_t t = 0; t < graph->tensors.size(); ++t) {
    fb::TensorT& tensor = *graph->tensors[t];
    if (tensor.constant_size == 0) continue;
    const void* bytes = view.tensors[t].constant;
    uint64_t length = view.tensors[t].constant_bytes;
    if (auto it = packed.find(t); it != packed.end()) {
      bytes = it->second->data;
      length = it->second->desc.get_size();
      const auto* raw = reinterpret_cast<const uint8_t*>(&it->second->desc.data);
      tensor.packed_desc.assign(raw, raw + sizeof(dnnl_memory_desc_t));
      tensor.packed_for = target;
    }
    size = (size + kOnednnConstantAlignment - 1) / kOnednnConstantAlignment * kOnednnConstantAlignment;
    tensor.constant_offset = size;
    tensor.constant_size = length;
    size += length;
    data.emplace_back(bytes, length);
  }
  flatbuffers::FlatBufferBuilder fbb;
  fbb.FinishSizePrefixed(fb::Graph::Pack(fbb, graph.get()), kOnednnBlobIdentifier);
  const size_t base = onednn_constant_base(fbb.GetSize() - 4);
  std::vector<uint8_t> out;
  out.reserve(base + size);
  out.insert(out.end(), fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  size_t c = 0;
  for (const auto& t : graph->tensors) {
    if (t->constant_size == 0) continue;
    out.resize(base + t->constant_offset, 0);
    const auto* bytes = static_cast<const uint8_t*>(data[c].first);
    out.insert(out.end(), bytes, bytes + data[c].second);
    ++c;
  }
  out.resize(base + size, 0);
  return out;
}

}  // namespace etc::onednn
