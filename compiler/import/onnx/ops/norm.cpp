// Lowering of the 'norm' ONNX op family to edge ops.
#include "compiler/import/onnx/lower_context.h"
#include "compiler/import/onnx/ops/register_all.h"

namespace etc::onnx_import {

void register_norm_lowerings() {}

}  // namespace etc::onnx_import
