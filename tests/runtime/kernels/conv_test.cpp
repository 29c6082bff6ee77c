// conv and conv_transpose kernels against a direct-definition reference, on
// the shapes that pick each kernel path (pointwise, depthwise, banded im2col)
// and on cases the ONNX conformance suite does not reach (bands that split
// the output, negative conv_transpose pads, float64, 3-D groups).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "tests/runtime/kernels/conv_kernel_test_util.h"

namespace etc::test {
namespace {

struct ConvCase {
  int64_t batch, in_channels, out_channels, group;
  std::vector<int64_t> in, kernel, strides, pads, dilations;  // spatial
};

// Pads a spatial vector to 3 dims with leading `fill`.
std::vector<int64_t> to3(const std::vector<int64_t>& v, int64_t fill) {
  std::vector<int64_t> r(3 - v.size(), fill);
  r.insert(r.end(), v.begin(), v.end());
  return r;
}

Shape nc_shape(int64_t n, int64_t c, const std::vector<int64_t>& spatial) {
  Shape s{n, c};
  for (int64_t d : spatial) s.push_back(d);
  return s;
}

ir::Attrs conv_attrs(const ConvCase& k) {
  return {{"strides", k.strides}, {"pads", k.pads}, {"dilations", k.dilations}, {"group", k.group}};
}

// y[n, m, o] = b[m] + sum over c in m's group, taps: x[n, c, o*s - pb + t*d] * w[m, c, t].
template <typename T>
std::vector<T> reference_conv(const ConvCase& k, const std::vector<int64_t>& out, const std::vector<T>& x,
                              const std::vector<T>& w, const std::vector<T>* b) {
  const size_t r = k.in.size();
  const auto in = to3(k.in, 1), ker = to3(k.kernel, 1), st = to3(k.strides, 1), dl = to3(k.dilations, 1);
  const auto pb = to3(std::vector<int64_t>(k.pads.begin(), k.pads.begin() + r), 0);
  const auto o3 = to3(out, 1);
  const int64_t cg = k.in_channels / k.group, mg = k.out_channels / k.group;
  std::vector<T> y;
  for (int64_t n = 0; n < k.batch; ++n)
    for (int64_t m = 0; m < k.out_channels; ++m)
      for (int64_t a = 0; a < o3[0]; ++a)
        for (int64_t bb = 0; bb < o3[1]; ++bb)
          for (int64_t c3 = 0; c3 < o3[2]; ++c3) {
            double acc = b ? static_cast<double>((*b)[m]) : 0.0;
            for (int64_t ci = 0; ci < cg; ++ci) {
              const int64_t c = (m / mg) * cg + ci;
              for (int64_t t0 = 0; t0 < ker[0]; ++t0)
                for (int64_t t1 = 0; t1 < ker[1]; ++t1)
                  for (int64_t t2 = 0; t2 < ker[2]; ++t2) {
                    const int64_t i0 = a * st[0] - pb[0] + t0 * dl[0];
                    const int64_t i1 = bb * st[1] - pb[1] + t1 * dl[1];
                    const int64_t i2 = c3 * st[2] - pb[2] + t2 * dl[2];
                    if (i0 < 0 || i0 >= in[0] || i1 < 0 || i1 >= in[1] || i2 < 0 || i2 >= in[2]) continue;
                    const int64_t xi = (((n * k.in_channels + c) * in[0] + i0) * in[1] + i1) * in[2] + i2;
                    const int64_t wi = (((m * cg + ci) * ker[0] + t0) * ker[1] + t1) * ker[2] + t2;
                    acc += static_cast<double>(x[xi]) * static_cast<double>(w[wi]);
                  }
            }
            y.push_back(static_cast<T>(acc));
          }
  return y;
}

// A fused activation: the clamp_min / clamp_max attributes, NaN for absent.
struct Clamp {
  double lo = std::nan(""), hi = std::nan("");
};

template <typename T>
void check_conv(const ConvCase& k, bool with_bias, double tol, Clamp clamp = {}) {
  const size_t r = k.in.size();
  std::vector<int64_t> out;
  for (size_t i = 0; i < r; ++i) {
    const int64_t span = (k.kernel[i] - 1) * k.dilations[i] + 1;
    out.push_back((k.in[i] + k.pads[i] + k.pads[i + r] - span) / k.strides[i] + 1);
  }
  const Shape xs = nc_shape(k.batch, k.in_channels, k.in);
  const Shape ws = nc_shape(k.out_channels, k.in_channels / k.group, k.kernel);
  const auto xv = random_values<T>(xs.numel(), 1);
  const auto wv = random_values<T>(ws.numel(), 2);
  const auto bv = random_values<T>(k.out_channels, 3);
  const HostTensor x = host_tensor(xs, xv), w = host_tensor(ws, wv);
  const HostTensor b = host_tensor(Shape{k.out_channels}, bv);
  std::vector<const HostTensor*> inputs{&x, &w};
  if (with_bias) inputs.push_back(&b);
  ir::Attrs attrs = conv_attrs(k);
  if (!std::isnan(clamp.lo)) attrs.set("clamp_min", static_cast<float>(clamp.lo));
  if (!std::isnan(clamp.hi)) attrs.set("clamp_max", static_cast<float>(clamp.hi));
  const auto y = run_kernel(EdgeOp::Conv, attrs, inputs);
  REQUIRE(y[0].spec.shape == nc_shape(k.batch, k.out_channels, out));
  std::vector<T> want = reference_conv(k, out, xv, wv, with_bias ? &bv : nullptr);
  for (T& v : want) {
    if (!std::isnan(clamp.lo)) v = std::max(v, static_cast<T>(static_cast<float>(clamp.lo)));
    if (!std::isnan(clamp.hi)) v = std::min(v, static_cast<T>(static_cast<float>(clamp.hi)));
  }
  require_close(y[0].values<T>(), want, tol);
}

TEST_CASE("conv pointwise path matches the definition with groups and batch") {
  check_conv<float>({2, 8, 6, 2, {5, 7}, {1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}}, true, 1e-4);
  check_conv<float>({1, 4, 3, 1, {9}, {1}, {1}, {0, 0}, {1}}, false, 1e-4);
}

TEST_CASE("conv depthwise path handles multipliers, strides, dilation and asymmetric pads") {
  check_conv<float>({2, 3, 3, 3, {9, 8}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}}, true, 1e-4);
  check_conv<float>({1, 4, 8, 4, {11, 10}, {3, 2}, {2, 3}, {0, 2, 1, 0}, {2, 1}}, false, 1e-4);
  // Three-tap rows take a fused pass: stride 2 with asymmetric pads, and narrow inputs
  // where no position sees all three taps.
  check_conv<float>({1, 5, 5, 5, {13, 12}, {3, 3}, {2, 2}, {1, 0, 1, 2}, {1, 1}}, true, 1e-4);
  check_conv<float>({1, 2, 2, 2, {3, 2}, {3, 3}, {1, 1}, {1, 2, 1, 2}, {1, 1}}, true, 1e-4);
  check_conv<float>({1, 3, 3, 3, {7, 9}, {1, 3}, {1, 1}, {0, 0, 0, 0}, {1, 3}}, false, 1e-4);
  check_conv<double>({1, 2, 2, 2, {4, 5, 6}, {2, 3, 2}, {1, 2, 1}, {1, 0, 1, 0, 2, 1}, {1, 1, 2}}, true,
                     1e-10);
}

TEST_CASE("conv im2col bands split the output and the last band is partial") {
  // 576 GEMM rows * 67 columns per line: about 7 lines per band, 67 lines in all.
  check_conv<float>({1, 64, 8, 1, {67, 67}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}}, true, 1e-3);
}

