// Rules for the GEMM-shaped and window ops: conv, conv_transpose, gemm,
// matmul, max_pool, avg_pool.
#include <cmath>

#include "partitioners/xnnpack/xnnpack_rules.h"

namespace etc::xnnpack {

bool layout_free(const Shape& s) { return s.rank() != 4 || s[1] == 1 || s[2] * s[3] == 1; }

bool is_depthwise_conv(const ir::Graph& g, const ir::Node& n) {
  if (n.op != EdgeOp::Conv) return false;
  const int64_t channels = shape_of(g, n.inputs[0])[1];
  const Shape& w = shape_of(g, n.inputs[1]);
  return channels > 1 && attr_int(n, "group", 1) == channels && w[1] == 1 && w[0] % channels == 0;
}

namespace {

std::string dims_word(int rank) { return std::to_string(rank) + "-D"; }

// Strides/dilations positive, pads non-negative, two spatial dims.
Support window_ok(const ir::Node& n, const char* what, bool allow_negative_pads = false) {
  for (const char* name : {"strides", "dilations"})
    for (int64_t v : attr_ints(n, name))
      if (v < 1) return Support::no(std::string("xnnpack: ") + what + " with " + name + " < 1");
  if (!allow_negative_pads)
    for (int64_t p : attr_ints(n, "pads"))
      if (p < 0) return Support::no(std::string("xnnpack: ") + what + " with negative pads");
  return Support::yes();
}

Support constant_operands(const ir::Graph& g, const ir::Node& n, const char* what) {
  if (!is_constant(g, n.inputs[1]))
    return Support::no(std::string("xnnpack: ") + what + " with non-constant weights");
  if (present(n, 2) && !is_constant(g, n.inputs[2]))
    return Support::no(std::string("xnnpack: ") + what + " with a non-constant bias");
  return Support::yes();
}

}  // namespace

Support conv_rule(const ir::Graph& g, const ir::Node& n) {
  const int rank = shape_of(g, n.inputs[0]).rank();
  if (rank != 4)
    return Support::no("xnnpack: conv with " + dims_word(rank) + " input (only 2-D convolution)");
  Support s = constant_operands(g, n, "conv");
  if (!s.supported) return s;
  return window_ok(n, "conv");
}

Support conv_transpose_rule(const ir::Graph& g, const ir::Node& n) {
  const int rank = shape_of(g, n.inputs[0]).rank();
  if (rank != 4)
    return Support::no("xnnpack: conv_transpose with " + dims_word(rank) + " input (only 2-D deconvolution)");
  Support s = constant_operands(g, n, "conv_transpose");
  if (!s.supported) return s;
  s = window_ok(n, "conv_transpose");
  if (!s.supported) return Support::no(s.reason + " (XNNPACK deconvolution cannot extend its output)");
  const std::vector<int64_t> strides = attr_ints(n, "strides");
  const std::vector<int64_t> adjustment = attr_ints(n, "output_padding");
  for (size_t i = 0; i < adjustment.size() && i < strides.size(); ++i)
    if (adjustment[i] < 0 || adjustment[i] >= strides[i])
      return Support::no("xnnpack: conv_transpose output_padding must be in [0, stride)");
  return Support::yes();
}

Support gemm_rule(const ir::Graph& g, const ir::Node& n) {
  if (attr_int(n, "trans_a", 0) != 0)
    return Support::no("xnnpack: gemm with trans_a=1 (fully connected takes A as [batch, input_channels])");
  if (!is_constant(g, n.inputs[1])) return Support::no("xnnpack: gemm with a non-constant B");
  if (!present(n, 2)) return Support::yes();
  if (!is_constant(g, n.inputs[2])) return Support::no("xnnpack: gemm with a non-constant C");
  const Shape& c = shape_of(g, n.inputs[2]);
  const Shape& y = shape_of(g, n.outputs[0]);
  // The bias of fully connected is one value per output channel.
  if (c.rank() == 2 && c[0] != 1 && y[0] != 1)
    return Support::no("xnnpack: gemm with C of shape " + c.str() +
                       " varying by row (fully connected bias is per output channel)");
  return Support::yes();
}

Support matmul_rule(const ir::Graph& /*g*/, const ir::Node& /*n*/) {
  // A constant 2-D right operand: fully connected; anything else the native
  // batched product.
  return Support::yes();
}

Support pool_rule(const ir::Graph& g, const ir::Node& n) {
  const char* what = n.op == EdgeOp::MaxPool ? "max_pool" : "avg_pool";
  const Shape& x = shape_of(g, n.inputs[0]);
  if (x.rank() != 4)
    return Support::no(std::string("xnnpack: ") + what + " with " + dims_word(x.rank()) +
                       " input (only 2-D pooling)");
  if (is_global_avg_pool(g, n)) return Support::yes();
  Support s = window_ok(n, what);
  if (!s.supported) return s;
  const std::vector<int64_t> k = attr_ints(n, "kernel_shape"), st = attr_ints(n, "strides"),
                             d = attr_ints(n, "dilations"), p = attr_ints(n, "pads");
  if (k.size() != 2 || st.size() != 2 || d.size() != 2 || p.size() != 4)
    return Support::no(std::string("xnnpack: ") + what + " without explicit 2-D window attributes");
  if (k[0] * k[1] == 1) return Support::no(std::string("xnnpack: ") + what + " with a 1x1 window");
  if (n.op == EdgeOp::AvgPool && (d[0] != 1 || d[1] != 1))
    return Support::no("xnnpack: avg_pool with dilations (XNNPACK average pooling has none)");
  if (st[0] > k[0] || st[1] > k[1])
    return Support::no(std::string("xnnpack: ") + what + " with a stride larger than its window");
  const bool padded = p[0] || p[1] || p[2] || p[3];
  if (n.op == EdgeOp::AvgPool && padded && attr_int(n, "count_include_pad", 0) != 0)
    return Support::no(
        "xnnpack: avg_pool with count_include_pad=1 and padding (XNNPACK divides by the valid pixels only)");
  const std::vector<int64_t> extra = pool_ceil_padding(g, n);
  if (extra.empty())
    return Support::no(std::string("xnnpack: ") + what + " whose output size XNNPACK cannot reproduce");
  if (n.op == EdgeOp::AvgPool && (extra[0] || extra[1]) && attr_int(n, "count_include_pad", 0) != 0)
    return Support::no(
        "xnnpack: avg_pool with count_include_pad=1 and ceil_mode=1 adding an output row or column");
  return Support::yes();
}

}  // namespace etc::xnnpack
