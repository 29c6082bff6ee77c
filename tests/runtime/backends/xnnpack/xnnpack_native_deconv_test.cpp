// A Deconvolution2d whose kernel equals its stride, unpadded (a feature
// pyramid's or segmentation head's upsampling), runs on the backend's own
// kernel (native_conv.h deconv_runs_natively): one GEMM per tap position
// stored straight into that position's pixels (or, where taps times
// channels fit one panel, one GEMM for all taps). Against a double-precision
// reference and XNNPACK alone, over output channel counts (one, a partial
// panel, two panels, all taps in one panel), kernels, images, clamps and thread counts; other
// deconvolutions stay on XNNPACK.
#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "runtime/backends/xnnpack/blob_reader.h"
#include "runtime/backends/xnnpack/native_isa.h"
#include "runtime/backends/xnnpack/stages.h"
#include "tests/support/native_conv_fixtures.h"
#include "tests/support/random.h"
#include "tests/support/xnnpack_blob_builder.h"

namespace etc {
namespace {

using namespace testing::native_conv;
using testing::XnnpackBlobBuilder;
using xnnpack::fb::NodeType;

struct Deconv {
  uint64_t n, h, w, c, m;  // input [n, h, w, c], m output channels
  uint32_t k;              // kernel k x k
  uint32_t s;              // stride s x s
  uint32_t pad = 0;
  float lo = -kInf, hi = kInf;

  uint64_t oh() const { return (h - 1) * s + k - 2 * pad; }
  uint64_t ow() const { return (w - 1) * s + k - 2 * pad; }
};

struct DeconvData {
  std::vector<float> x, filter, bias;  // filter [m][k][k][c]
};

std::vector<uint8_t> deconv_blob(const Deconv& q, const DeconvData& d) {
  XnnpackBlobBuilder b;
  const uint32_t x = b.input({q.n, q.h, q.w, q.c}, 0);
  const uint32_t y = b.output({q.n, q.oh(), q.ow(), q.m}, 0);
  auto& node = b.node(NodeType::Deconvolution2d,
                      {x, b.constant({q.m, q.k, q.k, q.c}, d.filter), b.constant({q.m}, d.bias)}, {y});
  node.kernel = {q.k, q.k};
  node.stride = {q.s, q.s};
  node.padding = {q.pad, q.pad, q.pad, q.pad};
  node.adjustment = {0, 0};
  node.dilation = {1, 1};
  node.groups = 1;
  node.group_input_channels = q.c;
  node.group_output_channels = q.m;
  node.output_min = q.lo;
  node.output_max = q.hi;
  return b.build();
}

std::vector<float> deconv_reference(const Deconv& q, const DeconvData& d) {
  const uint64_t oh = q.oh(), ow = q.ow();
  std::vector<double> acc(q.n * oh * ow * q.m, 0.0);
  for (uint64_t b = 0; b < q.n; ++b)
    for (uint64_t i = 0; i < q.h; ++i)
      for (uint64_t j = 0; j < q.w; ++j)
        for (uint64_t u = 0; u < q.k; ++u)
          for (uint64_t v = 0; v < q.k; ++v) {
            const int64_t oy = int64_t(i * q.s + u) - q.pad, ox = int64_t(j * q.s + v) - q.pad;
            if (oy < 0 || ox < 0 || oy >= int64_t(oh) || ox >= int64_t(ow)) continue;
            for (uint64_t o = 0; o < q.m; ++o)
              for (uint64_t c = 0; c < q.c; ++c)
                acc[((b * oh + uint64_t(oy)) * ow + uint64_t(ox)) * q.m + o] +=
                    double(d.x[((b * q.h + i) * q.w + j) * q.c + c]) *
                    double(d.filter[((o * q.k + u) * q.k + v) * q.c + c]);
          }
  std::vector<float> y(acc.size());
  for (size_t p = 0; p < acc.size(); ++p) {
    const float r = static_cast<float>(acc[p] + d.bias[p % q.m]);
    y[p] = r < q.lo ? q.lo : (r > q.hi ? q.hi : r);
  }
  return y;
}

bool first_stage_native(const std::vector<uint8_t>& blob, xnnpack::NativeConvolutions mode) {
  auto view = xnnpack::read_xnnpack_blob(blob.data(), blob.size());
  REQUIRE(view.ok());
  return xnnpack::plan_stages(view.get(), mode).stages.at(0).native;
}

TEST_CASE("xnnpack runs a deconvolution whose kernel is its stride on the native kernel", "[xnnpack]") {
  REQUIRE(xnnpack::native_convolution_available());
  for (const Deconv& q : {Deconv{1, 9, 13, 24, 24, 2, 2}, Deconv{2, 7, 5, 24, 1, 2, 2},
                          Deconv{1, 6, 17, 16, 40, 2, 2, 0, 0.0f, 6.0f}, Deconv{1, 4, 5, 8, 20, 3, 3},
                          Deconv{1, 5, 14, 12, 8, 2, 2, 0, -0.5f, 0.5f}}) {
    INFO(q.n << "x" << q.h << "x" << q.w << "x" << q.c << " -> " << q.m << ", k " << q.k);
    std::mt19937 rng(91);
    DeconvData d{testing::random_floats(q.n * q.h * q.w * q.c, rng),
                 testing::random_floats(q.m * q.k * q.k * q.c, rng), testing::random_floats(q.m, rng)};
    const std::vector<uint8_t> blob = deconv_blob(q, d);
    CHECK(first_stage_native(blob, xnnpack::NativeConvolutions::kAuto));
    CHECK(!first_stage_native(blob, xnnpack::NativeConvolutions::kOff));
    const std::vector<float> want = deconv_reference(q, d);
    for (const auto& [specs, threads] :
         std::vector<std::pair<std::vector<Spec>, int>>{{kAuto, 1}, {kAuto, 2}, {kAuto, 3}, {kOff, 1}}) {
      INFO(specs[0].second << ", " << threads << " threads");
      SpecRunner runner(threads);
      REQUIRE(runner.init(blob, specs).ok());
      for (int run = 0; run < 2; ++run) {
        std::vector<float> x = d.x, y(want.size(), -7.0f);
        REQUIRE(runner
                    .execute({{shape_of({q.n, q.h, q.w, q.c}), x.data()},
                              {shape_of({q.n, q.oh(), q.ow(), q.m}), y.data()}})
                    .ok());
        CHECK(count_far(y, want, 1e-5) == 0);
      }
    }
  }
}

TEST_CASE("xnnpack keeps other deconvolutions on XNNPACK", "[xnnpack]") {
  std::mt19937 rng(92);
  for (const Deconv& q : {Deconv{1, 6, 6, 8, 8, 3, 2}, Deconv{1, 6, 6, 8, 8, 4, 2, 1}}) {
    DeconvData d{testing::random_floats(q.n * q.h * q.w * q.c, rng),
                 testing::random_floats(q.m * q.k * q.k * q.c, rng), testing::random_floats(q.m, rng)};
    CHECK(!first_stage_native(deconv_blob(q, d), xnnpack::NativeConvolutions::kAuto));
  }
}

}  // namespace
}  // namespace etc
