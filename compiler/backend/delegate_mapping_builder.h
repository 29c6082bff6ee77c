#pragma once
// DelegateMappingBuilder: builds a delegate's debug handle map while a
// backend's preprocess walks its partition. Semantics follow ExecuTorch's
// DelegateMappingBuilder:
//
//   DelegateMappingBuilder builder(/*generated_identifiers=*/true);
//   int64_t id = builder.insert_delegate_mapping_entry({&mul, &add});  // 0
//   PreprocessResult{bytes, builder.get_delegate_mapping()};
//
// - Manual identifiers (the default): every insert names its identifier, an
//   int or a string. Generated identifiers: 0, 1, 2 … in insert order; an
//   insert must not name one.
// - Each insert takes exactly one of: edge nodes (their meta.debug_handles
//   are used) or debug handles directly.
// - Errors (CompileError): naming an identifier in generated mode; omitting it
//   in manual mode; a duplicate identifier; mixing int and string
//   identifiers; an empty node or handle list; no valid (≥ 0) handle.
//   (Two overloads make "exactly one of nodes or handles" a type rule.)
// - A failed insert changes nothing: it never uses up a generated identifier.
// - get_delegate_mapping() returns identifier → sorted, unique handles;
//   negative handles (nodes made by passes without an ONNX origin) are
//   dropped. In manual mode the first insert fixes the key type.
// Error messages name the nodes ("node 'conv_3' (Conv)") or the handles.

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "compiler/ir/delegate_debug_map.h"
#include "compiler/ir/graph.h"

namespace etc {

using DelegateIdentifier = std::variant<int64_t, std::string>;

class DelegateMappingBuilder {
 public:
  explicit DelegateMappingBuilder(bool generated_identifiers = false);

  DelegateIdentifier insert_delegate_mapping_entry(
      const std::vector<const ir::Node*>& nodes, std::optional<DelegateIdentifier> identifier = std::nullopt);
  DelegateIdentifier insert_delegate_mapping_entry(
      const std::vector<int32_t>& handles, std::optional<DelegateIdentifier> identifier = std::nullopt);

  const DelegateDebugMap& get_delegate_mapping() const { return map_; }

 private:
  DelegateIdentifier insert(const std::vector<int32_t>& handles, std::optional<DelegateIdentifier> identifier,
                            const std::string& what);

  bool generated_ = false;
  int64_t next_generated_ = 0;
  bool has_key_type_ = false;  // manual mode: set by the first insert
  DelegateDebugMap map_;
};

}  // namespace etc
