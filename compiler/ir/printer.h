#pragma once
// Readable text form of the IR, one node per line:
//   %5: float32[1, 64, 56, 56] = conv(%3, %w1, %b1) {strides=[1, 1], ...}  # Conv_0 (Conv) @12
// A call_delegate node prints its partition tag and backend when the program
// is at hand (print(ExportedProgram)), else its delegate index:
//   %5: float32[2], %6: float32[2] = call_delegate[demo_0 → demo](%1, %w)  # demo_0 (call_delegate) @7

#include <string>

#include "compiler/ir/graph.h"

namespace etc::ir {

std::string print(const Graph& graph);
// Also lists the lowered modules (tag, backend, processed bytes, specs).
std::string print(const ExportedProgram& program);
// "conv Conv_0 (Conv)"; "call_delegate demo_0 (call_delegate)".
std::string describe(const Node& node);
// How errors name a node: "'Conv_3' (Conv)", or "#3 (conv)" when the node
// has no ONNX name.
std::string node_ref(const Node& node);

}  // namespace etc::ir
