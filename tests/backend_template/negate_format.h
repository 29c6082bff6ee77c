#pragma once
// The "negate" backend's blob, shared by its ahead-of-time and runtime
// halves (in a real backend: a flatbuffer schema in runtime/backends/NAME).
// A partition is a chain of k Neg nodes over n float32 elements; the blob is
// two little-endian uint64 words, k then n. Node i of the chain has the
// integer debug identifier i.

#include <cstddef>
#include <cstdint>

namespace etc::negate {

inline constexpr char kNegateBackendId[] = "negate";
inline constexpr size_t kNegateBlobBytes = 16;

}  // namespace etc::negate
