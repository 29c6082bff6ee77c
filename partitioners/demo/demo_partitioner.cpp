#include "partitioners/demo/demo_partitioner.h"

#include "runtime/backends/demo/demo_format.h"

namespace etc::demo {
namespace {

bool is_demo_op(EdgeOp op) {
  switch (op) {
    case EdgeOp::Add:
    case EdgeOp::Sub:
    case EdgeOp::Mul:
    case EdgeOp::Sin:
    case EdgeOp::Cos:
    case EdgeOp::Relu: return true;
    default: return false;
  }
}

}  // namespace

Support DemoPartitioner::is_supported(const ir::Graph& graph, const ir::Node& node) {
  if (!is_demo_op(node.op))
    return Support::no(std::string("the demo backend has no '") + edge_op_name(node.op) + "'");
  const TensorSpec& out = graph.value(node.outputs[0]).spec;
  if (out.dtype != DType::Float32)
    return Support::no(std::string("the demo backend computes float32 only, output is ") +
                       dtype_name(out.dtype));
  for (ir::ValueId in : node.inputs) {
    if (in == ir::kNoValue) return Support::no("an absent optional input");
    const TensorSpec& spec = graph.value(in).spec;
    if (spec.dtype != DType::Float32)
      return Support::no(std::string("the demo backend computes float32 only, an input is ") +
                         dtype_name(spec.dtype));
    if (!(spec.shape == out.shape))
      return Support::no("the demo backend does not broadcast (input " + spec.shape.str() + ", output " +
                         out.shape.str() + ")");
  }
  return Support::yes();
}

PartitionResult DemoPartitioner::partition(const ir::ExportedProgram& program) const {
  return partition_by_capability(program, &DemoPartitioner::is_supported, kDemoBackendId,
                                 DelegationSpec{kDemoBackendId, compile_specs_}, options_);
}

}  // namespace etc::demo
