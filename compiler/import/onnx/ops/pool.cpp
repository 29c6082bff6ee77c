// Lowering of ONNX MaxPool, AveragePool, GlobalMaxPool and GlobalAveragePool
// to the max_pool / avg_pool edge ops (global pools: one window over all
// spatial dims).
#include <string>
#include <vector>

#include "compiler/import/onnx/lower_context.h"
#include "compiler/import/onnx/ops/conv_pads.h"
#include "compiler/import/onnx/ops/register_all.h"

namespace etc::onnx_import {
namespace {

ir::Attrs window_attrs(const WindowAttrs& w, int64_t ceil_mode) {
  return ir::Attrs{{"kernel_shape", w.kernel},
                   {"strides", w.strides},
                   {"pads", w.pads},
                   {"dilations", w.dilations},
                   {"ceil_mode", ceil_mode}};
}

WindowAttrs pool_window(LowerContext& c, const std::vector<int64_t>& in) {
  if (!c.has_attr("kernel_shape")) c.fail("attribute 'kernel_shape' is required");
  WindowAttrs w = read_window_attrs(c, c.attr_ints("kernel_shape"));
  resolve_same_pads(c, in, &w);
  return w;
}

// ceil_mode exists from opset 10; SAME_* pads already give out = ceil(in / stride).
int64_t ceil_mode(LowerContext& c, const WindowAttrs& w) {
  if (w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER") return 0;
  return c.attr_int("ceil_mode", 0);
}

void lower_max_pool(LowerContext& c) {
  const WindowAttrs w = pool_window(c, spatial_dims(c, 0));
  ir::Attrs attrs = window_attrs(w, ceil_mode(c, w));
  attrs.set("storage_order", c.attr_int("storage_order", 0));
  const bool indices = c.num_outputs() > 1 && !c.node().output(1).empty();
  const std::vector<ir::ValueId> outs =
      c.emit(EdgeOp::MaxPool, {c.input(0)}, std::move(attrs), indices ? 2 : 1);
  c.set_output(0, outs[0]);
  if (indices) c.set_output(1, outs[1]);
}

void lower_avg_pool(LowerContext& c) {
  const WindowAttrs w = pool_window(c, spatial_dims(c, 0));
  ir::Attrs attrs = window_attrs(w, ceil_mode(c, w));
  attrs.set("count_include_pad", c.attr_int("count_include_pad", 0));
  c.set_output(0, c.emit1(EdgeOp::AvgPool, {c.input(0)}, std::move(attrs)));
}

Lowering global_pool(EdgeOp op) {
  return {[op](LowerContext& c) {
            const std::vector<int64_t> in = spatial_dims(c, 0);
            WindowAttrs w;
            w.kernel = in;
            w.strides.assign(in.size(), 1);
            w.dilations.assign(in.size(), 1);
            w.pads.assign(2 * in.size(), 0);
            ir::Attrs attrs = window_attrs(w, 0);
            attrs.set("global", int64_t{1});
            c.set_output(0, c.emit1(op, {c.input(0)}, std::move(attrs)));
          },
          1};
}

}  // namespace

void register_pool_lowerings() {
  register_lowering("MaxPool", {lower_max_pool, 1});
  register_lowering("AveragePool", {lower_avg_pool, 1});
  register_lowering("GlobalMaxPool", global_pool(EdgeOp::MaxPool));
  register_lowering("GlobalAveragePool", global_pool(EdgeOp::AvgPool));
}

}  // namespace etc::onnx_import
