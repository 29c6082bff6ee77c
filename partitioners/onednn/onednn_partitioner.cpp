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

// Measured node by node against the XNNPACK backend's own kernels on the
// benchmark set with squeezenet and shufflenet (tools/compare_backends.py
// at 1 and 2 threads, a 2-core AVX-512 Zen 4): oneDNN's time over
// XNNPACK's, by kind of node.
double OnednnPartitioner::relative_cost(const ir::Graph& graph, const ir::Node& node) const {
  switch (node.op) {
    case EdgeOp::Conv: {
      // Depthwise and grouped: 0.9-1.2, level.
      if (ir::attr_int(node, "group", 1) > 1) return 1.0;
      // 3x3 stride 1: both run Winograd, the XNNPACK backend's own tiles
      // faster (1.35-1.45).
      if (is_winograd_candidate(graph, node)) return 1.4;
      const Shape& w = graph.value(node.inputs[1]).spec.shape;
      bool pointwise = true;
      for (int i = 2; i < w.rank(); ++i) pointwise = pointwise && w[i] == 1;
      return pointwise ? 1.05 : 1.3;  // 1.0-1.15; 5x5, 7x7, strided, dilated: 1.3-1.45
    }
    case EdgeOp::MaxPool:
    case EdgeOp::AvgPool: return 1.5;     // 1.35-2.0
    case EdgeOp::ReduceMean: return 0.8;  // global average pooling: 0.65-1.0
    case EdgeOp::Concat: return 0.8;      // mostly written in place: 0.75-0.85
    case EdgeOp::Gemm:
    case EdgeOp::MatMul: return 1.05;  // 1.0-1.05
    case EdgeOp::Reshape: return 1.0;
    // Elementwise ops, softmax, batch normalisation: memory-bound, 1.1-3.7.
    default: return 2.5;
  }
}

PartitionResult OnednnPartitioner::partition(const ir::ExportedProgram& program) const {
  CapabilityOptions options = options_;
  if (!options.is_compute) options.is_compute = [](const ir::Node& n) { return !is_data_movement(n.op); };
  return partition_by_capability(program, &OnednnPartitioner::is_supported, kOnednnBackendId,
                                 DelegationSpec{kOnednnBackendId, compile_specs_}, options);
}

}  // namespace etc::onednn
