// Lowering of ONNX Softmax and LogSoftmax.
//
// Before opset 13 the input is coerced to 2-D at `axis` (default 1) and
// normalized over all dims from the axis on; from 13 the normalization runs
// over the one axis (default -1). The edge op's flatten attribute carries the
// difference, so no reshape is needed either way.
#include "compiler/import/onnx/lower_context.h"
#include "compiler/import/onnx/ops/register_all.h"

namespace etc::onnx_import {
namespace {

Lowering softmax(EdgeOp op) {
  return {[op](LowerContext& c) {
            const int64_t rank = c.input_spec(0).shape.rank();
            if (rank == 0) c.fail("input must have rank >= 1");
            const bool coerce_2d = c.opset() < 13;
            const int64_t axis = c.normalize_axis(c.attr_int("axis", coerce_2d ? 1 : -1), rank);
            // Flattening from the last axis is the same as the per-axis form.
            const int64_t flatten = coerce_2d && axis != rank - 1 ? 1 : 0;
            c.set_output(0, c.emit1(op, {c.input(0)}, {{"axis", axis}, {"flatten", flatten}}));
          },
          1, 17};
}

}  // namespace

void register_softmax_lowerings() {
  register_lowering("Softmax", softmax(EdgeOp::Softmax));
  register_lowering("LogSoftmax", softmax(EdgeOp::LogSoftmax));
}

}  // namespace etc::onnx_import
