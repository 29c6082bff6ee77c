#include "compiler/import/onnx/ops/conv_pads.h"

#include <algorithm>
#include <string>

namespace etc::onnx_import {
namespace {

std::vector<int64_t> dims_attr(LowerContext& c, const char* name, size_t count, int64_t fallback) {
  std::vector<int64_t> v = c.attr_ints(name, std::vector<int64_t>(count, fallback));
  if (v.size() != count)
    c.fail(std::string("attribute '") + name + "' has " + std::to_string(v.size()) + " values, expected " +
           std::to_string(count));
  return v;
}

}  // namespace

std::vector<int64_t> spatial_dims(LowerContext& c, int i) {
  const Shape s = c.input_spec(i).shape;
  if (s.rank() < 3) c.fail("input shape " + s.str() + " has no spatial dims (expected N, C, spatial...)");
  return std::vector<int64_t>(s.begin() + 2, s.end());
}

WindowAttrs read_window_attrs(LowerContext& c, std::vector<int64_t> kernel) {
  WindowAttrs w;
  const size_t rank = kernel.size();
  w.kernel = std::move(kernel);
  w.strides = dims_attr(c, "strides", rank, 1);
  w.dilations = dims_attr(c, "dilations", rank, 1);
  w.pads = dims_attr(c, "pads", 2 * rank, 0);
  w.auto_pad = c.attr_string("auto_pad", "NOTSET");
  for (size_t i = 0; i < rank; ++i) {
    if (w.kernel[i] < 1) c.fail("kernel dims must be positive");
    if (w.strides[i] < 1) c.fail("strides must be positive");
    if (w.dilations[i] < 1) c.fail("dilations must be positive");
  }
  for (int64_t p : w.pads)
    if (p < 0) c.fail("pads must be non-negative");
  if (w.auto_pad != "NOTSET" && w.auto_pad != "VALID" && w.auto_pad != "SAME_UPPER" &&
      w.auto_pad != "SAME_LOWER")
    c.fail("auto_pad '" + w.auto_pad + "' is not supported");
  return w;
}

void resolve_same_pads(LowerContext& c, const std::vector<int64_t>& in, WindowAttrs* w) {
  const size_t rank = w->kernel.size();
  if (in.size() != rank)
    c.fail("kernel has " + std::to_string(rank) + " spatial dims, input has " + std::to_string(in.size()));
  if (w->auto_pad == "NOTSET") return;
  std::fill(w->pads.begin(), w->pads.end(), 0);
  if (w->auto_pad == "VALID") return;
  for (size_t i = 0; i < rank; ++i) {
    const int64_t out = (in[i] + w->strides[i] - 1) / w->strides[i];
    const int64_t span = (w->kernel[i] - 1) * w->dilations[i] + 1;
    const int64_t total = std::max<int64_t>(0, (out - 1) * w->strides[i] + span - in[i]);
    const int64_t small = total / 2;
    const bool upper = w->auto_pad == "SAME_UPPER";
    w->pads[i] = upper ? small : total - small;
    w->pads[i + rank] = upper ? total - small : small;
  }
}

}  // namespace etc::onnx_import
