// Softmax rows on vector code (native_rows.h): softmax and log-softmax
// of rows around the vector widths, in place or not, with large, tiny and
// -inf values, under AVX-512 and AVX2, against a double-precision
// reference; XNNPACK's Softmax nodes run natively by default and on XNNPACK
// under native_convolution=off, both close to the reference.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "runtime/backends/xnnpack/blob_reader.h"
#include "runtime/backends/xnnpack/native_rows.h"
#include "runtime/backends/xnnpack/stages.h"
#include "tests/support/native_conv_fixtures.h"
#include "tests/support/random.h"
#include "tests/support/xnnpack_blob_builder.h"

namespace etc {
namespace {

using namespace testing::native_conv;
using testing::XnnpackBlobBuilder;

std::vector<float> reference(const std::vector<float>& x, size_t n, bool log) {
  std::vector<float> y(x.size());
  for (size_t r = 0; r < x.size() / n; ++r) {
    double max = -INFINITY, sum = 0;
    for (size_t i = 0; i < n; ++i) max = std::max(max, double(x[r * n + i]));
    for (size_t i = 0; i < n; ++i) sum += std::exp(double(x[r * n + i]) - max);
    for (size_t i = 0; i < n; ++i) {
      const double v = double(x[r * n + i]) - max;
      y[r * n + i] = static_cast<float>(log ? v - std::log(sum) : std::exp(v) / sum);
    }
  }
  return y;
}

// Elements off the reference by more than 1e-5 relative; equal infinities
// (log-softmax of -inf) and NaN against NaN (a row of -inf alone) match.
size_t count_off(const std::vector<float>& got, const std::vector<float>& want) {
  size_t off = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const bool same = got[i] == want[i] || (std::isnan(got[i]) && std::isnan(want[i])) ||
                      std::abs(double(got[i]) - double(want[i])) <= 1e-5 * (1.0 + std::abs(double(want[i])));
    if (!same && off++ < 3) UNSCOPED_INFO("element " << i << ": got " << got[i] << ", want " << want[i]);
  }
  return off;
}

// Bit-identical, NaN matching NaN.
size_t count_unequal(const std::vector<float>& a, const std::vector<float>& b) {
  size_t differ = 0;
  for (size_t i = 0; i < a.size(); ++i) differ += !(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i])));
  return differ;
}

TEST_CASE("xnnpack native softmax rows equal the reference", "[xnnpack]") {
  REQUIRE(xnnpack::native_convolution_available());
  const xnnpack::NativeIsa isa = GENERATE(from_range(native_isas()));
  INFO(isa_name(isa));
  const NativeIsaCap cap(isa);
  std::mt19937 rng(800);
  for (size_t n : {1, 5, 8, 15, 16, 17, 64, 100, 128, 1000}) {
    for (bool log : {false, true}) {
      INFO("n " << n << (log ? " log-softmax" : " softmax"));
      std::vector<float> x = testing::random_floats(3 * n, rng, -8.0f, 8.0f);
      x[0] = 80.0f;                  // exp would overflow without the maximum taken out
      x[n] = -INFINITY;              // contributes nothing
      if (n > 1) x[2 * n] = -90.0f;  // underflows to 0
      const std::vector<float> want = reference(x, n, log);
      std::vector<float> y(x.size(), -1.0f);
      for (size_t r = 0; r < 3; ++r) xnnpack::softmax_row(x.data() + r * n, y.data() + r * n, n, log);
      CHECK(count_off(y, want) == 0);
      std::vector<float> in_place = x;
      for (size_t r = 0; r < 3; ++r)
        xnnpack::softmax_row(in_place.data() + r * n, in_place.data() + r * n, n, log);
      CHECK(count_unequal(in_place, y) == 0);
    }
  }
}

TEST_CASE("xnnpack native layer norm rows equal the reference", "[xnnpack]") {
  REQUIRE(xnnpack::native_convolution_available());
  const xnnpack::NativeIsa isa = GENERATE(from_range(native_isas()));
  INFO(isa_name(isa));
  const NativeIsaCap cap(isa);
  std::mt19937 rng(802);
  for (size_t n : {1, 7, 8, 16, 17, 100, 256, 768}) {
    for (bool with_bias : {false, true}) {
      INFO("n " << n << (with_bias ? " with bias" : ""));
      // Rows far from zero: the variance is of x - mean, not of x.
      std::vector<float> x = testing::random_floats(2 * n, rng, 99.0f, 101.0f);
      const std::vector<float> scale = testing::random_floats(n, rng, 0.5f, 2.0f);
      const std::vector<float> bias = testing::random_floats(n, rng);
      const float epsilon = 1e-5f;
      std::vector<float> want(x.size());
      for (size_t r = 0; r < 2; ++r) {
        double mean = 0, var = 0;
        for (size_t i = 0; i < n; ++i) mean += x[r * n + i];
        mean /= double(n);
        for (size_t i = 0; i < n; ++i) var += (x[r * n + i] - mean) * (x[r * n + i] - mean);
        var /= double(n);
        for (size_t i = 0; i < n; ++i)
          want[r * n + i] = static_cast<float>((x[r * n + i] - mean) / std::sqrt(var + epsilon) * scale[i] +
                                               (with_bias ? bias[i] : 0.0));
      }
      std::vector<float> y(x.size(), -1.0f);
      for (size_t r = 0; r < 2; ++r)
        xnnpack::layer_norm_row(x.data() + r * n, y.data() + r * n, n, scale.data(),
                                with_bias ? bias.data() : nullptr, epsilon);
      CHECK(count_far(y, want, 1e-4) == 0);
      for (size_t r = 0; r < 2; ++r)
        xnnpack::layer_norm_row(x.data() + r * n, x.data() + r * n, n, scale.data(),
                                with_bias ? bias.data() : nullptr, epsilon);
      CHECK(count_different(x, y) == 0);
    }
  }
}

TEST_CASE("xnnpack Softmax nodes run natively unless native_convolution=off", "[xnnpack]") {
  REQUIRE(xnnpack::native_convolution_available());
  const uint64_t rows = 24, n = 37;
  XnnpackBlobBuilder b;
  const uint32_t x = b.input({2, rows / 2, n}, 0), y = b.output({2, rows / 2, n}, 0);
  b.node(NodeType::Softmax, {x}, {y});
  const std::vector<uint8_t> blob = b.build();
  auto view = xnnpack::read_xnnpack_blob(blob.data(), blob.size());
  REQUIRE(view.ok());
  CHECK(xnnpack::plan_stages(view.get(), xnnpack::NativeConvolutions::kAuto).stages[0].native);
  CHECK_FALSE(xnnpack::plan_stages(view.get(), xnnpack::NativeConvolutions::kOff).stages[0].native);
  std::mt19937 rng(801);
  const std::vector<float> in = testing::random_floats(rows * n, rng, -4.0f, 4.0f);
  const std::vector<float> want = reference(in, n, false);
  for (const std::vector<Spec>& specs : {std::vector<Spec>{}, kOff}) {
    for (int threads : {1, 2}) {
      INFO((specs.empty() ? "auto" : "off") << ", " << threads << " threads");
      SpecRunner runner(threads);
      REQUIRE(runner.init(blob, specs).ok());
      std::vector<float> a = in, out(rows * n, -1.0f);
      const Shape shape{2, static_cast<int64_t>(rows / 2), static_cast<int64_t>(n)};
      REQUIRE(runner.execute({{shape, a.data()}, {shape, out.data()}}).ok());
      CHECK(count_far(out, want, 1e-5) == 0);
    }
  }
}

}  // namespace
}  // namespace etc
