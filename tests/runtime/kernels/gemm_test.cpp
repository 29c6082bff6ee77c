// The GEMM builds (baseline and AVX2 + FMA) against a naive product, for every
// transpose combination and the beta cases (0 overwrites garbage, 1 skips the
// scaling pass, others scale); and the fused clamp of the gemm and matmul ops.
#include <cmath>
#include <limits>
#include <vector>

#include "runtime/kernels/portable/gemm_isa.h"
#include "tests/runtime/kernels/conv_kernel_test_util.h"

namespace etc::test {
namespace {

using GemmFn = void (*)(bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*,
                        int64_t, float, float*, int64_t);

// C = alpha * op(A) op(B) + beta * C in double, with A [m,k] (or [k,m]) and B [k,n] (or [n,k]) dense.
std::vector<float> naive_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
                              const std::vector<float>& a, const std::vector<float>& b, float beta,
                              std::vector<float> c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0.0;
      for (int64_t p = 0; p < k; ++p)
        acc += static_cast<double>(ta ? a[p * m + i] : a[i * k + p]) * (tb ? b[j * k + p] : b[p * n + j]);
      const double prior = beta == 0.0f ? 0.0 : static_cast<double>(beta) * c[i * ldc + j];
      c[i * ldc + j] = static_cast<float>(alpha * acc + prior);
    }
  return c;
}

void check_build(GemmFn fn) {
  const int64_t shapes[][3] = {{1, 1, 1}, {7, 5, 3}, {33, 70, 129}, {64, 200, 48}, {5, 9, 0}};
  for (const auto& s : shapes) {
    const int64_t m = s[0], n = s[1], k = s[2], ldc = n + 3;
    const auto a = random_values<float>(m * k, 1), b = random_values<float>(k * n, 2);
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (float beta : {0.0f, 1.0f, 0.5f}) {
          std::vector<float> c = random_values<float>(m * ldc, 3);
          if (beta == 0.0f) std::fill(c.begin(), c.end(), std::numeric_limits<float>::quiet_NaN());
          const auto want = naive_gemm(ta, tb, m, n, k, 0.75f, a, b, beta, c, ldc);
          fn(ta, tb, m, n, k, 0.75f, a.data(), ta ? m : k, b.data(), tb ? k : n, beta, c.data(), ldc);
          INFO("m=" << m << " n=" << n << " k=" << k << " ta=" << ta << " tb=" << tb << " beta=" << beta);
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) REQUIRE(std::abs(c[i * ldc + j] - want[i * ldc + j]) <= 1e-4);
        }
  }
}

}  // namespace

TEST_CASE("gemm baseline build matches a naive product") { check_build(gemm_isa::gemm_f32_baseline); }

TEST_CASE("gemm AVX2 build matches a naive product when the CPU has AVX2 and FMA") {
  if (!gemm_isa::avx2_built() || !gemm_isa::avx2_supported()) {
    WARN("no AVX2 + FMA build or CPU: nothing to check");
    return;
  }
  check_build(gemm_isa::gemm_f32_avx2);
}

TEST_CASE("gemm and matmul apply a fused clamp after the product and C") {
  const auto av = random_values<float>(6 * 4, 4), bv = random_values<float>(4 * 5, 5);
  const auto cv = random_values<float>(5, 6);
  const HostTensor a = host_tensor(Shape{6, 4}, av), b = host_tensor(Shape{4, 5}, bv);
  const HostTensor c = host_tensor(Shape{5}, cv);
  const ir::Attrs plain{};
  const ir::Attrs clamped{{"clamp_min", -0.2f}, {"clamp_max", 0.4f}};
  for (EdgeOp op : {EdgeOp::Gemm, EdgeOp::MatMul}) {
    std::vector<const HostTensor*> in{&a, &b};
    if (op == EdgeOp::Gemm) in.push_back(&c);
    std::vector<float> want = run_kernel(op, plain, in)[0].values<float>();
    for (float& v : want) v = std::min(std::max(v, -0.2f), 0.4f);
    require_close(run_kernel(op, clamped, in)[0].values<float>(), want, 0.0);
  }
}

}  // namespace etc::test
