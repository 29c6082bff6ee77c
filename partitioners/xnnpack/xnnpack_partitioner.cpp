#include "partitioners/xnnpack/xnnpack_partitioner.h"

#include "partitioners/xnnpack/xnnpack_rules.h"
#include "runtime/backends/xnnpack/xnnpack_blob.h"

namespace etc::xnnpack {
namespace {

using Rule = Support (*)(const ir::Graph&, const ir::Node&);

Rule rule_for(EdgeOp op) {
  switch (op) {
    case EdgeOp::Conv: return conv_rule;
    case EdgeOp::ConvTranspose: return conv_transpose_rule;
    case EdgeOp::Gemm: return gemm_rule;
    case EdgeOp::MatMul: return matmul_rule;
    case EdgeOp::MaxPool:
    case EdgeOp::AvgPool:
    case EdgeOp::ReduceMean: return pool_rule;
    case EdgeOp::Add:
    case EdgeOp::Sub:
    case EdgeOp::Mul:
    case EdgeOp::Div:
    case EdgeOp::Min:
    case EdgeOp::Max:
    case EdgeOp::Pow: return binary_rule;
    case EdgeOp::Relu:
    case EdgeOp::Clip:
    case EdgeOp::Sigmoid:
    case EdgeOp::HardSwish:
    case EdgeOp::HardSigmoid:
    case EdgeOp::LeakyRelu:
    case EdgeOp::Elu:
    case EdgeOp::Abs:
    case EdgeOp::Neg:
    case EdgeOp::Floor:
    case EdgeOp::Ceil:
    case EdgeOp::Round:
    case EdgeOp::Sqrt: return unary_rule;
    case EdgeOp::Softmax: return softmax_rule;
    case EdgeOp::PRelu: return prelu_rule;
    case EdgeOp::Reshape: return reshape_rule;
    case EdgeOp::Pad: return pad_rule;
    case EdgeOp::Resize: return resize_rule;
    case EdgeOp::DepthToSpace: return depth_to_space_rule;
    case EdgeOp::Concat: return concat_rule;
    case EdgeOp::Slice: return slice_rule;
    case EdgeOp::Split: return split_rule;
    default: return nullptr;
  }
}

// Inputs that carry tensor data (the rest are shape-like arguments that the
// op's rule checks itself).
size_t data_inputs(const ir::Node& n) {
  switch (n.op) {
    case EdgeOp::Reshape:
    case EdgeOp::ReduceMean:
    case EdgeOp::Pad:
    case EdgeOp::Resize:
    case EdgeOp::Split:
    case EdgeOp::Clip:
    case EdgeOp::Pow: return 1;
    default: return n.inputs.size();
  }
}

bool is_binary(EdgeOp op) {
  return op == EdgeOp::Add || op == EdgeOp::Sub || op == EdgeOp::Mul || op == EdgeOp::Div ||
         op == EdgeOp::Min || op == EdgeOp::Max;
}

Support check_tensor(const ir::Graph& g, const ir::Node& n, ir::ValueId v, const std::string& what) {
  const TensorSpec& spec = g.value(v).spec;
  if (spec.dtype != DType::Float32)
    return Support::no("xnnpack: computes float32 only, " + what + " is " + dtype_name(spec.dtype));
  const int rank = spec.shape.rank();
  // A scalar constant operand of a binary op is stored as a broadcastable [1].
  if (rank == 0 && is_binary(n.op) && is_constant(g, v) && what != "the output") return Support::yes();
  if (spec.shape.numel() == 0) return Support::no("xnnpack: " + what + " is empty " + spec.shape.str());
  if (rank < 1 || rank > 4)
    return Support::no("xnnpack: " + what + " has rank " + std::to_string(rank) +
                       " (XNNPACK partitions take tensors of rank 1 to 4)");
  return Support::yes();
}

}  // namespace

Support XnnpackPartitioner::is_supported(const ir::Graph& graph, const ir::Node& node) {
  // The 5-D tensors inside a channel shuffle never leave it.
  if ((node.op == EdgeOp::Reshape || node.op == EdgeOp::Transpose) && find_channel_shuffle(graph, node))
    return Support::yes();
  const Rule rule = rule_for(node.op);
  if (!rule) return Support::no(std::string("xnnpack: no XNNPACK node for '") + edge_op_name(node.op) + "'");
  if (node.op == EdgeOp::Split) {
    for (ir::ValueId out : node.outputs) {
      Support s = check_tensor(graph, node, out, "an output");
      if (!s.supported) return s;
    }
  } else if (node.outputs.size() != 1)
    return Support::no(std::string("xnnpack: '") + edge_op_name(node.op) + "' with " +
                       std::to_string(node.outputs.size()) + " outputs (XNNPACK nodes here have one)");
  Support s =
      node.op == EdgeOp::Split ? Support::yes() : check_tensor(graph, node, node.outputs[0], "the output");
  if (!s.supported) return s;
  for (size_t i = 0; i < data_inputs(node); ++i) {
    if (!present(node, i)) return Support::no("xnnpack: input " + std::to_string(i) + " is absent");
    s = check_tensor(graph, node, node.inputs[i], "input " + std::to_string(i));
    if (!s.supported) return s;
  }
  return rule(graph, node);
}

PartitionResult XnnpackPartitioner::partition(const ir::ExportedProgram& program) const {
  // A partition that only moves data would add layout conversions and gain
  // nothing over the portable kernels.
  CapabilityOptions options = options_;
  if (!options.is_compute) options.is_compute = [](const ir::Node& n) { return !is_data_movement(n.op); };
  return partition_by_capability(program, &XnnpackPartitioner::is_supported, kXnnpackBackendId,
                                 DelegationSpec{kXnnpackBackendId, compile_specs_}, options);
}

}  // namespace etc::xnnpack
