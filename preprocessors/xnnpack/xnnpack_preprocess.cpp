#include "preprocessors/xnnpack/xnnpack_preprocess.h"

#include <algorithm>
#include <cstring>
#include <memory>

#include "compiler/backend/delegate_mapping_builder.h"
#include "compiler/common/compile_error.h"
#include "compiler/ir/printer.h"
#include "partitioners/xnnpack/xnnpack_partitioner.h"
#include "partitioners/xnnpack/xnnpack_rules.h"
#include "preprocessors/xnnpack/lowering.h"
#include "preprocessors/xnnpack/native_weights.h"
#include "runtime/backends/xnnpack/blob_resize.h"
#include "runtime/backends/xnnpack/native_plan.h"

namespace etc::xnnpack {
namespace {

void emit(Lowering& l, const ir::Node& n) {
  if ((n.op == EdgeOp::Reshape || n.op == EdgeOp::Transpose) && find_channel_shuffle(l.graph(), n))
    return emit_movement(l, n);
  switch (n.op) {
#define ETC_XNN_OP(op, rule, emit, data_inputs, scalar_operand) \
  case EdgeOp::op:                                              \
    return emit(l, n);
#include "partitioners/xnnpack/xnnpack_ops.def"
#undef ETC_XNN_OP
    default: throw CompileError(std::string("xnnpack: no XNNPACK lowering for '") + edge_op_name(n.op) + "'");
  }
}

bool has_valid_handle(const NodeRecord& r) {
  for (const ir::Node* n : r.covers)
    for (int32_t h : n->meta.debug_handles)
      if (h >= 0) return true;
  return false;
}

}  // namespace

namespace {

// The blob's constants per packing, for the compile summary.
std::vector<ir::WeightLayoutSummary> weight_layouts(const BlobWriter& blob) {
  std::vector<ir::WeightLayoutSummary> layouts = {
      {"plain", 0, 0}, {"packed for the native kernel", 0, 0}, {"transformed for Winograd", 0, 0}};
  for (size_t t = 0; t < blob.num_tensors(); ++t) {
    const TensorRecord& r = blob.tensor(static_cast<uint32_t>(t));
    if (!r.constant) continue;
    ir::WeightLayoutSummary& l = layouts[r.packing == fb::WeightPacking::NativePanels ? 1
                                         : winograd_packing_tile(r.packing) != 0      ? 2
                                                                                      : 0];
    ++l.tensors;
    l.bytes += r.constant_size;
  }
  std::erase_if(layouts, [](const ir::WeightLayoutSummary& l) { return l.tensors == 0; });
  return layouts;
}

}  // namespace

PreprocessResult XnnpackBackendDetails::preprocess(const ir::ExportedProgram& partition,
                                                   std::span<const CompileSpec> compile_specs) const {
  const ir::Graph& g = partition.graph;
  const NativePacking packing = native_packing(compile_specs);
  BlobWriter blob;
  Lowering lowering(partition, blob);
  fold_into_matmuls(lowering);
  for (const ir::Node& n : g.nodes()) {
    if (n.dead || lowering.folded()[static_cast<size_t>(n.id)]) continue;
    const Support s = n.is_delegate_call() ? Support::no("xnnpack: a call_delegate node")
                                           : XnnpackPartitioner::is_supported(g, n);
    if (!s.supported)
      throw CompileError(partition.source_path + ": node " + ir::node_ref(n) + ": " + s.reason);
    try {
      emit(lowering, n);
      lowering.flush();
    } catch (const CompileError& e) {
      throw CompileError(partition.source_path + ": node " + ir::node_ref(n) + ": " + e.what());
    }
  }
  fold_clamps(blob);
  // The transforms read the plain filters, which packing then replaces.
  transform_winograd_filters(blob, packing);
  pack_native_filters(blob, packing);
  DelegateMappingBuilder builder(/*generated_identifiers=*/true);
  std::vector<uint32_t> debug_ids;
  for (const NodeRecord& r : blob.nodes()) {
    if (!has_valid_handle(r)) {
      debug_ids.push_back(kNoDebugId);
      continue;
    }
    const DelegateIdentifier id = builder.insert_delegate_mapping_entry(r.covers);
    debug_ids.push_back(static_cast<uint32_t>(std::get<int64_t>(id)));
  }
  PreprocessResult result;
  result.weights = weight_layouts(blob);
  result.processed_bytes = blob.finish(static_cast<uint32_t>(g.inputs().size()),
                                       static_cast<uint32_t>(g.outputs().size()), debug_ids);
  result.debug_handle_map = builder.get_delegate_mapping();
  return result;
}

namespace {

std::unique_ptr<fb::GraphT> unpack_blob(std::span<const uint8_t> blob) {
  uint32_t size = 0;
  if (blob.size() >= 12) std::memcpy(&size, blob.data(), 4);
  flatbuffers::Verifier verifier(blob.data(), std::min<size_t>(blob.size(), size_t{size} + 4));
  if (blob.size() < 12 || !fb::VerifySizePrefixedGraphBuffer(verifier))
    throw CompileError("xnnpack: a blob to compare does not verify");
  return std::unique_ptr<fb::GraphT>(fb::GetSizePrefixedGraph(blob.data())->UnPack());
}

// `graph` without its filters transformed for Winograd, which follow from
// the plain filters where Winograd may pay, and so may differ between
// sizes: the tensors after every other, and the nodes' links to them.
void drop_winograd_filters(fb::GraphT& graph) {
  size_t kept = graph.tensors.size();
  while (kept > 0 && winograd_packing_tile(graph.tensors[kept - 1]->packing) != 0) --kept;
  for (size_t t = 0; t < kept; ++t)
    if (winograd_packing_tile(graph.tensors[t]->packing) != 0)
      throw CompileError("xnnpack: a blob to compare has a Winograd filter before other tensors");
  graph.tensors.resize(kept);
  for (auto& node : graph.nodes) node->winograd_filter = -1;
}

// The constant data of `graph` (read from `constants`) with every filter
// packed for the native kernel unpacked, and `graph` changed to match: the
// same values whatever the packing, which may differ between sizes (it
// follows the output size; the runtime reads either at any size).
std::vector<uint8_t> plain_constants(fb::GraphT& graph, std::span<const uint8_t> constants) {
  std::vector<uint8_t> plain;
  for (auto& t : graph.tensors) {
    if (t->constant_size == 0) continue;
    uint64_t numel = 1;
    for (uint64_t d : t->dims) numel *= d;
    if (t->constant_offset > constants.size() || t->constant_size > constants.size() - t->constant_offset)
      throw CompileError("xnnpack: a blob to compare has a constant out of range");
    const uint8_t* from = constants.data() + t->constant_offset;
    const size_t offset = (plain.size() + kXnnpackConstantAlignment - 1) / kXnnpackConstantAlignment *
                          kXnnpackConstantAlignment;
    plain.resize(offset + numel * sizeof(float), 0);
    if (t->packing == fb::WeightPacking::NativePanels && !t->dims.empty() &&
        t->constant_size == native_panels_floats(t->dims[0], numel / t->dims[0]) * sizeof(float)) {
      // Both 64-byte aligned: blob constants, and offsets into `plain`.
      unpack_native_panels(reinterpret_cast<const float*>(from), t->dims[0], numel / t->dims[0],
                           reinterpret_cast<float*>(plain.data() + offset));
    } else if (t->packing == fb::WeightPacking::Plain && t->constant_size == numel * sizeof(float)) {
      std::memcpy(plain.data() + offset, from, t->constant_size);
    } else {
      throw CompileError("xnnpack: a blob to compare has a constant of the wrong size");
    }
    t->packing = fb::WeightPacking::Plain;
    t->constant_size = numel * sizeof(float);
    t->constant_offset = offset;
  }
  return plain;
}

}  // namespace

std::string XnnpackBackendDetails::check_resize(std::span<const uint8_t> largest,
                                                std::span<const uint8_t> other) const {
  std::unique_ptr<fb::GraphT> resized = unpack_blob(largest);
  const std::unique_ptr<fb::GraphT> expected = unpack_blob(other);
  drop_winograd_filters(*resized);
  drop_winograd_filters(*expected);
  const std::vector<uint8_t> a = plain_constants(*resized,
                                                 xnnpack_constant_data(largest.data(), largest.size())),
                             b = plain_constants(*expected,
                                                 xnnpack_constant_data(other.data(), other.size()));
  std::vector<BlobDims> dims(expected->num_inputs);
  for (const auto& t : expected->tensors)
    if (t->external_input >= 0 && static_cast<size_t>(t->external_input) < dims.size())
      dims[static_cast<size_t>(t->external_input)] = t->dims;
  if (Status s = resize_graph(*resized, dims); !s.ok()) return s.message();
  // Which dims follow the input is recorded where the compiler found them
  // differing, in the largest program only: the other has the same nodes
  // with no such rules.
  for (size_t n = 0; n < resized->nodes.size() && n < expected->nodes.size(); ++n) {
    expected->nodes[n]->infer_dim = resized->nodes[n]->infer_dim;
    expected->nodes[n]->to_end = resized->nodes[n]->to_end;
  }
  if (std::string difference = first_difference(*resized, *expected); !difference.empty()) return difference;
  if (a.size() != b.size() || !std::equal(a.begin(), a.end(), b.begin()))
    return "the constant data differs (a constant the backend computed from the input's size)";
  return "";
}

}  // namespace etc::xnnpack
