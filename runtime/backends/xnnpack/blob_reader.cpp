#include "runtime/backends/xnnpack/blob_reader.h"

#include <cstring>
#include <string>

#include "runtime/backends/xnnpack/native_plan.h"
#include "runtime/backends/xnnpack/native_winograd.h"
#include "runtime/backends/xnnpack/node_checks.h"
#include "runtime/core/vector_alignment.h"

namespace etc::xnnpack {
namespace {

Failure invalid(const std::string& what) {
  return fail(Error::InvalidProgram, "xnnpack: invalid blob: ", what);
}

std::string tensor_name(size_t index) { return "tensor " + std::to_string(index); }

// Fills `info` from the flatbuffer tensor; the constant range is checked
// against [constants, constants + constants_size).
Status read_tensor(const fb::Tensor& tensor, size_t index, const uint8_t* constants, size_t constants_size,
                   const fb::Graph& graph, TensorInfo& info) {
  const auto* dims = tensor.dims();
  const size_t rank = dims == nullptr ? 0 : dims->size();
  if (rank > kMaxTensorRank)
    return invalid(tensor_name(index) + " has rank " + std::to_string(rank) + ", more than " +
                   std::to_string(kMaxTensorRank));
  info.rank = rank;
  uint64_t numel = 1;
  for (size_t d = 0; d < rank; ++d) {
    const uint64_t dim = dims->Get(static_cast<flatbuffers::uoffset_t>(d));
    if (dim == 0 || dim > kMaxTensorElements || numel * dim > kMaxTensorElements)
      return invalid(tensor_name(index) + ": dimension " + std::to_string(d) + " is " + std::to_string(dim) +
                     " (every dimension must be at least 1 and the tensor at most " +
                     std::to_string(kMaxTensorElements) + " elements)");
    numel *= dim;
    info.dims[d] = static_cast<size_t>(dim);
  }
  info.numel = static_cast<size_t>(numel);

  const uint64_t constant_size = tensor.constant_size();
  const uint64_t constant_offset = tensor.constant_offset();
  info.packing = tensor.packing();
  const bool panels = info.packing == fb::WeightPacking::NativePanels;
  const size_t winograd_tile = winograd_packing_tile(info.packing);
  const bool winograd = winograd_tile != 0;
  if (info.packing != fb::WeightPacking::Plain && !panels && !winograd)
    return invalid(tensor_name(index) + ": unknown weight packing " +
                   std::to_string(static_cast<int>(info.packing)));
  if (panels && (constant_size == 0 || rank < 2))
    return invalid(tensor_name(index) +
                   ": only a constant of rank 2 or more can be packed for the native kernel");
  if (winograd && (constant_size == 0 || rank != 4 || info.dims[1] != 3 || info.dims[2] != 3))
    return invalid(tensor_name(index) +
                   ": only a constant of dims [out_c, 3, 3, in_c] can be transformed "
                   "for Winograd, not " +
                   dims_string(info));
  if (constant_size != 0) {
    const uint64_t expected = panels ? native_panels_floats(info.dims[0], info.numel / info.dims[0]) * 4
                              : winograd
                                  ? winograd_filter_floats(info.dims[0], info.dims[3], winograd_tile) * 4
                                  : numel * 4;
    if (constant_size != expected)
      return invalid(tensor_name(index) + ": constant of " + std::to_string(constant_size) + " bytes for " +
                     dims_string(info) + " float32" +
                     (panels     ? std::string(" packed in native panels")
                      : winograd ? " transformed for Winograd F(" + std::to_string(winograd_tile) + "x" +
                                       std::to_string(winograd_tile) + ", 3x3)"
                                 : std::string()) +
                     " (" + std::to_string(expected) + " bytes)");
    // The native kernel loads packed panels 64 bytes at a time (aligned
    // loads), and the constant data starts on 64 bytes.
    if ((panels || winograd) && constant_offset % kXnnpackConstantAlignment != 0)
      return invalid(tensor_name(index) + ": packed constant at offset " + std::to_string(constant_offset) +
                     ", not a multiple of " + std::to_string(kXnnpackConstantAlignment));
    // Every constant is float32, and native nodes read the plain ones (a
    // bias, a scale) in place.
    if (constant_offset % sizeof(float) != 0)
      return invalid(tensor_name(index) + ": float32 constant at offset " + std::to_string(constant_offset) +
                     ", not a multiple of 4");
    if (constant_offset > constants_size || constant_size > constants_size - constant_offset)
      return invalid(tensor_name(index) + ": constant bytes [" + std::to_string(constant_offset) + ", +" +
                     std::to_string(constant_size) + ") outside the " + std::to_string(constants_size) +
                     " bytes of constant data");
    info.constant = constants + constant_offset;
  }

  info.external_input = tensor.external_input();
  info.external_output = tensor.external_output();
  if (info.external_input < -1 || info.external_input >= static_cast<int64_t>(graph.num_inputs()))
    return invalid(tensor_name(index) + ": external_input " + std::to_string(info.external_input) +
                   " is not a delegate input (" + std::to_string(graph.num_inputs()) + " inputs)");
  if (info.external_output < -1 || info.external_output >= static_cast<int64_t>(graph.num_outputs()))
    return invalid(tensor_name(index) + ": external_output " + std::to_string(info.external_output) +
                   " is not a delegate output (" + std::to_string(graph.num_outputs()) + " outputs)");
  if (info.external_input >= 0 && info.external_output >= 0)
    return invalid(tensor_name(index) + " is both a delegate input and a delegate output");
  if (info.is_constant() && info.is_external())
    return invalid(tensor_name(index) + " is both a constant and a delegate argument");

  info.layout = tensor.layout();
  if (tensor.nchw() && (rank != 4 || info.layout != fb::BoundaryLayout::Same))
    return invalid(tensor_name(index) + ": only a 4-D tensor without a layout conversion can be marked nchw");
  info.nhwc = rank == 4 && !tensor.nchw();
  switch (info.layout) {
    case fb::BoundaryLayout::Same: break;
    case fb::BoundaryLayout::NchwToNhwc:
      if (info.external_input < 0 || rank != 4)
        return invalid(tensor_name(index) + ": layout NchwToNhwc needs a 4-D delegate input");
      break;
    case fb::BoundaryLayout::NhwcToNchw:
      if (info.external_output < 0 || rank != 4)
        return invalid(tensor_name(index) + ": layout NhwcToNchw needs a 4-D delegate output");
      break;
    default:
      return invalid(tensor_name(index) + ": unknown boundary layout " +
                     std::to_string(static_cast<int>(info.layout)));
  }
  return Status::Ok();
}

// Each delegate argument must be bound to exactly one tensor.
Status map_externals(BlobView& view) {
  const fb::Graph& graph = *view.graph;
  constexpr uint32_t kUnset = UINT32_MAX;
  view.input_tensors.assign(graph.num_inputs(), kUnset);
  view.output_tensors.assign(graph.num_outputs(), kUnset);
  for (size_t t = 0; t < view.tensors.size(); ++t) {
    const TensorInfo& info = view.tensors[t];
    if (info.external_input < 0 && info.external_output < 0) continue;
    const bool is_input = info.external_input >= 0;
    uint32_t& slot = is_input ? view.input_tensors[static_cast<size_t>(info.external_input)]
                              : view.output_tensors[static_cast<size_t>(info.external_output)];
    if (slot != kUnset)
      return invalid(std::string("delegate ") + (is_input ? "input " : "output ") +
                     std::to_string(is_input ? info.external_input : info.external_output) +
                     " is bound to both tensor " + std::to_string(slot) + " and " + tensor_name(t));
    slot = static_cast<uint32_t>(t);
  }
  for (size_t i = 0; i < view.input_tensors.size(); ++i)
    if (view.input_tensors[i] == kUnset)
      return invalid("delegate input " + std::to_string(i) + " is bound to no tensor");
  for (size_t i = 0; i < view.output_tensors.size(); ++i)
    if (view.output_tensors[i] == kUnset)
      return invalid("delegate output " + std::to_string(i) + " is bound to no tensor");
  return Status::Ok();
}

// A node's winograd_filter: -1, or a Winograd-transformed constant with the
// dims of its filter, read by no other node, of a convolution Winograd can
// run (winograd_applies) whose filter is plain or packed for the direct
// kernel (which runs it where Winograd does not pay).
Status check_winograd_filter(const BlobView& view, const fb::Node& node, size_t n,
                             std::vector<bool>& packed_read) {
  const int32_t id = node.winograd_filter();
  if (id == -1) return Status::Ok();
  const std::string what = node_name(node, n) + ": winograd_filter names tensor " + std::to_string(id);
  if (id < 0 || static_cast<size_t>(id) >= view.tensors.size())
    return invalid(what + ", past the " + std::to_string(view.tensors.size()) + " tensors");
  const TensorInfo& form = view.tensors[static_cast<size_t>(id)];
  if (winograd_packing_tile(form.packing) == 0)
    return invalid(what + ", not a constant transformed for Winograd");
  if (!winograd_applies(node) || node.inputs()->size() < 2)
    return invalid(
        what + ", but only a one-group 3x3 stride-1 undilated convolution without flags runs as Winograd");
  const TensorInfo& filter = view.tensors[node.inputs()->Get(1)];
  const bool filter_ok =
      filter.packing == fb::WeightPacking::Plain || filter.packing == fb::WeightPacking::NativePanels;
  if (!filter_ok || dims_string(filter) != dims_string(form))
    return invalid(what + " of dims " + dims_string(form) + ", its filter (tensor " +
                   std::to_string(node.inputs()->Get(1)) + ") " + dims_string(filter) +
                   (!filter_ok ? " packed for Winograd" : ""));
  if (packed_read[static_cast<size_t>(id)]) return invalid(what + ", also another node's winograd_filter");
  packed_read[static_cast<size_t>(id)] = true;
  return Status::Ok();
}

// Nodes come in execution order: every input is a constant, a delegate
// input or the output of an earlier node; every tensor has one producer;
// every delegate output is produced. A blob has at least one node (every
// later stage may rely on the node list being there).
Status check_nodes(const BlobView& view) {
  const auto* nodes = view.graph->nodes();
  if (nodes == nullptr || nodes->size() == 0) return invalid("the graph has no nodes");
  std::vector<bool> defined(view.tensors.size(), false);
  for (size_t t = 0; t < view.tensors.size(); ++t)
    defined[t] = view.tensors[t].is_constant() || view.tensors[t].external_input >= 0;
  // A constant packed for the native kernel is the filter of one node that
  // kernel can run, with as many output channels as its first dimension.
  std::vector<bool> packed_read(view.tensors.size(), false);
  const size_t num_nodes = nodes == nullptr ? 0 : nodes->size();
  for (size_t n = 0; n < num_nodes; ++n) {
    const fb::Node* node = nodes->Get(static_cast<flatbuffers::uoffset_t>(n));
    ETC_TRY(check_node(view, *node, n));
    ETC_TRY(check_winograd_filter(view, *node, n, packed_read));
    for (flatbuffers::uoffset_t i = 0; i < node->inputs()->size(); ++i) {
      const uint32_t id = node->inputs()->Get(i);
      if (winograd_packing_tile(view.tensors[id].packing) != 0)
        return invalid(node_name(*node, n) + ": reads tensor " + std::to_string(id) +
                       ", transformed for Winograd, as input " + std::to_string(i) +
                       " (only a convolution's winograd_filter can be)");
      if (view.tensors[id].packing != fb::WeightPacking::NativePanels) continue;
      const bool gemm =
          node->flags() == 0 && ((node->type() == fb::NodeType::Convolution2d && node->groups() == 1 &&
                                  node->group_output_channels() == view.tensors[id].dims[0]) ||
                                 node->type() == fb::NodeType::FullyConnected);
      if (i != 1 || !gemm || packed_read[id])
        return invalid(node_name(*node, n) + ": reads tensor " + std::to_string(id) +
                       ", packed for the native kernel, as input " + std::to_string(i) +
                       " (only the filter of one one-group convolution or fully connected node can be)");
      packed_read[id] = true;
    }
    for (uint32_t id : *node->inputs())
      if (!defined[id])
        return invalid(node_name(*node, n) + ": input tensor " + std::to_string(id) +
                       " is not a constant, a delegate input or the output of an earlier node");
    for (uint32_t id : *node->outputs()) {
      if (defined[id])
        return invalid(node_name(*node, n) + ": output tensor " + std::to_string(id) +
                       " is already a constant, a delegate input or the output of another node");
      defined[id] = true;
    }
  }
  for (size_t i = 0; i < view.output_tensors.size(); ++i)
    if (!defined[view.output_tensors[i]])
      return invalid("delegate output " + std::to_string(i) + " (tensor " +
                     std::to_string(view.output_tensors[i]) + ") is produced by no node");
  return Status::Ok();
}

}  // namespace

std::string dims_string(const TensorInfo& tensor) {
  std::string s = "[";
  for (size_t d = 0; d < tensor.rank; ++d) s += (d ? ", " : "") + std::to_string(tensor.dims[d]);
  return s + "]";
}

namespace {

// See runtime/core/vector_alignment.h.
Status check_alignment(const fb::Graph& graph) {
  if (graph.tensors())
    for (flatbuffers::uoffset_t t = 0; t < graph.tensors()->size(); ++t)
      if (misaligned_8(graph.tensors()->Get(t)->dims())) return invalid(tensor_name(t) + ": misaligned dims");
  if (graph.nodes())
    for (flatbuffers::uoffset_t n = 0; n < graph.nodes()->size(); ++n) {
      const fb::Node& node = *graph.nodes()->Get(n);
      // Every [ulong] field of a node.
      if (misaligned_8(node.new_shape()) || misaligned_8(node.pre_paddings()) ||
          misaligned_8(node.post_paddings()) || misaligned_8(node.offsets()) ||
          misaligned_8(node.strides()) || misaligned_8(node.mnk()) || misaligned_8(node.batch()) ||
          misaligned_8(node.indices()))
        return invalid("node " + std::to_string(n) + ": misaligned parameters");
    }
  return Status::Ok();
}

}  // namespace

namespace {

// The size-prefixed flatbuffer at `bytes` (whose prefix says it fits in
// `size` bytes), read with the given constant data, or with its own (what
// follows the flatbuffer) when `given` is null.
Result<BlobView> read_graph(const uint8_t* bytes, size_t size, const Span<const uint8_t>* given) {
  if (bytes == nullptr || size < 12)
    return invalid(std::to_string(size) + " bytes, too small for a size-prefixed flatbuffer");
  if (!flatbuffers::BufferHasIdentifier(bytes, kXnnpackBlobIdentifier, /*size_prefixed=*/true))
    return invalid(std::string("file identifier is not \"") + kXnnpackBlobIdentifier + "\"");
  uint32_t flatbuffer_size = 0;
  std::memcpy(&flatbuffer_size, bytes, 4);
  flatbuffer_size = flatbuffers::EndianScalar(flatbuffer_size);
  if (flatbuffer_size > size - 4)
    return invalid("size prefix " + std::to_string(flatbuffer_size) + " exceeds the " + std::to_string(size) +
                   "-byte blob");
  flatbuffers::Verifier verifier(bytes, 4 + size_t{flatbuffer_size});
  if (!fb::VerifySizePrefixedGraphBuffer(verifier)) return invalid("the flatbuffer does not verify");

  BlobView view;
  view.graph = fb::GetSizePrefixedGraph(bytes);
  const fb::Graph& graph = *view.graph;
  ETC_TRY(check_alignment(graph));
  if (graph.version() != kXnnpackBlobVersion)
    return fail(Error::DelegateInvalidCompatibility, "xnnpack: blob version ",
                std::to_string(graph.version()), ", this runtime reads version ",
                std::to_string(kXnnpackBlobVersion), "; recompile");
  const Span<const uint8_t> data = given ? *given : xnnpack_constant_data(bytes, size);
  const uint8_t* constants = data.data();
  const size_t constants_size = data.size();
  const auto* tensors = graph.tensors();
  const size_t num_tensors = tensors == nullptr ? 0 : tensors->size();
  if (size_t{graph.num_inputs()} + graph.num_outputs() > num_tensors)
    return invalid(std::to_string(graph.num_inputs()) + " inputs and " + std::to_string(graph.num_outputs()) +
                   " outputs, but only " + std::to_string(num_tensors) + " tensors");
  view.tensors.resize(num_tensors);
  for (size_t t = 0; t < num_tensors; ++t)
    ETC_TRY(read_tensor(*tensors->Get(static_cast<flatbuffers::uoffset_t>(t)), t, constants, constants_size,
                        graph, view.tensors[t]));
  ETC_TRY(map_externals(view));
  ETC_TRY(check_nodes(view));
  return view;
}

}  // namespace

Result<BlobView> read_xnnpack_blob(const void* data, size_t size) {
  return read_graph(static_cast<const uint8_t*>(data), size, nullptr);
}

Result<BlobView> read_xnnpack_graph(const void* flatbuffer, size_t size, Span<const uint8_t> constants) {
  return read_graph(static_cast<const uint8_t*>(flatbuffer), size, &constants);
}

}  // namespace etc::xnnpack
