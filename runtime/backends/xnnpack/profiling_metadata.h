#pragma once
// The metadata bytes the XNNPACK delegate attaches to each profiling event
// (event_tracer_end_profiling_delegate), read back by the Inspector's
// XNNPACK metadata parser. Little-endian, fixed layout:
//
//   byte 0      kStageMetadataVersion
//   byte 1      StageRunsOn (0 XNNPACK, 1 native, 2 native Winograd
//               F(4x4, 3x3), 3 native Winograd F(2x2, 3x3))
//   bytes 2-3   the node's xnnpack_blob.fbs NodeType (uint16)
//   bytes 4-5   blob nodes in the stage (uint16)
//   bytes 6-7   F, debug ids folded into the node (uint16)
//   then F      int32 debug ids of the nodes folded into it (a residual Add
//               or swish computed in a native convolution's epilogue), at
//               most kMaxFoldedIds
//
// Header only, so the compiler-side parser shares the layout.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace etc::xnnpack {

inline constexpr uint8_t kStageMetadataVersion = 1;
inline constexpr size_t kStageMetadataHeaderBytes = 8;
inline constexpr size_t kMaxFoldedIds = 8;

// kWinograd: a native convolution computed as Winograd F(4x4, 3x3);
// kWinograd2x2: as F(2x2, 3x3).
enum class StageRunsOn : uint8_t { kXnnpack = 0, kNative = 1, kWinograd = 2, kWinograd2x2 = 3 };

struct StageMetadata {
  StageRunsOn runs_on = StageRunsOn::kXnnpack;
  uint16_t node_type = 0;
  uint16_t num_nodes = 1;
  std::vector<int32_t> folded_ids;
};

inline std::vector<uint8_t> encode_stage_metadata(const StageMetadata& m) {
  const size_t folded = m.folded_ids.size() < kMaxFoldedIds ? m.folded_ids.size() : kMaxFoldedIds;
  std::vector<uint8_t> out(kStageMetadataHeaderBytes + 4 * folded);
  out[0] = kStageMetadataVersion;
  out[1] = static_cast<uint8_t>(m.runs_on);
  out[2] = static_cast<uint8_t>(m.node_type & 0xff);
  out[3] = static_cast<uint8_t>(m.node_type >> 8);
  out[4] = static_cast<uint8_t>(m.num_nodes & 0xff);
  out[5] = static_cast<uint8_t>(m.num_nodes >> 8);
  out[6] = static_cast<uint8_t>(folded & 0xff);
  out[7] = static_cast<uint8_t>(folded >> 8);
  for (size_t i = 0; i < folded; ++i) {
    const auto v = static_cast<uint32_t>(m.folded_ids[i]);
    for (size_t b = 0; b < 4; ++b)
      out[kStageMetadataHeaderBytes + 4 * i + b] = static_cast<uint8_t>(v >> (8 * b));
  }
  return out;
}

// nullopt for bytes of another version or a size that does not match.
inline std::optional<StageMetadata> decode_stage_metadata(const uint8_t* data, size_t size) {
  if (data == nullptr || size < kStageMetadataHeaderBytes || data[0] != kStageMetadataVersion || data[1] > 3)
    return std::nullopt;
  StageMetadata m;
  m.runs_on = static_cast<StageRunsOn>(data[1]);
  m.node_type = static_cast<uint16_t>(data[2] | (data[3] << 8));
  m.num_nodes = static_cast<uint16_t>(data[4] | (data[5] << 8));
  const size_t folded = static_cast<size_t>(data[6] | (data[7] << 8));
  if (folded > kMaxFoldedIds || size != kStageMetadataHeaderBytes + 4 * folded) return std::nullopt;
  for (size_t i = 0; i < folded; ++i) {
    uint32_t v = 0;
    for (size_t b = 0; b < 4; ++b)
      v |= static_cast<uint32_t>(data[kStageMetadataHeaderBytes + 4 * i + b]) << (8 * b);
    m.folded_ids.push_back(static_cast<int32_t>(v));
  }
  return m;
}

}  // namespace etc::xnnpack
