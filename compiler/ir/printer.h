#pragma once
// Readable text form of the IR, one node per line:
//   %5: float32[1, 64, 56, 56] = conv(%3, %w1, %b1) {strides=[1, 1], ...}  # Conv_0 (Conv) @12

#include <string>

#include "compiler/ir/graph.h"

namespace etc::ir {

std::string print(const Graph& graph);
// "conv Conv_0 (Conv)"
std::string describe(const Node& node);

}  // namespace etc::ir
