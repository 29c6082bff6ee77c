#pragma once
// EdgeOp: the closed set of edge-dialect operators (declared in edge_ops.def).

#include <cstdint>
#include <optional>
#include <string_view>

namespace etc {

enum class EdgeOp : uint16_t {
#define ETC_EDGE_OP(E, N, F) E,
#include "runtime/kernels/edge_ops.def"
#undef ETC_EDGE_OP
};

inline constexpr int kNumEdgeOps = 0
#define ETC_EDGE_OP(E, N, F) +1
#include "runtime/kernels/edge_ops.def"
#undef ETC_EDGE_OP
    ;

// Stable snake_case name, as stored in program files ("conv").
const char* edge_op_name(EdgeOp op);
// Inverse of edge_op_name.
std::optional<EdgeOp> edge_op_from_name(std::string_view name);

}  // namespace etc
