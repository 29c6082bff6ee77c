// resolve_slice_bounds: ONNX Slice's clamping on one axis, for the import
// and the run-time kernel alike, with the extreme values ONNX models use to
// mean "to the end".
#include "runtime/kernels/portable/slice_bounds.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>

namespace etc {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

void check(int64_t dim, int64_t start, int64_t end, int64_t step, SliceBounds want) {
  const SliceBounds b = resolve_slice_bounds(dim, start, end, step);
  INFO("dim " << dim << " start " << start << " end " << end << " step " << step);
  CHECK(b.start == want.start);
  CHECK(b.end == want.end);
  CHECK(b.step == want.step);
}

TEST_CASE("slice bounds follow the ONNX spec, forward and backward", "[kernels]") {
  check(10, 2, 7, 1, {2, 7, 1});
  check(10, -3, -1, 1, {7, 9, 1});
  check(10, 0, 100, 2, {0, 10, 2});
  check(10, 9, -11, -1, {9, -1, -1});  // the whole axis reversed
  check(10, 100, 0, -2, {9, 0, -2});
  check(10, -100, 5, 1, {0, 5, 1});
}

TEST_CASE("slice bounds saturate the extremes without overflowing", "[kernels]") {
  check(10, 0, kMax, 1, {0, 10, 1});
  check(10, kMin, kMax, 1, {0, 10, 1});
  check(10, kMax, kMin, -1, {9, -1, -1});
  check(10, kMin, kMin, -1, {0, -1, -1});
  check(10, 0, 10, kMax, {0, 10, 11});  // one element, as with step 11
  check(10, 9, 0, kMin, {9, 0, -11});
  check(0, kMin, kMax, 1, {0, 0, 1});
}

}  // namespace
}  // namespace etc
