#include <catch2/catch.hpp>
#include <cmath>

#include "tests/runtime/kernels/resize_kernel_test_util.h"

using etc::EdgeOp;
using etc::Shape;
using etc::test::OwnedTensor;
using etc::test::pseudo_random;
using etc::test::run_kernel;

namespace {

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

// Straightforward single-direction GRU, batch 1, zero initial state.
std::vector<float> reference_gru(const std::vector<float>& x, const std::vector<float>& w,
                                 const std::vector<float>& r, const std::vector<float>& b, int seq, int in,
                                 int hs, bool lbr) {
  std::vector<float> h(hs, 0.0f), y;
  auto dot = [](const float* a, const float* c, int n) {
    float s = 0;
    for (int i = 0; i < n; ++i) s += a[i] * c[i];
    return s;
  };
  for (int t = 0; t < seq; ++t) {
    std::vector<float> z(hs), rg(hs), hn(hs), rh(hs);
    for (int j = 0; j < hs; ++j) {
      z[j] = sigmoid(dot(&x[t * in], &w[j * in], in) + dot(h.data(), &r[j * hs], hs) + b[j] + b[3 * hs + j]);
      rg[j] = sigmoid(dot(&x[t * in], &w[(hs + j) * in], in) + dot(h.data(), &r[(hs + j) * hs], hs) +
                      b[hs + j] + b[4 * hs + j]);
    }
    for (int j = 0; j < hs; ++j) rh[j] = rg[j] * h[j];
    for (int j = 0; j < hs; ++j) {
      const float xw = dot(&x[t * in], &w[(2 * hs + j) * in], in) + b[2 * hs + j];
      const float* rrow = &r[(2 * hs + j) * hs];
      hn[j] = lbr ? std::tanh(xw + rg[j] * (dot(h.data(), rrow, hs) + b[5 * hs + j]))
                  : std::tanh(xw + dot(rh.data(), rrow, hs) + b[5 * hs + j]);
    }
    for (int j = 0; j < hs; ++j) h[j] = (1 - z[j]) * hn[j] + z[j] * h[j];
    y.insert(y.end(), h.begin(), h.end());
  }
  return y;
}

}  // namespace

TEST_CASE("gru matches a scalar reference with and without linear_before_reset", "[rnn]") {
  const int seq = 3, in = 3, hs = 2;
  const auto x = pseudo_random(seq * in, 1), w = pseudo_random(3 * hs * in, 2);
  const auto r = pseudo_random(3 * hs * hs, 3), b = pseudo_random(6 * hs, 4);
  for (int lbr = 0; lbr <= 1; ++lbr) {
    etc::ir::Attrs attrs{{"hidden_size", int64_t{hs}}, {"linear_before_reset", int64_t{lbr}}};
    auto out = run_kernel(
        EdgeOp::Gru, attrs,
        {OwnedTensor::of<float>(Shape{seq, 1, in}, x), OwnedTensor::of<float>(Shape{1, 3 * hs, in}, w),
         OwnedTensor::of<float>(Shape{1, 3 * hs, hs}, r), OwnedTensor::of<float>(Shape{1, 6 * hs}, b)},
        2);
    const auto want = reference_gru(x, w, r, b, seq, in, hs, lbr != 0);
    const auto y = out[0].values<float>();
    REQUIRE(y.size() == want.size());
    for (size_t i = 0; i < y.size(); ++i) CHECK(y[i] == Approx(want[i]).margin(1e-5));
    const auto yh = out[1].values<float>();
    CHECK(yh[0] == Approx(want[want.size() - 2]).margin(1e-5));
  }
}

