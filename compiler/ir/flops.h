#pragma once
// Estimated floating-point operations of one node, for reports (partition
// coverage by FLOPs). A multiply-add counts as two. The estimate is exact for
// the GEMM-shaped ops (conv, conv_transpose, matmul, gemm), the window ops
// (pooling) and the recurrent ops' matrix products; every other op counts
// one operation per output element. call_delegate nodes count the FLOPs of
// the subgraph they replaced.

#include <cstdint>

#include "compiler/ir/graph.h"

namespace etc::ir {

int64_t estimate_flops(const ExportedProgram& program, const Node& node);

}  // namespace etc::ir
