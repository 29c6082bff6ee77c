#pragma once
// Constants of the XNNPACK blob format (xnnpack_blob.fbs), shared by its
// writer (preprocessors/xnnpack) and its reader (runtime/backends/xnnpack).

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "runtime/backends/xnnpack/xnnpack_blob_generated.h"

namespace etc::xnnpack {

inline constexpr char kXnnpackBackendId[] = "xnnpack";
inline constexpr uint32_t kXnnpackBlobVersion = 5;
inline constexpr char kXnnpackBlobIdentifier[] = "EXN1";
inline constexpr size_t kXnnpackConstantAlignment = 64;
// Node.debug_id of a node with no entry in the delegate's debug handle map.
inline constexpr uint32_t kNoDebugId = 0xFFFFFFFFu;

// Nodes the runtime computes itself, between XNNPACK subgraphs.
inline bool is_native_node(fb::NodeType type) {
  return type >= fb::NodeType::Concatenate && type <= fb::NodeType::MAX;
}

// The Winograd variant (output tile side, native_plan.h) of a filter
// transformed ahead of time with packing `p`: 4 (WinogradPanels), 2
// (WinogradPanels2x2), or 0 where `p` is no Winograd transform.
inline size_t winograd_packing_tile(fb::WeightPacking p) {
  return p == fb::WeightPacking::WinogradPanels ? 4 : p == fb::WeightPacking::WinogradPanels2x2 ? 2 : 0;
}
inline fb::WeightPacking winograd_packing(size_t tile) {
  return tile == 2 ? fb::WeightPacking::WinogradPanels2x2 : fb::WeightPacking::WinogradPanels;
}

// Where the constant data starts: after the size-prefixed flatbuffer, rounded
// up to kXnnpackConstantAlignment. `flatbuffer_size` excludes the prefix.
inline size_t xnnpack_constant_base(size_t flatbuffer_size) {
  const size_t end = 4 + flatbuffer_size;
  return (end + kXnnpackConstantAlignment - 1) / kXnnpackConstantAlignment * kXnnpackConstantAlignment;
}

// The constant data of a blob of `size` bytes (at least the 4-byte size
// prefix): from its constant base to the end, empty when the blob ends first.
inline std::span<const uint8_t> xnnpack_constant_data(const uint8_t* blob, size_t size) {
  uint32_t flatbuffer_size = 0;
  std::memcpy(&flatbuffer_size, blob, sizeof(flatbuffer_size));
  const size_t base = xnnpack_constant_base(flatbuffers::EndianScalar(flatbuffer_size));
  return base < size ? std::span<const uint8_t>(blob + base, size - base) : std::span<const uint8_t>();
}

}  // namespace etc::xnnpack
