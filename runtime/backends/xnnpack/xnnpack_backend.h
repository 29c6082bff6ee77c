#pragma once
// The XNNPACK backend's runtime half: runs the blob written by
// preprocessors/xnnpack (format: xnnpack_blob.fbs) with XNNPACK's subgraph
// API.
//
//   init     verifies the blob (blob_reader.h), copies the constants that
//            XNNPACK reads in place at run time, defines the subgraph,
//            creates the XNNPACK runtime on the process-wide thread pool of
//            RuntimeOptions::num_threads threads (threadpool.h), allocates
//            NHWC staging buffers for arguments that change layout, then
//            frees the processed bytes (keeps them when the method may
//            resize: BackendInitContext::may_resize).
//   execute  checks every argument (float32, the declared element count),
//            converts NCHW inputs, binds arguments (xnn_setup_runtime only
//            when a pointer changed since the last call), invokes, converts
//            NHWC outputs. No allocation.
//   resize   (a method with an input compiled for a range of sizes, whose
//            init kept the blob) derives the blob at the new input dims
//            (blob_resize.h), reads and checks it like any blob and creates
//            it like init; the last four sizes stay created, so a size used
//            recently is switched to without creating anything.
//   destroy  deletes the runtime, frees the buffers, releases the pool.

#include "runtime/backend/interface.h"

namespace etc::xnnpack {

// The XNNPACK backend. Stateless (all state is in the handles), so the same
// object may be registered under several names. Never null.
BackendInterface* xnnpack_backend();

}  // namespace etc::xnnpack
