// Lowering of ONNX BatchNormalization (inference), InstanceNormalization and
// LayerNormalization.
#include <string>

#include "compiler/import/onnx/lower_context.h"
#include "compiler/import/onnx/ops/register_all.h"

namespace etc::onnx_import {
namespace {

bool output_requested(const LowerContext& c, int i) {
  return i < c.num_outputs() && !c.node().output(i).empty();
}

// Inference only. Opsets before 9 may carry spatial=0, whose statistics have
// one value per feature ([C, D1, ...]); the edge op reads that layout from the
// scale's shape.
void lower_batch_norm(LowerContext& c) {
  if (c.attr_int("training_mode", 0) != 0)
    c.fail("training_mode=1 (batch statistics) is not supported; only inference is");
  for (int i = 1; i < c.num_outputs(); ++i)
    if (output_requested(c, i))
      c.fail("output " + std::to_string(i) +
             " (running or saved statistics) is a training output and is not supported");
  const float eps = c.attr_float("epsilon", 1e-5f);
  if (c.opset() < 9 && c.attr_int("spatial", 1) == 0) {
    const Shape x = c.input_spec(0).shape;
    const Shape s = c.input_spec(1).shape;
    if (s.rank() > 0 && s.numel() != x.numel() / (x[0] == 0 ? 1 : x[0]))
      c.fail("spatial=0 needs statistics of shape [C, D1, ...], got " + s.str());
  }
  c.set_output(0, c.emit1(EdgeOp::BatchNorm, {c.input(0), c.input(1), c.input(2), c.input(3), c.input(4)},
                          {{"epsilon", eps}}));
}

void lower_instance_norm(LowerContext& c) {
  c.set_output(0, c.emit1(EdgeOp::InstanceNorm, {c.input(0), c.input(1), c.input(2)},
                          {{"epsilon", c.attr_float("epsilon", 1e-5f)}}));
}

// Mean and InvStdDev are float32 (ONNX type U) and computed at least in that
// precision, so stash_type only has to name a type we support.
void lower_layer_norm(LowerContext& c) {
  const int64_t rank = c.input_spec(0).shape.rank();
  const int64_t axis = c.normalize_axis(c.attr_int("axis", -1), rank);
  if (c.attr_int("stash_type", 1) != 1) c.fail("stash_type other than 1 (float32) is not supported");
  std::vector<ir::ValueId> inputs = {c.input(0), c.input(1)};
  if (c.has_input(2)) inputs.push_back(c.input(2));
  int outputs = 1;
  for (int i = 1; i < c.num_outputs(); ++i)
    if (output_requested(c, i)) outputs = i + 1;
  const auto out = c.emit(EdgeOp::LayerNorm, std::move(inputs),
                          {{"axis", axis}, {"epsilon", c.attr_float("epsilon", 1e-5f)}}, outputs);
  for (int i = 0; i < outputs; ++i) c.set_output(i, out[static_cast<size_t>(i)]);
}

}  // namespace

void register_norm_lowerings() {
  register_lowering("BatchNormalization", {lower_batch_norm, 6, 17});
  register_lowering("InstanceNormalization", {lower_instance_norm, 6, 17});
  register_lowering("LayerNormalization", {lower_layer_norm, 17, 17});
}

}  // namespace etc::onnx_import
