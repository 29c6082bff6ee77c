// The native epilogues' swish (swish.h swish_ps), AVX2 and AVX-512: within 1e-6 relative of a
// double-precision x / (1 + exp(-x)) over the whole float range it meets
// (with an absolute floor where the result underflows), and swish of +inf,
// -inf and NaN as x * sigmoid(x) gives them.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "runtime/backends/xnnpack/native_isa.h"
#include "runtime/backends/xnnpack/swish.h"

namespace etc {
namespace {

#if defined(__x86_64__)
__attribute__((target("avx512f"))) std::vector<float> swish_avx512(const std::vector<float>& x) {
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); i += 16)
    _mm512_storeu_ps(&y[i], xnnpack::swish_ps(_mm512_loadu_ps(&x[i])));
  return y;
}

__attribute__((target("avx2,fma"))) std::vector<float> swish_avx2(const std::vector<float>& x) {
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); i += 8) _mm256_storeu_ps(&y[i], xnnpack::swish_ps(_mm256_loadu_ps(&x[i])));
  return y;
}

void check_swish(std::vector<float> (*swish)(const std::vector<float>&)) {
  std::vector<float> x;
  for (double v = -120.0; v <= 120.0; v += 0.0173) x.push_back(static_cast<float>(v));
  for (float v :
       {-1e30f, -1000.0f, -89.5f, -88.0f, -87.5f, -87.0f, -1e-30f, 0.0f, 1e-30f, 87.0f, 89.5f, 1e30f})
    x.push_back(v);
  while (x.size() % 16 != 0) x.push_back(1.0f);
  const std::vector<float> y = swish(x);
  size_t far = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = double(x[i]) / (1.0 + std::exp(-double(x[i])));
    if (!(std::abs(double(y[i]) - want) <= 1e-6 * std::abs(want) + 1e-30)) {
      if (far < 3) UNSCOPED_INFO("swish(" << x[i] << ") = " << y[i] << ", want " << want);
      ++far;
    }
  }
  CHECK(far == 0);

  constexpr float kInf = std::numeric_limits<float>::infinity();
  std::vector<float> special(16, 1.0f);
  special[0] = kInf, special[1] = -kInf, special[2] = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> s = swish(special);
  CHECK(s[0] == kInf);
  CHECK(std::isnan(s[1]));
  CHECK(std::isnan(s[2]));
}

// Each version this CPU runs: AVX2 on every CPU with a native kernel, AVX-512 where it has it.
TEST_CASE("xnnpack native swish is accurate over the float range and keeps inf and NaN", "[xnnpack]") {
  REQUIRE(xnnpack::native_convolution_available());
  SECTION("AVX2") { check_swish(swish_avx2); }
  if (xnnpack::native_avx512_available()) {
    SECTION("AVX-512") { check_swish(swish_avx512); }
  }
}
#endif

}  // namespace
}  // namespace etc
