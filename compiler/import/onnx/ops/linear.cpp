// Lowering of ONNX MatMul and Gemm to the matmul / gemm edge ops.
#include "compiler/import/onnx/lower_context.h"
#include "compiler/import/onnx/ops/register_all.h"

namespace etc::onnx_import {
namespace {

void lower_matmul(LowerContext& c) { c.set_output(0, c.emit1(EdgeOp::MatMul, {c.input(0), c.input(1)})); }

// Gemm: C is required before opset 11 and broadcasts unidirectionally to
// [M, N] from opset 7 on; a C multiplied by beta = 0 is dropped.
void lower_gemm(LowerContext& c) {
  const float beta = c.attr_float("beta", 1.0f);
  std::vector<ir::ValueId> inputs{c.input(0), c.input(1)};
  if (c.opset() < 11 || c.has_input(2)) {
    const ir::ValueId bias = c.input(2);
    if (beta != 0.0f) inputs.push_back(bias);
  }
  ir::Attrs attrs{{"trans_a", c.attr_int("transA", 0)},
                  {"trans_b", c.attr_int("transB", 0)},
                  {"alpha", c.attr_float("alpha", 1.0f)},
                  {"beta", beta}};
  c.set_output(0, c.emit1(EdgeOp::Gemm, std::move(inputs), std::move(attrs)));
}

}  // namespace

void register_linear_lowerings() {
  register_lowering("MatMul", {lower_matmul, 1});
  register_lowering("Gemm", {lower_gemm, 1});
}

}  // namespace etc::onnx_import
