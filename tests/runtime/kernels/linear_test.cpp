// matmul and gemm kernels on numpy batch broadcasting, 1-D promotion, the
// folded single-GEMM path and every broadcast form of gemm's C.
#include <cstdint>
#include <vector>

#include "tests/runtime/kernels/conv_kernel_test_util.h"

namespace etc::test {
namespace {

// Row-major [m, k] x [k, n] for one matrix pair.
std::vector<float> reference_mm(const float* a, const float* b, int64_t m, int64_t k, int64_t n) {
  std::vector<float> y(static_cast<size_t>(m * n), 0.0f);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t t = 0; t < k; ++t) y[i * n + j] += a[i * k + t] * b[t * n + j];
  return y;
}

TEST_CASE("matmul broadcasts batch dims of both operands") {
  // [2, 1, 3, 4] x [5, 4, 2] -> [2, 5, 3, 2]
  const auto av = random_values<float>(2 * 3 * 4, 1), bv = random_values<float>(5 * 4 * 2, 2);
  const HostTensor a = host_tensor(Shape{2, 1, 3, 4}, av), b = host_tensor(Shape{5, 4, 2}, bv);
  const auto y = run_kernel(EdgeOp::MatMul, {}, {&a, &b});
  REQUIRE(y[0].spec.shape == Shape{2, 5, 3, 2});
  std::vector<float> want;
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 5; ++j) {
      const auto mm = reference_mm(av.data() + i * 12, bv.data() + j * 8, 3, 4, 2);
      want.insert(want.end(), mm.begin(), mm.end());
    }
  require_close(y[0].values<float>(), want, 1e-5);
}

TEST_CASE("matmul promotes 1-D operands and drops the promoted dim") {
  const auto vv = random_values<float>(4, 3), mv = random_values<float>(2 * 4 * 3, 4);
  const HostTensor v = host_tensor(Shape{4}, vv), m = host_tensor(Shape{2, 4, 3}, mv);
  const auto y = run_kernel(EdgeOp::MatMul, {}, {&v, &m});
  REQUIRE(y[0].spec.shape == Shape{2, 3});
  std::vector<float> want = reference_mm(vv.data(), mv.data(), 1, 4, 3);
  const auto second = reference_mm(vv.data(), mv.data() + 12, 1, 4, 3);
  want.insert(want.end(), second.begin(), second.end());
  require_close(y[0].values<float>(), want, 1e-5);

  const auto m2 = random_values<float>(2 * 3 * 4, 5);
  const HostTensor lhs = host_tensor(Shape{2, 3, 4}, m2);
  const auto y2 = run_kernel(EdgeOp::MatMul, {}, {&lhs, &v});
  REQUIRE(y2[0].spec.shape == Shape{2, 3});
  require_close(y2[0].values<float>(), reference_mm(m2.data(), vv.data(), 6, 4, 1), 1e-5);
}

TEST_CASE("matmul with a shared right operand equals per-batch products") {
  const auto av = random_values<float>(3 * 2 * 5 * 6, 6), bv = random_values<float>(6 * 7, 7);
  const HostTensor a = host_tensor(Shape{3, 2, 5, 6}, av), b = host_tensor(Shape{1, 6, 7}, bv);
  const auto y = run_kernel(EdgeOp::MatMul, {}, {&a, &b});
  REQUIRE(y[0].spec.shape == Shape{3, 2, 5, 7});
  require_close(y[0].values<float>(), reference_mm(av.data(), bv.data(), 30, 6, 7), 1e-5);
}

TEST_CASE("gemm applies trans, alpha and beta with a column-broadcast C") {
  // A^T: A stored [k=2, m=3]; B^T: B stored [n=2, k=2]; C [m, 1].
  const HostTensor a = host_tensor(Shape{2, 3}, std::vector<float>{1, 2, 3, 4, 5, 6});
  const HostTensor b = host_tensor(Shape{2, 2}, std::vector<float>{1, 0, 1, 1});
  const HostTensor c = host_tensor(Shape{3, 1}, std::vector<float>{1, 2, 3});
  const ir::Attrs attrs{{"trans_a", int64_t{1}}, {"trans_b", int64_t{1}}, {"alpha", 2.0f}, {"beta", 0.5f}};
  // op(A) = [[1,4],[2,5],[3,6]], op(B) = [[1,1],[0,1]] -> A B = [[1,5],[2,7],[3,9]].
  const auto y = run_kernel(EdgeOp::Gemm, attrs, {&a, &b, &c});
  REQUIRE(y[0].values<float>() == std::vector<float>{2.5f, 10.5f, 5, 15, 7.5f, 19.5f});
  const auto no_c = run_kernel(EdgeOp::Gemm, attrs, {&a, &b, nullptr});
  REQUIRE(no_c[0].values<float>() == std::vector<float>{2, 10, 4, 14, 6, 18});
}

TEST_CASE("gemm infer rejects a C that does not broadcast to [M, N]") {
  const TensorSpec a{DType::Float32, Shape{3, 4}}, b{DType::Float32, Shape{4, 2}};
  REQUIRE_FALSE(infer_status(EdgeOp::Gemm, {}, {a, b, TensorSpec{DType::Float32, Shape{2, 3}}}).ok());
  REQUIRE(infer_status(EdgeOp::Gemm, {}, {a, b, TensorSpec{DType::Float32, Shape{3, 1}}}).ok());
  REQUIRE(infer_status(EdgeOp::Gemm, {}, {a, b, TensorSpec{DType::Float32, Shape{}}}).ok());
}

}  // namespace
}  // namespace etc::test
