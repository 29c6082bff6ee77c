#include "partitioners/onednn/onednn_partitioner.h"

#include "compiler/ir/node_attrs.h"
#include "partitioners/onednn/onednn_rules.h"
#include "runtime/backends/onednn/onednn_blob.h"

namespace etc::onednn {
namespace {

using Rule = Support (*)(const ir::Graph&, const ir::Node&);

// Null for an op the backend does not take.
Rule rule_for(EdgeOp op) {
  switch (op) {
#define ETC_DNNL_OP(op, rule, emit) \
  case EdgeOp::op:                  \
    return &rule;
#include "partitioners/onednn/onednn_ops.def"
#undef ETC_DNNL_OP
    default: return nullptr;
  }
}

// Inputs that carry tensor data; the rest (a reshape's shape argument) are
// checked by the op's rule.
size_t data_inputs(const ir::Node& n) { return n.op == EdgeOp::Reshape ? 1 : n.inputs.size(); }

Support check_tensor(const ir::Graph& g, const ir::Node& n, ir::ValueId v, const std::string& what) {
  const TensorSpec& spec = g.value(v).spec;
  if (spec.dtype != DType::Float32)
    return Support::no("onednn: computes float32 only, " + what + " is " + dtype_name(spec.dtype));
  const int rank = spec.shape.rank();
  // A scalar constant operand of a binary op broadcasts.
  if (rank == 0 && rule_for(n.op) == &binary_rule && ir::is_constant(g, v) && what != "the output")
    return Support::yes();
  if (spec.shape.numel() == 0) return Support::no("onednn: " + what + " is empty " + spec.shape.str());
  if (rank < 1 || rank > 5)
    return Support::no("onednn: " + what + " has rank " + std::to_string(rank) +
                       " (oneDNN partitions take tensors of rank 1 to 5)");
  return Support::yes();
}

}  // namespace

Support OnednnPartitioner::is_supported(const ir::Graph& graph, const ir::Node& node) {
  const Rule rule = rule_for(node.op);
  if (!rule)
    return Support::no(std::string("onednn: no oneDNN primitive for '") + edge_op_name(node.op) + "'");
  if (node.outputs.size() != 1)
    return Support::no(std::string("onednn: '") + edge_op_name(node.op) + "' with " +
                       std::to_string(node.outputs.size()) + " outputs");
  Support s = check_tensor(graph, node, node.outputs[0], "the output");
  for (size_t i = 0; s.supported && i < data_inputs(node); ++i) {
    if (!ir::present(node, i)) {
      if (i > 0) continue;  // optional (a bias, clip's bounds); rules check the rest
      return Support::no("onednn: input 0 is absent");
    }
    s = check_tensor(graph, node, node.inputs[i], "input " + std::to_string(i));
  }
  return s.supported ? rule(graph, node) : s;
}

double OnednnPartitioner::relative_cost(const ir::Graph& graph, const ir::Node& node) const {
  if (node.op != EdgeOp::Conv) return 1.0;
  if (is_winograd_candidate(graph, node)) return 0.75;
  // Grouped (depthwise) convolutions: the XNNPACK backend's own kernels
  // ran mobilenet_v2 and efficientnet_b0 as fast or faster.
  return ir::attr_int(node, "group", 1) > 1 ? 1.25 : 1.0;
}

PartitionResult OnednnPartitioner::partition(const ir::ExportedProgram& program) const {
  CapabilityOptions options = options_;
  if (!options.is_compute) options.is_compute = [](const ir::Node& n) { return !is_data_movement(n.op); };
  return partition_by_capability(program, &OnednnPartitioner::is_supported, kOnednnBackendId,
                                 DelegationSpec{kOnednnBackendId, compile_specs_}, options);
}

}  // namespace etc::onednn
