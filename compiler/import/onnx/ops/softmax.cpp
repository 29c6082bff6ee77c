// Lowering of the 'softmax' ONNX op family to edge ops.
#include "compiler/import/onnx/lower_context.h"
#include "compiler/import/onnx/ops/register_all.h"

namespace etc::onnx_import {

void register_softmax_lowerings() {}

}  // namespace etc::onnx_import
