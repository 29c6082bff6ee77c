// NCHW <-> NHWC conversion at the XNNPACK partition boundary against a naive
// per-element reference, for sizes that leave partial tiles, on each
// instruction set's path and split between threads.
#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <vector>

#include "runtime/backends/xnnpack/layout.h"
#include "runtime/backends/xnnpack/threadpool.h"
#include "tests/support/native_conv_fixtures.h"

namespace etc {
namespace {

using testing::native_conv::NativeIsaCap;

void check_layout(size_t n, size_t c, size_t h, size_t w, pthreadpool_t pool = nullptr) {
  const size_t hw = h * w, total = n * c * hw;
  std::vector<float> nchw(total);
  for (size_t i = 0; i < total; ++i) nchw[i] = static_cast<float>(i) * 0.5f - 3.0f;
  std::vector<float> want(total);
  for (size_t b = 0; b < n; ++b)
    for (size_t ch = 0; ch < c; ++ch)
      for (size_t p = 0; p < hw; ++p) want[(b * hw + p) * c + ch] = nchw[(b * c + ch) * hw + p];
  std::vector<float> nhwc(total, -1.0f);
  xnnpack::nchw_to_nhwc(nchw.data(), nhwc.data(), n, c, hw, pool);
  CHECK(nhwc == want);
  std::vector<float> back(total, -1.0f);
  xnnpack::nhwc_to_nchw(nhwc.data(), back.data(), n, c, hw, pool);
  CHECK(back == nchw);
}

// Each instruction set the blocks are written for (16x16 with AVX-512, 4x4
// tiles otherwise), on this CPU.
std::vector<xnnpack::NativeIsa> layout_isas() {
  std::vector<xnnpack::NativeIsa> isas{xnnpack::NativeIsa::kNone};
  if (xnnpack::native_isa() == xnnpack::NativeIsa::kAvx512) isas.push_back(xnnpack::NativeIsa::kAvx512);
  return isas;
}

TEST_CASE("xnnpack boundary layout conversion matches a naive transpose", "[xnnpack]") {
  const xnnpack::NativeIsa isa = GENERATE(from_range(layout_isas()));
  const NativeIsaCap cap(isa);
  INFO("instruction set " << static_cast<int>(isa));
  check_layout(1, 3, 7, 5);
  check_layout(2, 17, 33, 1);
  check_layout(2, 17, 3, 11);
  check_layout(1, 64, 56, 56);
  check_layout(3, 1, 4, 4);
  check_layout(1, 5, 1, 1);
  check_layout(1, 4, 4, 4);
  check_layout(1, 33, 16, 1);
  // 2 to 4 rows take the interleaving path: channels into NHWC, pixels back.
  check_layout(2, 2, 5, 3);
  check_layout(1, 3, 224, 224);
  check_layout(1, 17, 1, 3);
  // Planes a multiple of 4 KiB apart take the narrow tiles, on either side
  // and with ragged tile edges.
  check_layout(1, 21, 32, 32);
  check_layout(2, 9, 64, 16);
  check_layout(1, 70, 32, 64);
  check_layout(2, 9, 2, 2);
  // Whole 16x16 blocks with ragged edges on both sides, and 1024 channels
  // (rows 4 KiB apart on the NHWC side).
  check_layout(1, 35, 17, 3);
  check_layout(1, 1024, 14, 14);
}

TEST_CASE("xnnpack boundary layout conversion splits a large plane between threads", "[xnnpack]") {
  const xnnpack::NativeIsa isa = GENERATE(from_range(layout_isas()));
  const NativeIsaCap cap(isa);
  INFO("instruction set " << static_cast<int>(isa));
  auto pool = xnnpack::SharedThreadpool::acquire(3);
  REQUIRE(pool.ok());
  // Planes past the threshold, in parts of 64 x 256 with ragged last parts
  // on either side; a small one runs on the caller's thread.
  check_layout(1, 1024, 14, 14, pool->get());
  check_layout(2, 70, 33, 31, pool->get());
  check_layout(1, 300, 29, 7, pool->get());
  check_layout(1, 8, 5, 5, pool->get());
}

// A benchmark, not a test: the boundary conversion of a 64x56x56 activation.
// Run with: etc_unit_tests "[.xnnpack-bench]"
TEST_CASE("xnnpack boundary layout conversion timing", "[.xnnpack-bench]") {
  const size_t c = 64, hw = 56 * 56;
  std::vector<float> a(c * hw, 1.0f), b(c * hw);
  double best = 1e9;
  for (int i = 0; i < 50; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    xnnpack::nchw_to_nhwc(a.data(), b.data(), 1, c, hw);
    best = std::min(best,
                    std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  std::printf("nchw_to_nhwc 64x56x56: %.1f us (%.2f GB/s read+write)\n", best,
              2.0 * 4 * c * hw / (best * 1e3));
}

}  // namespace
}  // namespace etc
