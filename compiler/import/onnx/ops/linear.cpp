// Lowering of the 'linear' ONNX op family to edge ops.
#include "compiler/import/onnx/lower_context.h"
#include "compiler/import/onnx/ops/register_all.h"

namespace etc::onnx_import {

void register_linear_lowerings() {}

}  // namespace etc::onnx_import
