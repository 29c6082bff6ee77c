#pragma once
// The oneDNN backend's runtime half (registered as "onednn" when the build
// has ETC_BACKEND_ONEDNN). init reads and verifies the blob
// (blob_reader.h), creates the primitives for this CPU and reorders the
// weights into their layouts (compiled_partition.h), then frees the
// processed bytes; execute runs the primitives on oneDNN's OpenMP threads
// (RuntimeOptions::num_threads of them, 0: one per core).
//
// Compile specs: "winograd" = auto (3x3 stride-1 convolutions with at least
// 32 input and output channels), on (every 3x3 stride-1 convolution oneDNN
// accepts) or off. A node oneDNN refuses as Winograd runs direct.
//
// is_available: a CPU with AVX2 at least (oneDNN's fast paths; elsewhere
// programs run their fallback, `etc preprocess --fallback portable`).

#include "runtime/backend/interface.h"

namespace etc::onednn {

BackendInterface* onednn_backend();

}  // namespace etc::onednn
