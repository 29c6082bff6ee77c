#pragma once
// The oneDNN partitioner's per-node rules, one function per op family (the
// Rule column of onednn_ops.def). Every rule answers for one live edge node
// whose data tensors are already known to be float32 of rank 1 to 5
// (OnednnPartitioner::is_supported).

#include "compiler/backend/capability_partitioner.h"
#include "compiler/ir/graph.h"

namespace etc::onednn {

// Ops that only move data; a partition of nothing else is not worth making.
bool is_data_movement(EdgeOp op);
// A binary node whose operands both have the output's dims (a residual add
// the preceding convolution can take as a sum post-op).
bool is_same_shape_binary(const ir::Graph& g, const ir::Node& n);

// A convolution the runtime runs as Winograd by default
// (runtime/backends/onednn/winograd_rule.h).
bool is_winograd_candidate(const ir::Graph& g, const ir::Node& n);

Support conv_rule(const ir::Graph& g, const ir::Node& n);
Support pool_rule(const ir::Graph& g, const ir::Node& n);
Support global_pool_rule(const ir::Graph& g, const ir::Node& n);
Support gemm_rule(const ir::Graph& g, const ir::Node& n);
Support matmul_rule(const ir::Graph& g, const ir::Node& n);
Support binary_rule(const ir::Graph& g, const ir::Node& n);
Support eltwise_rule(const ir::Graph& g, const ir::Node& n);
Support concat_rule(const ir::Graph& g, const ir::Node& n);
Support softmax_rule(const ir::Graph& g, const ir::Node& n);
Support reshape_rule(const ir::Graph& g, const ir::Node& n);
Support batch_norm_rule(const ir::Graph& g, const ir::Node& n);

}  // namespace etc::onednn
