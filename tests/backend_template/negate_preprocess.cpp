#include "tests/backend_template/negate_preprocess.h"

#include "compiler/backend/delegate_mapping_builder.h"
#include "compiler/common/compile_error.h"
#include "tests/backend_template/negate_format.h"

namespace etc::negate {

PreprocessResult NegateBackendDetails::preprocess(const ir::ExportedProgram& partition,
                                                  std::span<const CompileSpec>) const {
  const ir::Graph& g = partition.graph;
  if (g.inputs().size() != 1 || g.outputs().size() != 1)
    throw CompileError("negate: a partition must be one chain (1 input, 1 output)");
  DelegateMappingBuilder builder(/*generated_identifiers=*/true);  // 0, 1, ... in chain order
  uint64_t k = 0;
  ir::ValueId previous = g.inputs()[0];
  for (const ir::Node& n : g.nodes()) {
    if (n.dead) continue;
    if (n.op != EdgeOp::Neg || n.inputs[0] != previous)
      throw CompileError("negate: node '" + n.meta.onnx_name + "' does not continue the chain");
    builder.insert_delegate_mapping_entry(std::vector<const ir::Node*>{&n});
    previous = n.outputs[0];
    ++k;
  }
  const uint64_t numel = static_cast<uint64_t>(g.value(g.inputs()[0]).spec.shape.numel());
  PreprocessResult result;
  for (uint64_t word : {k, numel})
    for (int b = 0; b < 8; ++b) result.processed_bytes.push_back(static_cast<uint8_t>(word >> (8 * b)));
  result.debug_handle_map = builder.get_delegate_mapping();
  return result;
}

}  // namespace etc::negate
