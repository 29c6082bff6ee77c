#pragma once
// Constants of the oneDNN blob format (onednn_blob.fbs), shared by its
// writer (preprocessors/onednn) and its reader (runtime/backends/onednn).

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "runtime/backends/onednn/onednn_blob_generated.h"

namespace etc::onednn {

inline constexpr char kOnednnBackendId[] = "onednn";
inline constexpr uint32_t kOnednnBlobVersion = 2;
inline constexpr char kOnednnBlobIdentifier[] = "EDN1";
inline constexpr size_t kOnednnConstantAlignment = 64;
inline constexpr uint32_t kNoDebugId = 0xFFFFFFFFu;

// Where the constant data starts: after the size-prefixed flatbuffer, rounded
// up to kOnednnConstantAlignment. `flatbuffer_size` excludes the prefix.
inline size_t onednn_constant_base(size_t flatbuffer_size) {
  const size_t end = 4 + flatbuffer_size;
  return (end + kOnednnConstantAlignment - 1) / kOnednnConstantAlignment * kOnednnConstantAlignment;
}

}  // namespace etc::onednn