TEST_CASE("bidirectional lstm with short sequences equals running each sequence alone", "[rnn]") {
  const int seq = 3, batch = 2, in = 2, hs = 3;
  const auto x = pseudo_random(seq * batch * in, 5), w = pseudo_random(2 * 4 * hs * in, 6);
  const auto r = pseudo_random(2 * 4 * hs * hs, 7), b = pseudo_random(2 * 8 * hs, 8);
  etc::ir::Attrs attrs{{"hidden_size", int64_t{hs}}, {"direction", std::string("bidirectional")}};
  auto weights = [&](std::vector<OwnedTensor> v) {
    v.push_back(OwnedTensor::of<float>(Shape{2, 4 * hs, in}, w));
    v.push_back(OwnedTensor::of<float>(Shape{2, 4 * hs, hs}, r));
    v.push_back(OwnedTensor::of<float>(Shape{2, 8 * hs}, b));
    return v;
  };
  auto inputs = weights({OwnedTensor::of<float>(Shape{seq, batch, in}, x)});
  inputs.push_back(OwnedTensor::of<int32_t>(Shape{batch}, {3, 1}));
  const auto both = run_kernel(EdgeOp::Lstm, attrs, inputs, 3);
  const auto y = both[0].values<float>();   // [seq, 2, batch, hs]
  const auto yh = both[1].values<float>();  // [2, batch, hs]

  // Batch entry 1 alone, only its first step.
  const std::vector<float> x1(x.begin() + in, x.begin() + 2 * in);
  const auto alone =
      run_kernel(EdgeOp::Lstm, attrs, weights({OwnedTensor::of<float>(Shape{1, 1, in}, x1)}), 2);
  const auto y1 = alone[0].values<float>();  // [1, 2, 1, hs]
  for (int d = 0; d < 2; ++d)
    for (int j = 0; j < hs; ++j) {
      CHECK(y[(d * batch + 1) * hs + j] == Approx(y1[d * hs + j]));
      CHECK(yh[(d * batch + 1) * hs + j] == Approx(y1[d * hs + j]));
    }
  for (int t = 1; t < seq; ++t)  // padded steps are zero in both directions
    for (int d = 0; d < 2; ++d)
      for (int j = 0; j < hs; ++j) CHECK(y[((t * 2 + d) * batch + 1) * hs + j] == 0.0f);
}

TEST_CASE("lstm batch-first layout is the transposed sequence-first layout", "[rnn]") {
  const int seq = 4, batch = 2, in = 3, hs = 2;
  const auto x = pseudo_random(seq * batch * in, 9), w = pseudo_random(4 * hs * in, 10);
  const auto r = pseudo_random(4 * hs * hs, 11), p = pseudo_random(3 * hs, 12);
  std::vector<float> xt(x.size());
  for (int t = 0; t < seq; ++t)
    for (int b = 0; b < batch; ++b)
      for (int i = 0; i < in; ++i) xt[(b * seq + t) * in + i] = x[(t * batch + b) * in + i];
  auto run = [&](int64_t layout, Shape xs, const std::vector<float>& xv) {
    etc::ir::Attrs attrs{{"hidden_size", int64_t{hs}}, {"layout", layout}, {"clip", 0.5f}};
    return run_kernel(EdgeOp::Lstm, attrs,
                      {OwnedTensor::of<float>(xs, xv), OwnedTensor::of<float>(Shape{1, 4 * hs, in}, w),
                       OwnedTensor::of<float>(Shape{1, 4 * hs, hs}, r), OwnedTensor{}, OwnedTensor{},
                       OwnedTensor{}, OwnedTensor{}, OwnedTensor::of<float>(Shape{1, 3 * hs}, p)},
                      3);
  };
  const auto a = run(0, Shape{seq, batch, in}, x);
  const auto bf = run(1, Shape{batch, seq, in}, xt);
  const auto ya = a[0].values<float>(), yb = bf[0].values<float>();
  for (int t = 0; t < seq; ++t)
    for (int b = 0; b < batch; ++b)
      for (int j = 0; j < hs; ++j) CHECK(yb[(b * seq + t) * hs + j] == Approx(ya[(t * batch + b) * hs + j]));
  CHECK(a[2].values<float>() == bf[2].values<float>());  // Y_c [1, batch, hs] vs [batch, 1, hs]: same order
}
