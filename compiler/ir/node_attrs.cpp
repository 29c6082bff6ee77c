#include "compiler/ir/node_attrs.h"

namespace etc::ir {

std::vector<int64_t> attr_ints(const Node& n, const char* name) {
  const AttrValue* a = n.attrs.find(name);
  if (const auto* v = a ? std::get_if<std::vector<int64_t>>(a) : nullptr) return *v;
  return {};
}

int64_t attr_int(const Node& n, const char* name, int64_t fallback) {
  const AttrValue* a = n.attrs.find(name);
  if (const auto* v = a ? std::get_if<int64_t>(a) : nullptr) return *v;
  return fallback;
}

float attr_float(const Node& n, const char* name, float fallback) {
  const AttrValue* a = n.attrs.find(name);
  if (const auto* v = a ? std::get_if<float>(a) : nullptr) return *v;
  return fallback;
}

std::string attr_string(const Node& n, const char* name, const std::string& fallback) {
  const AttrValue* a = n.attrs.find(name);
  if (const auto* v = a ? std::get_if<std::string>(a) : nullptr) return *v;
  return fallback;
}

const Shape& shape_of(const Graph& g, ValueId v) { return g.value(v).spec.shape; }
bool is_constant(const Graph& g, ValueId v) { return v != kNoValue && g.value(v).is_constant(); }
bool present(const Node& n, size_t input) { return input < n.inputs.size() && n.inputs[input] != kNoValue; }
bool is_global_avg_pool(const Graph& g, const Node& n) {
  const Shape& x = shape_of(g, n.inputs[0]);
  if (n.op == EdgeOp::ReduceMean)
    return x.rank() == 4 && !present(n, 1) && attr_ints(n, "axes") == std::vector<int64_t>{2, 3};
  if (n.op != EdgeOp::AvgPool) return false;
  const std::vector<int64_t> k = attr_ints(n, "kernel_shape");
  for (int64_t p : attr_ints(n, "pads"))
    if (p != 0) return false;
  return x.rank() == 4 && k.size() == 2 && k[0] == x[2] && k[1] == x[3];
}

std::vector<int64_t> pool_ceil_padding(const Graph& g, const Node& n) {
  const Shape& x = shape_of(g, n.inputs[0]);
  const Shape& y = shape_of(g, n.outputs[0]);
  const std::vector<int64_t> k = attr_ints(n, "kernel_shape"), st = attr_ints(n, "strides"),
                             d = attr_ints(n, "dilations"), p = attr_ints(n, "pads");
  const int dims = x.rank() - 2;
  std::vector<int64_t> extra(static_cast<size_t>(dims), 0);
  for (int i = 0; i < dims; ++i) {
    const int64_t extent = (k[i] - 1) * d[i] + 1;
    const int64_t padded = x[2 + i] + p[i] + p[dims + i];
    if (padded < extent) return {};
    const int64_t rounded_down = (padded - extent) / st[i] + 1;
    if (y[2 + i] == rounded_down) continue;
    // ceil_mode's extra window starts inside the input or its begin padding
    // (ONNX's rule); a floor-rounding backend computes it given that much
    // more end padding, which neither max pooling nor padding-excluding
    // averaging count.
    const int64_t last_start = (y[2 + i] - 1) * st[i];
    if (y[2 + i] != rounded_down + 1 || last_start >= x[2 + i] + p[i]) return {};
    extra[i] = last_start + extent - padded;
  }
  return extra;
}

}  // namespace etc::ir
