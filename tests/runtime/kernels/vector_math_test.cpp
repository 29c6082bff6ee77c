// vector_math: each function against the C library in double precision, and
// the AVX-512 build against the baseline one, over lengths that leave every
// vector tail.
#include "runtime/kernels/portable/vector_math.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <vector>

using etc::VectorFn;

namespace {

struct Case {
  VectorFn fn;
  const char* name;
  std::function<double(double)> exact;
  float lo, hi;  // the inputs' range
};

std::vector<Case> cases() {
  const double pi = 3.14159265358979323846;
  return {
      {VectorFn::Tanh, "tanh", [](double x) { return std::tanh(x); }, -12, 12},
      {VectorFn::Sigmoid, "sigmoid", [](double x) { return 1 / (1 + std::exp(-x)); }, -30, 30},
      {VectorFn::Erf, "erf", [](double x) { return std::erf(x); }, -5, 5},
      {VectorFn::Exp, "exp", [](double x) { return std::exp(x); }, -20, 20},
      {VectorFn::Log, "log", [](double x) { return std::log(x); }, 1e-3f, 1e3f},
      {VectorFn::Gelu, "gelu", [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }, -8, 8},
      {VectorFn::GeluTanh, "gelu_tanh",
       [pi](double x) { return 0.5 * x * (1 + std::tanh(std::sqrt(2 / pi) * (x + 0.044715 * x * x * x))); },
       -8, 8},
      {VectorFn::Reciprocal, "reciprocal", [](double x) { return 1 / x; }, 0.01f, 100},
      {VectorFn::Softplus, "softplus", [](double x) { return std::log1p(std::exp(x)); }, -30, 30},
  };
}

}  // namespace

TEST_CASE("vector math agrees with double-precision functions in every build", "[vector_math]") {
  for (const Case& c : cases()) {
    for (int n : {1, 7, 16, 33, 1000}) {
      std::vector<float> x(static_cast<size_t>(n));
      for (int i = 0; i < n; ++i)
        x[i] = c.lo + (c.hi - c.lo) * static_cast<float>(i) / static_cast<float>(std::max(1, n - 1));
      std::vector<float> base(x.size()), wide(x.size()), dispatched(x.size());
      etc::vector_math_isa::run_baseline(c.fn, x.data(), base.data(), n);
      etc::vector_math(c.fn, x.data(), dispatched.data(), n);
      const bool avx512 = etc::vector_math_isa::avx512_usable();
      if (avx512) etc::vector_math_isa::run_avx512(c.fn, x.data(), wide.data(), n);
      for (int i = 0; i < n; ++i) {
        const double want = c.exact(x[i]);
        const double tolerance = 2e-6 * std::max(1.0, std::fabs(want));
        INFO(c.name << "(" << x[i] << ") n " << n);
        CHECK(std::fabs(base[i] - want) <= tolerance);
        CHECK(std::fabs(dispatched[i] - want) <= tolerance);
        if (avx512) CHECK(std::fabs(wide[i] - want) <= tolerance);
      }
    }
  }
}

TEST_CASE("vector math works in place", "[vector_math]") {
  const std::vector<float> in{-2.0f, -0.5f, 0.0f, 0.5f, 2.0f, 3.0f, -3.0f, 1.0f, 0.25f};
  std::vector<float> x = in;
  etc::vector_math(VectorFn::Tanh, x.data(), x.data(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < in.size(); ++i) CHECK(std::fabs(x[i] - std::tanh(double(in[i]))) <= 2e-6);
}
