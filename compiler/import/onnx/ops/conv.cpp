// Lowering of ONNX Conv and ConvTranspose to the conv / conv_transpose edge
// ops, with auto_pad and output_shape resolved to explicit pads.
#include <string>
#include <vector>

#include "compiler/import/onnx/lower_context.h"
#include "compiler/import/onnx/ops/conv_pads.h"
#include "compiler/import/onnx/ops/register_all.h"

namespace etc::onnx_import {
namespace {

// The spatial kernel dims of weight input `w_input`, checked against
// kernel_shape.
std::vector<int64_t> weight_kernel(LowerContext& c, size_t rank, int w_input = 1) {
  const Shape w = c.input_spec(w_input).shape;
  if (w.rank() != static_cast<int>(rank) + 2)
    c.fail("weight shape " + w.str() + " does not match " + std::to_string(rank) + " spatial dims");
  std::vector<int64_t> kernel(w.begin() + 2, w.end());
  if (c.has_attr("kernel_shape") && c.attr_ints("kernel_shape") != kernel)
    c.fail("kernel_shape does not match weight shape " + w.str());
  return kernel;
}

std::vector<ir::ValueId> conv_inputs(LowerContext& c) {
  std::vector<ir::ValueId> inputs{c.input(0), c.input(1)};
  if (c.has_input(2)) inputs.push_back(c.input(2));
  return inputs;
}

void lower_conv(LowerContext& c) {
  c.set_output(0, c.emit1(EdgeOp::Conv, conv_inputs(c), conv_attrs(c, 0, 1)));
}

// ConvTranspose pads: explicit, or derived from output_shape (or from
// out = in * stride for SAME_*). A derived total padding splits as the ONNX
// spec says (the odd one at the end for SAME_UPPER, at the begin otherwise);
// a negative total (output_shape larger than the natural size) extends the end.
void resolve_transpose_pads(LowerContext& c, const std::vector<int64_t>& in,
                            const std::vector<int64_t>& out_pad, WindowAttrs* w) {
  const size_t rank = in.size();
  std::vector<int64_t> out_shape = c.attr_ints("output_shape");
  if (out_shape.size() == rank + 2) out_shape.erase(out_shape.begin(), out_shape.begin() + 2);
  if (!out_shape.empty() && out_shape.size() != rank)
    c.fail("output_shape has " + std::to_string(out_shape.size()) + " values for " + std::to_string(rank) +
           " spatial dims");
  const bool same = w->auto_pad == "SAME_UPPER" || w->auto_pad == "SAME_LOWER";
  if (out_shape.empty() && !same) {
    if (w->auto_pad == "VALID") std::fill(w->pads.begin(), w->pads.end(), 0);
    return;
  }
  for (size_t i = 0; i < rank; ++i) {
    const int64_t target = out_shape.empty() ? in[i] * w->strides[i] : out_shape[i];
    const int64_t span = (w->kernel[i] - 1) * w->dilations[i] + 1;
    const int64_t total = w->strides[i] * (in[i] - 1) + out_pad[i] + span - target;
    if (total < 0) {
      w->pads[i] = 0;
      w->pads[i + rank] = total;
      continue;
    }
    const bool upper = w->auto_pad == "SAME_UPPER";
    w->pads[i] = upper ? total / 2 : total - total / 2;
    w->pads[i + rank] = total - w->pads[i];
  }
}

void lower_conv_transpose(LowerContext& c) {
  const std::vector<int64_t> in = spatial_dims(c, 0);
  WindowAttrs w = read_window_attrs(c, weight_kernel(c, in.size()));
  std::vector<int64_t> out_pad = c.attr_ints("output_padding", std::vector<int64_t>(in.size(), 0));
  if (out_pad.size() != in.size())
    c.fail("output_padding has " + std::to_string(out_pad.size()) + " values for " +
           std::to_string(in.size()) + " spatial dims");
  for (int64_t p : out_pad)
    if (p < 0) c.fail("output_padding must be non-negative");
  resolve_transpose_pads(c, in, out_pad, &w);
  ir::Attrs attrs{{"strides", w.strides},
                  {"pads", w.pads},
                  {"dilations", w.dilations},
                  {"group", c.attr_int("group", 1)},
                  {"output_padding", out_pad}};
  c.set_output(0, c.emit1(EdgeOp::ConvTranspose, conv_inputs(c), std::move(attrs)));
}

}  // namespace

ir::Attrs conv_attrs(LowerContext& c, int x_input, int w_input) {
  const std::vector<int64_t> in = spatial_dims(c, x_input);
  WindowAttrs w = read_window_attrs(c, weight_kernel(c, in.size(), w_input));
  resolve_same_pads(c, in, &w);
  return ir::Attrs{{"strides", w.strides},
                   {"pads", w.pads},
                   {"dilations", w.dilations},
                   {"group", c.attr_int("group", 1)}};
}

void register_conv_lowerings() {
  register_lowering("Conv", {lower_conv, 1});
  register_lowering("ConvTranspose", {lower_conv_transpose, 1});
}

}  // namespace etc::onnx_import
