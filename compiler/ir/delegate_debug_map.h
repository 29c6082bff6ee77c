#pragma once
// A delegate's debug handle map: delegate-internal identifier → the edge
// debug handles (sorted, unique) of every edge node that identifier covers.
// One map holds one key type: integer identifiers or string identifiers.
// Built by DelegateMappingBuilder (compiler/backend/delegate_mapping_builder.h)
// and stored in the program (fb::DelegateMapEntry).

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace etc {

using DebugHandles = std::vector<int32_t>;
using IntDelegateDebugMap = std::map<int64_t, DebugHandles>;
using StringDelegateDebugMap = std::map<std::string, DebugHandles>;
using DelegateDebugMap = std::variant<IntDelegateDebugMap, StringDelegateDebugMap>;

inline size_t delegate_debug_map_size(const DelegateDebugMap& map) {
  return std::visit([](const auto& m) { return m.size(); }, map);
}

}  // namespace etc
