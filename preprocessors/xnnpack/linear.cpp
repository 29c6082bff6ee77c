// gemm and matmul → fully_connected. The filter is stored [output_channels,
// input_channels] (no XNN_FLAG_TRANSPOSE_WEIGHTS); gemm's alpha is folded
// into the filter and beta * C into the per-channel bias.
#include "partitioners/xnnpack/xnnpack_rules.h"
#include "preprocessors/xnnpack/lowering.h"

namespace etc::xnnpack {
namespace {

// B [K, N] (or [N, K] when transposed) → filter [N, K], scaled by alpha.
std::vector<float> filter_of(const std::vector<float>& b, int64_t k, int64_t n, bool transposed,
                             float alpha) {
  std::vector<float> f(b.size());
  for (int64_t o = 0; o < n; ++o)
    for (int64_t i = 0; i < k; ++i) f[o * k + i] = alpha * (transposed ? b[o * k + i] : b[i * n + o]);
  return f;
}

// C broadcast to [N] (the partitioner ensured it does not vary by row).
std::vector<float> bias_of(Lowering& l, const ir::Node& n, int64_t channels, float beta) {
  std::vector<float> bias(static_cast<size_t>(channels), 0.0f);
  if (!present(n, 2)) return bias;
  const std::vector<float> c = l.floats(n.inputs[2]);
  const int64_t last = c.size() == 1 ? 1 : shape_of(l.graph(), n.inputs[2]).dim(-1);
  for (int64_t o = 0; o < channels; ++o) bias[o] = beta * c[last == 1 ? 0 : o];
  return bias;
}

}  // namespace

void emit_linear(Lowering& l, const ir::Node& n) {
  const Shape& b = shape_of(l.graph(), n.inputs[1]);
  const bool gemm = n.op == EdgeOp::Gemm;
  const bool trans_b = gemm && attr_int(n, "trans_b", 0) != 0;
  const int64_t k = trans_b ? b[1] : b[0];
  const int64_t channels = trans_b ? b[0] : b[1];
  const float alpha = gemm ? attr_float(n, "alpha", 1.0f) : 1.0f;
  const float beta = gemm ? attr_float(n, "beta", 1.0f) : 1.0f;
  // Fully connected multiplies along the last blob axis: ONNX order.
  const uint32_t in = l.value_as(n.inputs[0], false);
  const uint32_t filter = l.blob().add_constant(
      {uint64_t(channels), uint64_t(k)}, filter_of(l.floats(n.inputs[1]), k, channels, trans_b, alpha));
  const uint32_t bias = l.blob().add_constant({uint64_t(channels)}, bias_of(l, n, channels, beta));
  const uint32_t out = l.output_as(n.outputs[0], false);
  NodeRecord& r = l.add_node(fb::NodeType::FullyConnected, n);
  r.inputs = {in, filter, bias};
  r.outputs = {out};
  set_output_range(r, n);
}

}  // namespace etc::xnnpack
