#include "preprocessors/xnnpack/xnnpack_preprocess.h"

#include "compiler/backend/delegate_mapping_builder.h"
#include "compiler/common/compile_error.h"
#include "compiler/ir/printer.h"
#include "partitioners/xnnpack/xnnpack_partitioner.h"
#include "partitioners/xnnpack/xnnpack_rules.h"
#include "preprocessors/xnnpack/lowering.h"

namespace etc::xnnpack {
namespace {

void emit(Lowering& l, const ir::Node& n) {
  if ((n.op == EdgeOp::Reshape || n.op == EdgeOp::Transpose) && find_channel_shuffle(l.graph(), n))
    return emit_movement(l, n);
  switch (n.op) {
    case EdgeOp::Conv: return emit_conv(l, n);
    case EdgeOp::ConvTranspose: return emit_conv_transpose(l, n);
    case EdgeOp::Gemm:
    case EdgeOp::MatMul: return emit_linear(l, n);
    case EdgeOp::MaxPool:
    case EdgeOp::AvgPool:
    case EdgeOp::ReduceMean: return emit_pool(l, n);
    case EdgeOp::Add:
    case EdgeOp::Sub:
    case EdgeOp::Mul:
    case EdgeOp::Div:
    case EdgeOp::Min:
    case EdgeOp::Max:
    case EdgeOp::Pow: return emit_binary(l, n);
    case EdgeOp::Softmax: return emit_softmax(l, n);
    case EdgeOp::PRelu: return emit_prelu(l, n);
    case EdgeOp::Reshape:
    case EdgeOp::Pad:
    case EdgeOp::Resize:
    case EdgeOp::DepthToSpace: return emit_shape(l, n);
    case EdgeOp::Concat:
    case EdgeOp::Slice:
    case EdgeOp::Split: return emit_movement(l, n);
    default: return emit_unary(l, n);
  }
}

bool has_valid_handle(const NodeRecord& r) {
  for (const ir::Node* n : r.covers)
    for (int32_t h : n->meta.debug_handles)
      if (h >= 0) return true;
  return false;
}

}  // namespace

PreprocessResult XnnpackBackendDetails::preprocess(const ir::ExportedProgram& partition,
                                                   std::span<const CompileSpec> /*compile_specs*/) const {
  const ir::Graph& g = partition.graph;
  BlobWriter blob;
  Lowering lowering(partition, blob);
  for (const ir::Node& n : g.nodes()) {
    if (n.dead) continue;
    const Support s = n.is_delegate_call() ? Support::no("xnnpack: a call_delegate node")
                                           : XnnpackPartitioner::is_supported(g, n);
    if (!s.supported)
      throw CompileError(partition.source_path + ": node " + ir::node_ref(n) + ": " + s.reason);
    try {
      emit(lowering, n);
    } catch (const CompileError& e) {
      throw CompileError(partition.source_path + ": node " + ir::node_ref(n) + ": " + e.what());
    }
  }
  fold_clamps(blob);
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
  result.processed_bytes = blob.finish(static_cast<uint32_t>(g.inputs().size()),
                                       static_cast<uint32_t>(g.outputs().size()), debug_ids);
  result.debug_handle_map = builder.get_delegate_mapping();
  return result;
}

}  // namespace etc::xnnpack
