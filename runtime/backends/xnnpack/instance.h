#pragma once
// One delegate instance: the blob's plan made real for one set of input
// sizes (stages.h) — constants placed, the activation arena and staging
// buffers allocated, arguments prepared, and each stage created (an
// XNNPACK runtime, packing into the instance's pool, or a native node).
// xnnpack_backend.cpp keeps the instances of a delegate and runs them.

#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "runtime/backend/options.h"
#include "runtime/backends/xnnpack/blob_reader.h"
#include "runtime/backends/xnnpack/delegate_handle.h"
#include "runtime/backends/xnnpack/native_winograd.h"
#include "runtime/backends/xnnpack/stages.h"
#include "runtime/core/result.h"

namespace etc::xnnpack {

// What every instance of a delegate is created with.
struct InstanceOptions {
  NativeConvolutions convolutions = NativeConvolutions::kAuto;
  WinogradMode winograd = WinogradMode::kAuto;
  DelegateDetail detail = DelegateDetail::kFused;
  size_t num_threads = 1;
};

// A delegate ready to run the blob `view` describes (its sizes). Errors:
// DelegateMemoryAllocationFailed, DelegateInvalidCompatibility (XNNPACK
// refuses a runtime), InvalidProgram (a blob defect found while creating).
Result<std::unique_ptr<XnnpackHandle>> create_instance(const BlobView& view, const InstanceOptions& options);

// Maps the pages of every buffer of 2 MiB or more in `buffers` for writing
// now (populate_for_writing), a 2 MiB piece per task of `pool`; nothing on
// a pool of fewer than 2 threads. create_instance does so for the
// instance's arena and staging buffers.
void populate_large_buffers(std::span<const AlignedBuffer> buffers, pthreadpool_t pool);

// DelegateMemoryAllocationFailed naming `what`.
Failure out_of_memory(const std::string& what);

}  // namespace etc::xnnpack
