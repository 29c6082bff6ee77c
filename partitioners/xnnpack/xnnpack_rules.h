#pragma once
// The XNNPACK partitioner's per-node rules, one function per op family, and
// the small helpers that preprocessors/xnnpack shares with them so the two
// halves agree on what a node means (depthwise or grouped, global pooling…).
//
// Every rule answers for one live edge node whose tensors are already known
// to be float32 of rank 1 to 6 (see XnnpackPartitioner::is_supported). What
// this XNNPACK's xnn_define_* (Debian's xnnpack.h) cannot express runs as
// the backend's native nodes. Layouts are preprocess's concern: a 4-D
// activation is NHWC or NCHW as its neighbours need, converted where they
// disagree (preprocessors/xnnpack/layout_plan.cpp), so rules do not depend
// on them.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/backend/capability_partitioner.h"
#include "compiler/ir/graph.h"
#include "compiler/ir/node_attrs.h"

namespace etc::xnnpack {

// The node readers every rule uses (compiler/ir/node_attrs.h).
using ir::attr_float;
using ir::attr_int;
using ir::attr_ints;
using ir::attr_string;
using ir::is_constant;
using ir::is_global_avg_pool;
using ir::pool_ceil_padding;
using ir::present;
using ir::shape_of;

// A 4-D tensor whose NCHW and NHWC element orders coincide (C = 1 or H = W = 1).
bool layout_free(const Shape& s);

// Node classification shared with preprocess.
bool is_depthwise_conv(const ir::Graph& g, const ir::Node& n);  // group == C > 1, w [C*m, 1, kh, kw]
bool is_square(const ir::Graph& g, const ir::Node& n);          // pow(x, constant 2)

// ShuffleNet's channel shuffle: reshape [N, C, H, W] -> [N, g, C/g, H, W],
// transpose perm [0, 2, 1, 3, 4], reshape back to [N, C, H, W], each
// intermediate read only by the next node. Found from any of the three.
struct ChannelShuffle {
  const ir::Node* head;
  const ir::Node* transpose;
  const ir::Node* tail;
  int64_t groups;
};
std::optional<ChannelShuffle> find_channel_shuffle(const ir::Graph& g, const ir::Node& n);
// Ops that only move data; a partition of nothing else is not worth making.
bool is_data_movement(EdgeOp op);

Support conv_rule(const ir::Graph& g, const ir::Node& n);
Support conv_transpose_rule(const ir::Graph& g, const ir::Node& n);
Support gemm_rule(const ir::Graph& g, const ir::Node& n);
Support matmul_rule(const ir::Graph& g, const ir::Node& n);
Support pool_rule(const ir::Graph& g, const ir::Node& n);
Support binary_rule(const ir::Graph& g, const ir::Node& n);
Support unary_rule(const ir::Graph& g, const ir::Node& n);
Support softmax_rule(const ir::Graph& g, const ir::Node& n);
Support prelu_rule(const ir::Graph& g, const ir::Node& n);
Support reshape_rule(const ir::Graph& g, const ir::Node& n);
Support pad_rule(const ir::Graph& g, const ir::Node& n);
Support resize_rule(const ir::Graph& g, const ir::Node& n);
Support depth_to_space_rule(const ir::Graph& g, const ir::Node& n);
Support concat_rule(const ir::Graph& g, const ir::Node& n);
Support slice_rule(const ir::Graph& g, const ir::Node& n);
Support split_rule(const ir::Graph& g, const ir::Node& n);
Support transpose_rule(const ir::Graph& g, const ir::Node& n);
Support layer_norm_rule(const ir::Graph& g, const ir::Node& n);
Support batch_norm_rule(const ir::Graph& g, const ir::Node& n);
Support reduce_rule(const ir::Graph& g, const ir::Node& n);
Support math_rule(const ir::Graph& g, const ir::Node& n);

}  // namespace etc::xnnpack
