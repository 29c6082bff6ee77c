#pragma once
// Constants of the XNNPACK blob format (xnnpack_blob.fbs), shared by its
// writer (preprocessors/xnnpack) and its reader (runtime/backends/xnnpack).

#include <cstddef>
#include <cstdint>

#include "runtime/backends/xnnpack/xnnpack_blob_generated.h"

namespace etc::xnnpack {

inline constexpr char kXnnpackBackendId[] = "xnnpack";
inline constexpr uint32_t kXnnpackBlobVersion = 4;
inline constexpr char kXnnpackBlobIdentifier[] = "EXN1";
inline constexpr size_t kXnnpackConstantAlignment = 64;
// Node.debug_id of a node with no entry in the delegate's debug handle map.
inline constexpr uint32_t kNoDebugId = 0xFFFFFFFFu;

// Nodes the runtime computes itself, between XNNPACK subgraphs.
inline bool is_native_node(fb::NodeType type) {
  return type >= fb::NodeType::Concatenate && type <= fb::NodeType::MAX;
}

// Where the constant data starts: after the size-prefixed flatbuffer, rounded
// up to kXnnpackConstantAlignment. `flatbuffer_size` excludes the prefix.
inline size_t xnnpack_constant_base(size_t flatbuffer_size) {
  const size_t end = 4 + flatbuffer_size;
  return (end + kXnnpackConstantAlignment - 1) / kXnnpackConstantAlignment * kXnnpackConstantAlignment;
}

}  // namespace etc::xnnpack
