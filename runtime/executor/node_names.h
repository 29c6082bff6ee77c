#pragma once
// Names of the ONNX nodes behind an instruction or a delegate's debug
// identifier, from the program's debug info, for messages a user can act on.
// Used on error paths only: lookups are linear scans.

#include <cstdint>
#include <string>
#include <string_view>

#include "runtime/core/span.h"
#include "runtime/executor/program.h"

namespace etc {

// "ONNX node 'conv_1' (Conv)", "ONNX nodes 'a' (Add), 'b' (Relu)",
// "ONNX nodes 'a' (Add), 'b' (Relu), 'c' (Mul) and 4 more"; empty when no
// handle has a name in the program.
std::string describe_onnx_nodes(const Program& program, Span<const int32_t> debug_handles);

// The edge debug handles that entry of delegate `delegate`'s debug handle
// map covers: the entry whose string identifier is `name` (when not empty)
// or whose integer identifier is `delegate_debug_id`. Empty when the map has
// no such entry.
Span<const int32_t> delegate_debug_handles(const Program& program, uint32_t delegate, std::string_view name,
                                           int64_t delegate_debug_id);

}  // namespace etc
