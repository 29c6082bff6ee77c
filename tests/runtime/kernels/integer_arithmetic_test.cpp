// Integer arithmetic of the portable binary kernels at the edges of the
// type: wrapping as numpy and ONNX Runtime do, never a trap (INT_MIN / -1
// raised SIGFPE) and never undefined behaviour.
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <vector>

#include "tests/runtime/kernels/conv_kernel_test_util.h"

namespace etc {
namespace {

template <typename T>
std::vector<T> binary(EdgeOp op, const std::vector<T>& a, const std::vector<T>& b, ir::Attrs attrs = {}) {
  const test::HostTensor ta = test::host_tensor<T>(Shape{static_cast<int64_t>(a.size())}, a);
  const test::HostTensor tb = test::host_tensor<T>(Shape{static_cast<int64_t>(b.size())}, b);
  return test::run_kernel(op, attrs, {&ta, &tb})[0].values<T>();
}

TEST_CASE("integer division and modulo by -1 and 0 never trap", "[kernels]") {
  constexpr int32_t kMin32 = std::numeric_limits<int32_t>::min();
  constexpr int64_t kMin64 = std::numeric_limits<int64_t>::min();
  CHECK(binary<int32_t>(EdgeOp::Div, {kMin32, 7, -7, 9}, {-1, 0, 2, -1}) ==
        std::vector<int32_t>{kMin32, 0, -3, -9});
  CHECK(binary<int64_t>(EdgeOp::Div, {kMin64, 5}, {-1, -1}) == std::vector<int64_t>{kMin64, -5});
  CHECK(binary<int32_t>(EdgeOp::Mod, {kMin32, 7, -7}, {-1, 0, 3}) == std::vector<int32_t>{0, 0, 2});
  ir::Attrs fmod;
  fmod.set("fmod", int64_t{1});
  CHECK(binary<int64_t>(EdgeOp::Mod, {kMin64, -7}, {-1, 3}, fmod) == std::vector<int64_t>{0, -1});
}

TEST_CASE("integer add, sub and mul wrap around", "[kernels]") {
  constexpr int64_t kMax64 = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin64 = std::numeric_limits<int64_t>::min();
  CHECK(binary<int64_t>(EdgeOp::Add, {kMax64}, {1}) == std::vector<int64_t>{kMin64});
  CHECK(binary<int64_t>(EdgeOp::Sub, {kMin64}, {1}) == std::vector<int64_t>{kMax64});
  CHECK(binary<int64_t>(EdgeOp::Mul, {kMax64}, {2}) == std::vector<int64_t>{-2});
  CHECK(binary<int32_t>(EdgeOp::Mul, {1 << 30}, {4}) == std::vector<int32_t>{0});
}

}  // namespace
}  // namespace etc
