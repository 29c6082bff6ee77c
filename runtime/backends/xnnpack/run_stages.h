#pragma once
// Runs the stages of an initialised XNNPACK delegate (delegate_handle.h)
// once its arguments are bound: sets up the XNNPACK runtimes whose memory
// changed, then runs every stage in order.
//
// Developer tools: a stage with a debug id reports one profiling event keyed
// by it (integer identifier, profiling_metadata.h bytes as metadata); with
// outputs logged (the handle's log_buffer set) each node's outputs follow,
// rank-4 ones turned from NHWC to the program's NCHW first. On failure the
// failing stage's debug id is set on the context, so the executor's error
// names its ONNX nodes.

#include "runtime/backend/context.h"
#include "runtime/backends/xnnpack/delegate_handle.h"
#include "runtime/core/result.h"

namespace etc::xnnpack {

// Errors: Internal, naming the XNNPACK call and status.
Status run_stages(XnnpackHandle& handle, BackendExecutionContext& context);

}  // namespace etc::xnnpack
