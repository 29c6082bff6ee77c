#pragma once
// Turns one XNNPACK stage of a verified blob (blob_reader.h, stages.h) into
// an xnn_subgraph: one xnn_define_tensor_value per tensor the stage uses,
// then one xnn_define_* call per node. The stage's shared tensors are its
// external values, numbered in tensor order.

#include <xnnpack.h>

#include <memory>
#include <vector>

#include "runtime/backends/xnnpack/blob_reader.h"
#include "runtime/backends/xnnpack/stages.h"
#include "runtime/core/result.h"

namespace etc::xnnpack {

struct SubgraphDeleter {
  void operator()(xnn_subgraph_t subgraph) const { xnn_delete_subgraph(subgraph); }
};
using SubgraphPtr = std::unique_ptr<xnn_subgraph, SubgraphDeleter>;

// `constant_data[t]` is where constant tensor t's bytes live for XNNPACK
// (null for the others); it must stay valid as long as XNNPACK reads it.
// Errors: DelegateInvalidCompatibility when XNNPACK rejects a definition,
// naming the tensor or node and XNNPACK's status.
// `externals` receives the tensor id of each external value id.
Result<SubgraphPtr> build_subgraph(const BlobView& view, const std::vector<const void*>& constant_data,
                                   const StagePlan& plan, size_t stage_index,
                                   std::vector<uint32_t>& externals);

// "xnn_status_invalid_parameter"
const char* xnn_status_name(xnn_status status);

}  // namespace etc::xnnpack
