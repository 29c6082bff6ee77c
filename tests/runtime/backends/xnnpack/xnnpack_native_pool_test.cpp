// The XNNPACK backend's own max pooling (native_pool.h): windows with
// padding, strides, dilation and clamps, channel counts around the vector
// widths, batches, under AVX-512 and AVX2, at 1 and 2 threads, each equal
// element for element to a plain reference loop and to XNNPACK's pooling
// (native_convolution=off). Which mode takes the node natively.
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "runtime/backends/xnnpack/blob_reader.h"
#include "runtime/backends/xnnpack/native_isa.h"
#include "runtime/backends/xnnpack/native_pool.h"
#include "runtime/backends/xnnpack/stages.h"
#include "tests/support/native_conv_fixtures.h"
#include "tests/support/random.h"
#include "tests/support/xnnpack_blob_builder.h"

namespace etc {
namespace {

using namespace testing::native_conv;
using testing::XnnpackBlobBuilder;

struct Pool {
  uint64_t n = 1, h = 8, w = 8, c = 16;
  uint32_t kh = 3, kw = 3, sh = 1, sw = 1, dh = 1, dw = 1;
  std::array<uint32_t, 4> pad = {0, 0, 0, 0};  // top, right, bottom, left
  float lo = -kInf, hi = kInf;
  uint64_t oh() const { return (h + pad[0] + pad[2] - (uint64_t{kh} - 1) * dh - 1) / sh + 1; }
  uint64_t ow() const { return (w + pad[1] + pad[3] - (uint64_t{kw} - 1) * dw - 1) / sw + 1; }
};

std::vector<uint8_t> pool_blob(const Pool& p) {
  XnnpackBlobBuilder b;
  const uint32_t x = b.input({p.n, p.h, p.w, p.c}, 0);
  const uint32_t y = b.output({p.n, p.oh(), p.ow(), p.c}, 0);
  auto& node = b.node(NodeType::MaxPooling2d, {x}, {y});
  node.kernel = {p.kh, p.kw};
  node.stride = {p.sh, p.sw};
  node.dilation = {p.dh, p.dw};
  node.padding = {p.pad[0], p.pad[1], p.pad[2], p.pad[3]};
  node.output_min = p.lo;
  node.output_max = p.hi;
  return b.build();
}

// The maximum over each window's taps inside the input, clamped.
std::vector<float> reference(const Pool& p, const std::vector<float>& x) {
  std::vector<float> y(p.n * p.oh() * p.ow() * p.c);
  for (uint64_t n = 0; n < p.n; ++n)
    for (uint64_t oy = 0; oy < p.oh(); ++oy)
      for (uint64_t ox = 0; ox < p.ow(); ++ox)
        for (uint64_t c = 0; c < p.c; ++c) {
          float m = -kInf;
          for (uint64_t i = 0; i < p.kh; ++i)
            for (uint64_t j = 0; j < p.kw; ++j) {
              const int64_t iy = static_cast<int64_t>(oy * p.sh + i * p.dh) - p.pad[0];
              const int64_t ix = static_cast<int64_t>(ox * p.sw + j * p.dw) - p.pad[3];
              if (iy < 0 || ix < 0 || iy >= static_cast<int64_t>(p.h) || ix >= static_cast<int64_t>(p.w))
                continue;
              m = std::max(
                  m, x[((n * p.h + static_cast<uint64_t>(iy)) * p.w + static_cast<uint64_t>(ix)) * p.c + c]);
            }
          y[((n * p.oh() + oy) * p.ow() + ox) * p.c + c] = std::min(std::max(m, p.lo), p.hi);
        }
  return y;
}

std::vector<float> run_pool(const Pool& p, const std::vector<float>& x, const std::vector<Spec>& specs,
                            int threads) {
  SpecRunner runner(threads);
  const Status s = runner.init(pool_blob(p), specs);
  INFO(s.message());
  REQUIRE(s.ok());
  std::vector<float> in = x, y(p.n * p.oh() * p.ow() * p.c, -12345.0f);
  const Status e = runner.execute(
      {{shape_of({p.n, p.h, p.w, p.c}), in.data()}, {shape_of({p.n, p.oh(), p.ow(), p.c}), y.data()}});
  INFO(e.message());
  REQUIRE(e.ok());
  return y;
}

bool stage_native(const Pool& p, xnnpack::NativeConvolutions mode) {
  const std::vector<uint8_t> blob = pool_blob(p);
  auto view = xnnpack::read_xnnpack_blob(blob.data(), blob.size());
  REQUIRE(view.ok());
  const xnnpack::StagePlan plan = xnnpack::plan_stages(view.get(), mode);
  REQUIRE(plan.stages.size() == 1);
  return plan.stages[0].native;
}

TEST_CASE("xnnpack native max pooling equals the reference and XNNPACK's pooling", "[xnnpack]") {
  REQUIRE(xnnpack::native_convolution_available());
  const std::vector<Pool> pools = {
      // resnet's stem pooling: 3x3, stride 2, padding 1.
      {.h = 28, .w = 28, .c = 64, .sh = 2, .sw = 2, .pad = {1, 1, 1, 1}},
      // An inception branch: 3x3, stride 1, padding 1, channels past 64.
      {.h = 9, .w = 11, .c = 67, .pad = {1, 1, 1, 1}},
      // 2x2, stride 2; a ceil-mode window over the bottom and right edges.
      {.h = 7, .w = 9, .c = 17, .kh = 2, .kw = 2, .sh = 2, .sw = 2, .pad = {0, 1, 1, 0}},
      // SPP's 5x5 at stride 1, two images, a clamp.
      {.n = 2, .h = 6, .w = 5, .c = 33, .kh = 5, .kw = 5, .pad = {2, 2, 2, 2}, .lo = 0.0f, .hi = 0.5f},
      // Dilated, rectangular, one channel; a window wider than the input.
      {.h = 10, .w = 4, .c = 1, .kh = 3, .kw = 5, .sh = 2, .sw = 1, .dh = 2, .dw = 1, .pad = {2, 1, 2, 1}},
      // Channels below a vector, with AVX-512 and AVX2 tails.
      {.h = 5, .w = 5, .c = 5, .kh = 2, .kw = 3, .pad = {0, 1, 1, 1}, .lo = -0.25f, .hi = 6.0f},
      {.h = 4, .w = 6, .c = 100, .sh = 1, .sw = 2}};
  const xnnpack::NativeIsa isa = GENERATE(from_range(native_isas()));
  INFO(isa_name(isa));
  const NativeIsaCap cap(isa);
  for (size_t k = 0; k < pools.size(); ++k) {
    INFO("pool " << k);
    const Pool& p = pools[k];
    CHECK(stage_native(p, xnnpack::NativeConvolutions::kAuto));
    CHECK_FALSE(stage_native(p, xnnpack::NativeConvolutions::kOff));
    std::mt19937 rng(static_cast<uint32_t>(500 + k));
    const std::vector<float> x = testing::random_floats(p.n * p.h * p.w * p.c, rng);
    const std::vector<float> want = reference(p, x);
    for (int threads : {1, 2}) {
      INFO(threads << " threads");
      CHECK(count_different(run_pool(p, x, {}, threads), want) == 0);
      CHECK(count_different(run_pool(p, x, kOff, threads), want) == 0);
    }
  }
}

TEST_CASE("xnnpack max pooling with TensorFlow SAME padding stays on XNNPACK", "[xnnpack]") {
  XnnpackBlobBuilder b;
  const uint32_t x = b.input({1, 5, 5, 8}, 0);
  const uint32_t y = b.output({1, 3, 3, 8}, 0);
  auto& node = b.node(NodeType::MaxPooling2d, {x}, {y});
  node.kernel = {3, 3};
  node.stride = {2, 2};
  node.flags = XNN_FLAG_TENSORFLOW_SAME_PADDING;
  const std::vector<uint8_t> blob = b.build();
  auto view = xnnpack::read_xnnpack_blob(blob.data(), blob.size());
  REQUIRE(view.ok());
  CHECK_FALSE(xnnpack::max_pool_can_run_natively(*view.get().graph->nodes()->Get(0)));
  CHECK_FALSE(xnnpack::plan_stages(view.get(), xnnpack::NativeConvolutions::kAll).stages[0].native);
}

}  // namespace
}  // namespace etc