TEST_CASE("conv im2col handles 1x1 strided, grouped 3-D and float64") {
  check_conv<float>({1, 6, 4, 1, {9, 9}, {1, 1}, {2, 2}, {0, 0, 0, 0}, {1, 1}}, true, 1e-4);
  check_conv<float>({2, 4, 6, 2, {5, 4, 6}, {2, 3, 3}, {2, 1, 2}, {0, 1, 1, 1, 0, 2}, {1, 2, 1}}, true, 1e-4);
  check_conv<double>({1, 3, 5, 1, {10}, {4}, {3}, {2, 1}, {2}}, false, 1e-10);
}

TEST_CASE("conv applies a fused clamp after the bias on every path") {
  const Clamp relu{0.0, std::nan("")}, relu6{0.0, 6.0}, narrow{-0.25, 0.3};
  // Pointwise, several column bands (1024 columns per band here) and the last one partial.
  check_conv<float>({1, 32, 32, 1, {70, 66}, {1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}}, true, 1e-4, narrow);
  check_conv<float>({2, 8, 6, 2, {5, 7}, {1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}}, false, 1e-4, relu);
  // Depthwise 3x3, stride 1 and 2, with and without bias.
  check_conv<float>({1, 4, 4, 4, {13, 12}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}}, true, 1e-4, relu6);
  check_conv<float>({1, 5, 5, 5, {13, 12}, {3, 3}, {2, 2}, {1, 0, 1, 2}, {1, 1}}, false, 1e-4, narrow);
  // im2col with several bands, grouped im2col, and float64.
  check_conv<float>({1, 64, 8, 1, {67, 67}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}}, true, 1e-3, narrow);
  check_conv<float>({2, 4, 6, 2, {5, 4, 6}, {2, 3, 3}, {2, 1, 2}, {0, 1, 1, 1, 0, 2}, {1, 2, 1}}, true, 1e-4,
                    relu);
  check_conv<double>({1, 3, 5, 1, {10}, {4}, {3}, {2, 1}, {2}}, true, 1e-10, narrow);
}

