// NCHW <-> NHWC conversion at the XNNPACK partition boundary against a naive
// per-element reference, for sizes that leave partial tiles.
#include <catch2/catch.hpp>
#include <vector>

#include "runtime/backends/xnnpack/layout.h"

namespace etc {
namespace {

void check_layout(size_t n, size_t c, size_t h, size_t w) {
  const size_t hw = h * w, total = n * c * hw;
  std::vector<float> nchw(total);
  for (size_t i = 0; i < total; ++i) nchw[i] = static_cast<float>(i) * 0.5f - 3.0f;
  std::vector<float> want(total);
  for (size_t b = 0; b < n; ++b)
    for (size_t ch = 0; ch < c; ++ch)
      for (size_t p = 0; p < hw; ++p) want[(b * hw + p) * c + ch] = nchw[(b * c + ch) * hw + p];
  std::vector<float> nhwc(total, -1.0f);
  xnnpack::nchw_to_nhwc(nchw.data(), nhwc.data(), n, c, hw);
  CHECK(nhwc == want);
  std::vector<float> back(total, -1.0f);
  xnnpack::nhwc_to_nchw(nhwc.data(), back.data(), n, c, hw);
  CHECK(back == nchw);
}

TEST_CASE("xnnpack boundary layout conversion matches a naive transpose", "[xnnpack]") {
  check_layout(1, 3, 7, 5);
  check_layout(2, 17, 33, 1);
  check_layout(2, 17, 3, 11);
  check_layout(1, 64, 56, 56);
  check_layout(3, 1, 4, 4);
  check_layout(1, 5, 1, 1);
  check_layout(1, 4, 4, 4);
  check_layout(1, 33, 16, 1);
}

}  // namespace
}  // namespace etc
