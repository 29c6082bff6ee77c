// Lowering of the 'rnn' ONNX op family to edge ops.
#include "compiler/import/onnx/lower_context.h"
#include "compiler/import/onnx/ops/register_all.h"

namespace etc::onnx_import {

void register_rnn_lowerings() {}

}  // namespace etc::onnx_import