TEST_CASE("conv infer rejects a clamp_min above clamp_max") {
  const ConvCase k{1, 2, 2, 1, {4, 4}, {1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}};
  ir::Attrs attrs = conv_attrs(k);
  attrs.set("clamp_min", 1.0f);
  attrs.set("clamp_max", 0.0f);
  const Status s = infer_status(
      EdgeOp::Conv, attrs,
      {TensorSpec{DType::Float32, Shape{1, 2, 4, 4}}, TensorSpec{DType::Float32, Shape{2, 2, 1, 1}}});
  CHECK_FALSE(s.ok());
}

TEST_CASE("conv rejects integer inputs and mismatched channels in infer") {
  const TensorSpec xi{DType::Int32, Shape{1, 2, 4, 4}}, wi{DType::Int32, Shape{3, 2, 3, 3}};
  const Status s = infer_status(EdgeOp::Conv, {}, {xi, wi});
  REQUIRE(s.error() == Error::InvalidType);
  const TensorSpec x{DType::Float32, Shape{1, 4, 4, 4}}, w{DType::Float32, Shape{3, 3, 3, 3}};
  REQUIRE_FALSE(infer_status(EdgeOp::Conv, {{"group", int64_t{2}}}, {x, w}).ok());
}

// y[n, m, i*s - pb + t*d] += x[n, c, i] * w[c, m % mg, t] for the output positions that exist.
std::vector<float> reference_conv_transpose(int64_t cin, int64_t cout, int64_t group, int64_t in, int64_t k,
                                            int64_t s, int64_t d, int64_t pb, int64_t out,
                                            const std::vector<float>& x, const std::vector<float>& w) {
  const int64_t cg = cin / group, mg = cout / group;
  std::vector<float> y(static_cast<size_t>(cout * out), 0.0f);
  for (int64_t c = 0; c < cin; ++c)
    for (int64_t m = 0; m < mg; ++m)
      for (int64_t i = 0; i < in; ++i)
        for (int64_t t = 0; t < k; ++t) {
          const int64_t o = i * s - pb + t * d;
          if (o >= 0 && o < out) y[((c / cg) * mg + m) * out + o] += x[c * in + i] * w[(c * mg + m) * k + t];
        }
  return y;
}

TEST_CASE("conv_transpose with negative pads extends the output and crops the begin") {
  // Pads [1, -2]: crop one position at the begin, add two at the end (like output_padding 2).
  const int64_t cin = 4, cout = 6, group = 2, in = 5, k = 3, s = 2, d = 2;
  const int64_t out = s * (in - 1) + (k - 1) * d + 1 - 1 + 2;
  const auto xv = random_values<float>(cin * in, 4);
  const auto wv = random_values<float>(cin * (cout / group) * k, 5);
  const HostTensor x = host_tensor(Shape{1, cin, in}, xv), w = host_tensor(Shape{cin, cout / group, k}, wv);
  const ir::Attrs attrs{{"strides", std::vector<int64_t>{s}},
                        {"pads", std::vector<int64_t>{1, -2}},
                        {"dilations", std::vector<int64_t>{d}},
                        {"group", group}};
  const auto y = run_kernel(EdgeOp::ConvTranspose, attrs, {&x, &w});
  REQUIRE(y[0].spec.shape == Shape{1, cout, out});
  require_close(y[0].values<float>(), reference_conv_transpose(cin, cout, group, in, k, s, d, 1, out, xv, wv),
                1e-5);
}

TEST_CASE("conv_transpose output_padding adds bias-only positions at the end") {
  const HostTensor x = host_tensor(Shape{1, 1, 2}, std::vector<float>{1.0f, 2.0f});
  const HostTensor w = host_tensor(Shape{1, 1, 1}, std::vector<float>{3.0f});
  const HostTensor b = host_tensor(Shape{1}, std::vector<float>{0.5f});
  const ir::Attrs attrs{{"strides", std::vector<int64_t>{2}}, {"output_padding", std::vector<int64_t>{1}}};
  const auto y = run_kernel(EdgeOp::ConvTranspose, attrs, {&x, &w, &b});
  REQUIRE(y[0].values<float>() == std::vector<float>{3.5f, 0.5f, 6.5f, 0.5f});
}

}  // namespace
}  // namespace etc::test
