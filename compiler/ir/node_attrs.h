#pragma once
// Typed readers of an edge node's attributes and operands, and the window
// arithmetic that several backends' partitioners and preprocessors share so
// they agree on what a node means.

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/graph.h"

namespace etc::ir {

// Attribute readers: the value, or the fallback (empty) when the attribute
// is absent or of another type.
std::vector<int64_t> attr_ints(const Node& n, const char* name);
int64_t attr_int(const Node& n, const char* name, int64_t fallback);
float attr_float(const Node& n, const char* name, float fallback);
std::string attr_string(const Node& n, const char* name, const std::string& fallback);

const Shape& shape_of(const Graph& g, ValueId v);
bool is_constant(const Graph& g, ValueId v);  // false for kNoValue
bool present(const Node& n, size_t input);    // the optional input is given

// avg_pool whose window is the whole H×W with no padding, or reduce_mean over
// H and W of a 4-D tensor (keeping dims or not).
bool is_global_avg_pool(const Graph& g, const Node& n);
// Extra end padding per spatial dim that makes a floor-rounded pooling
// output size (XNNPACK's, oneDNN's) equal a pooling node's ceil_mode output
// size (zeros without ceil_mode); empty when no padding can. The node has
// kernel_shape, strides and dilations of one value per spatial dim and pads
// of two.
std::vector<int64_t> pool_ceil_padding(const Graph& g, const Node& n);

}  // namespace etc::ir
