#include "tests/backend_template/negate_partitioner.h"

#include "tests/backend_template/negate_format.h"

namespace etc::negate {

Support NegatePartitioner::is_supported(const ir::Graph& graph, const ir::Node& node) {
  if (node.op != EdgeOp::Neg)
    return Support::no(std::string("the negate backend has no '") + edge_op_name(node.op) + "'");
  if (graph.value(node.outputs[0]).spec.dtype != DType::Float32) return Support::no("float32 only");
  return Support::yes();
}

PartitionResult NegatePartitioner::partition(const ir::ExportedProgram& program) const {
  return partition_by_capability(program, &NegatePartitioner::is_supported, kNegateBackendId,
                                 DelegationSpec{kNegateBackendId, {}});
}

}  // namespace etc::negate
