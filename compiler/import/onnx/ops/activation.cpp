// Lowering of ONNX activation functions.
#include "compiler/import/onnx/lower_context.h"
#include "compiler/import/onnx/ops/register_all.h"

namespace etc::onnx_import {
namespace {

Lowering plain(EdgeOp op) {
  return {[op](LowerContext& c) { c.set_output(0, c.emit1(op, {c.input(0)})); }, 1};
}

}  // namespace

void register_activation_lowerings() {
  register_lowering("Relu", plain(EdgeOp::Relu));
  register_lowering("Sigmoid", plain(EdgeOp::Sigmoid));
  register_lowering("Tanh", plain(EdgeOp::Tanh));
  register_lowering("Softplus", plain(EdgeOp::Softplus));
  register_lowering("Softsign", plain(EdgeOp::Softsign));
  register_lowering("HardSwish", plain(EdgeOp::HardSwish));
  register_lowering("Gelu",
                    {[](LowerContext& c) {
                       const std::string approximate = c.attr_string("approximate", "none");
                       if (approximate != "none" && approximate != "tanh")
                         c.fail("approximate must be none or tanh, got '" + approximate + "'");
                       c.set_output(0, c.emit1(EdgeOp::Gelu, {c.input(0)}, {{"approximate", approximate}}));
                     },
                     1});
  register_lowering(
      "LeakyRelu",
      {[](LowerContext& c) {
         c.set_output(0, c.emit1(EdgeOp::LeakyRelu, {c.input(0)}, {{"alpha", c.attr_float("alpha", 0.01f)}}));
       },
       1});
  register_lowering(
      "Elu", {[](LowerContext& c) {
                c.set_output(0, c.emit1(EdgeOp::Elu, {c.input(0)}, {{"alpha", c.attr_float("alpha", 1.0f)}}));
              },
              1});
  register_lowering(
      "Selu", {[](LowerContext& c) {
                 c.set_output(0, c.emit1(EdgeOp::Selu, {c.input(0)},
                                         {{"alpha", c.attr_float("alpha", 1.67326319217681884765625f)},
                                          {"gamma", c.attr_float("gamma", 1.05070102214813232421875f)}}));
               },
               1});
  register_lowering("HardSigmoid", {[](LowerContext& c) {
                                      c.set_output(0, c.emit1(EdgeOp::HardSigmoid, {c.input(0)},
                                                              {{"alpha", c.attr_float("alpha", 0.2f)},
                                                               {"beta", c.attr_float("beta", 0.5f)}}));
                                    },
                                    1});
  register_lowering("PRelu", {[](LowerContext& c) {
                                c.set_output(0, c.emit1(EdgeOp::PRelu, {c.input(0), c.input(1)}));
                              },
                              7});
}

}  // namespace etc::onnx_import
