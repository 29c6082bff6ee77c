// Long float32 reductions against a double-precision sum: 25,600 values near
// 199 (PP-OCRv4's 160x160 global average pool, where a float running total
// drifts by ~4e-6 relative) through reduce_mean over contiguous and strided
// axes, a global average pool and a softmax. The bound each check uses is
// well below what the float running total reaches on the same data (the
// check on `naive` shows it), so the old accumulation would fail.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "tests/runtime/kernels/reduce_kernel_test_util.h"

namespace etc {
namespace {

using testing::host;
using testing::run_kernel;

constexpr int64_t kPixels = 25600;  // 160 x 160

std::vector<float> values_near_199(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> noise(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = 199.0f + noise(rng);
  return v;
}

double exact_mean(const std::vector<float>& v, size_t first, size_t count, size_t stride) {
  double sum = 0;
  for (size_t i = 0; i < count; ++i) sum += v[first + i * stride];
  return sum / static_cast<double>(count);
}

float naive_mean(const std::vector<float>& v, size_t first, size_t count, size_t stride) {
  float sum = 0;
  for (size_t i = 0; i < count; ++i) sum += v[first + i * stride];
  return sum / static_cast<float>(count);
}

// |got - exact| / exact within about the final rounding to float; returns
// what a float running total's error would be.
double check_accurate(float got, double exact, float naive) {
  const double error = std::fabs(got - exact) / exact, naive_error = std::fabs(naive - exact) / exact;
  INFO("relative error " << error << ", a float running total's " << naive_error);
  CHECK(error <= 1e-7);
  return naive_error;
}

constexpr int64_t kRows = 8;

TEST_CASE("reduce_mean over 25,600 values matches a double sum, contiguous and strided",
          "[reduce][accuracy]") {
  const std::vector<float> x = values_near_199(kRows * kPixels, 5);
  double naive = 0;
  // [8, 25600]: contiguous rows.
  const auto rows =
      run_kernel(EdgeOp::ReduceMean, {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{0}}},
                 {host<float>(Shape{kRows, kPixels}, x)}, 1)[0]
          .values<float>();
  for (size_t r = 0; r < kRows; ++r)
    naive = std::max(naive, check_accurate(rows[r], exact_mean(x, r * kPixels, kPixels, 1),
                                           naive_mean(x, r * kPixels, kPixels, 1)));
  // [25600, 8]: the reduced axis is the outer one.
  const auto cols =
      run_kernel(EdgeOp::ReduceMean, {{"axes", std::vector<int64_t>{0}}, {"keepdims", int64_t{0}}},
                 {host<float>(Shape{kPixels, kRows}, x)}, 1)[0]
          .values<float>();
  for (size_t c = 0; c < kRows; ++c)
    naive = std::max(
        naive, check_accurate(cols[c], exact_mean(x, c, kPixels, kRows), naive_mean(x, c, kPixels, kRows)));
  CHECK(naive > 1e-6);  // a float running total misses the bound on this data
}

TEST_CASE("a 160x160 global average pool matches a double sum", "[pool][accuracy]") {
  const std::vector<float> x = values_near_199(kRows * kPixels, 6);
  const ir::Attrs attrs{{"kernel_shape", std::vector<int64_t>{160, 160}},
                        {"strides", std::vector<int64_t>{1, 1}},
                        {"pads", std::vector<int64_t>{0, 0, 0, 0}},
                        {"dilations", std::vector<int64_t>{1, 1}},
                        {"ceil_mode", int64_t{0}},
                        {"count_include_pad", int64_t{0}}};
  const auto got =
      run_kernel(EdgeOp::AvgPool, attrs, {host<float>(Shape{1, kRows, 160, 160}, x)}, 1)[0].values<float>();
  double naive = 0;
  for (size_t c = 0; c < kRows; ++c)
    naive = std::max(naive, check_accurate(got[c], exact_mean(x, c * kPixels, kPixels, 1),
                                           naive_mean(x, c * kPixels, kPixels, 1)));
  CHECK(naive > 1e-6);
}

TEST_CASE("softmax over 25,600 values sums to one as a double sum does", "[softmax][accuracy]") {
  std::vector<float> x = values_near_199(kPixels, 7);
  for (float& v : x) v = (v - 199.0f) * 0.001f;  // nearly equal: every term ~1/25600
  for (int64_t axis : {1, 0}) {
    const Shape shape = axis == 1 ? Shape{1, kPixels} : Shape{kPixels, 1};
    const auto y =
        run_kernel(EdgeOp::Softmax, {{"axis", axis}, {"flatten", int64_t{0}}}, {host<float>(shape, x)}, 1)[0]
            .values<float>();
    // Against exp(x_i - max) / sum_j exp(x_j - max) in double.
    double m = x[0], sum = 0;
    for (float v : x) m = std::max<double>(m, v);
    for (float v : x) sum += std::exp(static_cast<double>(v) - m);
    double worst = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double want = std::exp(static_cast<double>(x[i]) - m) / sum;
      worst = std::max(worst, std::fabs(y[i] - want) / want);
    }
    INFO("axis " << axis << ": worst relative error " << worst);
    CHECK(worst <= 5e-7);
  }
}

}  // namespace
}  // namespace etc
