#include "partitioners/xnnpack/xnnpack_partitioner.h"

#include <algorithm>

#include "partitioners/xnnpack/xnnpack_rules.h"
#include "runtime/backends/xnnpack/xnnpack_blob.h"

namespace etc::xnnpack {
namespace {

using Rule = Support (*)(const ir::Graph&, const ir::Node&);

// One row of xnnpack_ops.def, the columns the partitioner reads.
struct OpEntry {
  Rule rule;
  size_t data_inputs;  // 0: all inputs
  bool scalar_operand;
};

// Null for an op the backend does not take.
const OpEntry* op_entry(EdgeOp op) {
  switch (op) {
#define ETC_XNN_OP(op, rule, emit, data_inputs, scalar_operand)     \
  case EdgeOp::op: {                                                \
    static constexpr OpEntry e{&rule, data_inputs, scalar_operand}; \
    return &e;                                                      \
  }
#include "partitioners/xnnpack/xnnpack_ops.def"
#undef ETC_XNN_OP
    default: return nullptr;
  }
}

Rule rule_for(EdgeOp op) {
  const OpEntry* e = op_entry(op);
  return e == nullptr ? nullptr : e->rule;
}

// Inputs that carry tensor data (the rest are shape-like arguments that the
// op's rule checks itself).
size_t data_inputs(const ir::Node& n) {
  const OpEntry* e = op_entry(n.op);
  return e == nullptr || e->data_inputs == 0 ? n.inputs.size() : std::min(e->data_inputs, n.inputs.size());
}

bool is_binary(EdgeOp op) {
  const OpEntry* e = op_entry(op);
  return e != nullptr && e->scalar_operand;
}

Support check_tensor(const ir::Graph& g, const ir::Node& n, ir::ValueId v, const std::string& what) {
  const TensorSpec& spec = g.value(v).spec;
  if (spec.dtype != DType::Float32)
    return Support::no("xnnpack: computes float32 only, " + what + " is " + dtype_name(spec.dtype));
  const int rank = spec.shape.rank();
  // A scalar constant operand of a binary op is stored as a broadcastable [1].
  if (rank == 0 && is_binary(n.op) && is_constant(g, v) && what != "the output") return Support::yes();
  if (spec.shape.numel() == 0) return Support::no("xnnpack: " + what + " is empty " + spec.shape.str());
  if (rank < 1 || rank > 6)
    return Support::no("xnnpack: " + what + " has rank " + std::to_string(rank) +
                       " (XNNPACK partitions take tensors of rank 1 to 6)");
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
