#pragma once
// Prepacking (compile spec onednn:prepack=on): the blob rewritten with its
// weights already in the layouts oneDNN's primitives choose on this machine
// (blocked, Winograd-transformed), each with its memory descriptor, so that
// init on a machine with the same CPU features and oneDNN version uses them
// in place from the program's mapping: no reorder, no copy (the Winograd
// weight transform alone took most of resnet18's init). Elsewhere blocked
// weights are reordered from their packed layout at init; Winograd-packed
// weights cannot be, and init fails naming where they were packed (a
// program compiled with --fallback portable then runs its fallback).
//
// Runs the backend's own init on the blob (blob_reader.h,
// compiled_partition.h) for options.num_threads threads, so it fails where
// init would. Some layouts depend on the thread count: init at another
// count makes those primitives again at the packing count (they then run on
// that many threads) rather than refuse.

#include <cstdint>
#include <span>
#include <vector>

#include "runtime/backends/onednn/compiled_partition.h"
#include "runtime/core/result.h"

namespace etc::onednn {

Result<std::vector<uint8_t>> prepack_blob(std::span<const uint8_t> blob, const CompileOptions& options);

// "oneDNN 2.6.3, CPU ISA 0x27, 2 thread(s)": what packed weights are for.
std::string packing_target(int threads);

}  // namespace etc::onednn
