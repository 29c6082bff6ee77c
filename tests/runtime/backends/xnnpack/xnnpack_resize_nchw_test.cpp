// A bilinear resize that produces a delegate output in NCHW runs natively
// and writes the argument's layout itself (stages.h resize_into_arguments):
// checked against the resize computed here in double, in each coordinate
// mode, and against the XNNPACK path it replaces.
#include <xnnpack.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <vector>

#include "runtime/backend/context.h"
#include "runtime/backends/xnnpack/native_isa.h"
#include "runtime/backends/xnnpack/profiling_metadata.h"
#include "tests/support/xnnpack_blob_builder.h"

namespace etc {
namespace {

using testing::XnnpackArg;
using testing::XnnpackBlobBuilder;
using testing::XnnpackRunner;
using testing::zeros;
using xnnpack::fb::BoundaryLayout;
using xnnpack::fb::NodeType;

class StageTracer : public EventTracer {
 public:
  EventTracerEntry start_profiling_delegate(std::string_view name, int64_t id) override {
    return EventTracerEntry{0, event_tracer_now(), id, name};
  }
  void end_profiling_delegate(const EventTracerEntry& entry, const void* metadata, size_t len) override {
    const auto m = xnnpack::decode_stage_metadata(static_cast<const uint8_t*>(metadata), len);
    REQUIRE(m.has_value());
    runs_on[entry.delegate_debug_id] = m->runs_on;
  }
  void log_profiling_delegate(std::string_view, int64_t, uint64_t, uint64_t, const void*, size_t) override {}
  void log_output_delegate(std::string_view, int64_t, const Tensor&) override {}
  std::map<int64_t, xnnpack::StageRunsOn> runs_on;
};

struct Case {
  size_t n, c, in_h, in_w, out_h, out_w;
  uint32_t flags;  // 0 (half-pixel centres), XNN_FLAG_ALIGN_CORNERS or XNN_FLAG_TENSORFLOW_LEGACY_MODE
};

// Source coordinate and the two taps along one axis, as ONNX Resize (linear) samples.
void taps(const Case& k, size_t in, size_t out, size_t x, size_t& i0, size_t& i1, double& w1) {
  double s;
  if (k.flags & XNN_FLAG_ALIGN_CORNERS)
    s = out > 1 ? static_cast<double>(x) * static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0;
  else if (k.flags & XNN_FLAG_TENSORFLOW_LEGACY_MODE)
    s = static_cast<double>(x) * static_cast<double>(in) / static_cast<double>(out);
  else
    s = (static_cast<double>(x) + 0.5) * static_cast<double>(in) / static_cast<double>(out) - 0.5;
  s = std::min(std::max(s, 0.0), static_cast<double>(in - 1));
  i0 = static_cast<size_t>(std::floor(s));
  i1 = std::min(i0 + 1, in - 1);
  w1 = s - static_cast<double>(i0);
}

// NHWC input, NCHW expected output.
std::vector<float> reference(const Case& k, const std::vector<float>& x) {
  std::vector<float> y(k.n * k.c * k.out_h * k.out_w);
  for (size_t b = 0; b < k.n; ++b)
    for (size_t ch = 0; ch < k.c; ++ch)
      for (size_t oy = 0; oy < k.out_h; ++oy)
        for (size_t ox = 0; ox < k.out_w; ++ox) {
          size_t y0, y1, x0, x1;
          double wy, wx;
          taps(k, k.in_h, k.out_h, oy, y0, y1, wy);
          taps(k, k.in_w, k.out_w, ox, x0, x1, wx);
          const auto at = [&](size_t iy, size_t ix) {
            return static_cast<double>(x[((b * k.in_h + iy) * k.in_w + ix) * k.c + ch]);
          };
          const double top = at(y0, x0) * (1 - wx) + at(y0, x1) * wx;
          const double bottom = at(y1, x0) * (1 - wx) + at(y1, x1) * wx;
          y[((b * k.c + ch) * k.out_h + oy) * k.out_w + ox] =
              static_cast<float>(top * (1 - wy) + bottom * wy);
        }
  return y;
}

// x (NHWC, a delegate input bound as is) -> resize (id 7) -> y, a delegate
// output in NCHW; with `also_read`, an Abs (id 8) reads y too, into z.
std::vector<uint8_t> resize_blob(const Case& k, bool also_read) {
  XnnpackBlobBuilder b;
  const uint32_t x = b.input({k.n, k.in_h, k.in_w, k.c}, 0);
  const uint32_t y = b.output({k.n, k.out_h, k.out_w, k.c}, 0, BoundaryLayout::NhwcToNchw);
  auto& r = b.node(NodeType::StaticResizeBilinear2d, {x}, {y});
  r.new_shape = {k.out_h, k.out_w};
  r.flags = k.flags;
  r.debug_id = 7;
  if (also_read) {
    const uint32_t z = b.output({k.n, k.out_h, k.out_w, k.c}, 1);
    b.node(NodeType::Abs, {y}, {z}).debug_id = 8;
  }
  return b.build();
}

std::vector<float> ramp(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::sin(0.37f * static_cast<float>(i)) * 3.0f;
  return v;
}

// Runs the resize of `k` and returns its NCHW output; `runs_on` where it ran.
std::vector<float> run(const Case& k, bool also_read, int threads, xnnpack::StageRunsOn& runs_on) {
  XnnpackRunner runner(threads);
  runner.options().delegate_detail = DelegateDetail::kPerNode;
  REQUIRE(runner.init(resize_blob(k, also_read)).ok());
  std::vector<XnnpackArg> args = {
      {Shape{int64_t(k.n), int64_t(k.in_h), int64_t(k.in_w), int64_t(k.c)},
       ramp(k.n * k.in_h * k.in_w * k.c)},
      zeros(Shape{int64_t(k.n), int64_t(k.c), int64_t(k.out_h), int64_t(k.out_w)})};
  if (also_read) args.push_back(zeros(Shape{int64_t(k.n), int64_t(k.out_h), int64_t(k.out_w), int64_t(k.c)}));
  StageTracer tracer;
  REQUIRE(runner.execute(args, &tracer).ok());
  REQUIRE(tracer.runs_on.count(7) == 1);
  runs_on = tracer.runs_on[7];
  if (also_read) {
    // z = |y| in NHWC: y's NCHW argument and z agree pixel by pixel.
    for (size_t b = 0; b < k.n; ++b)
      for (size_t p = 0; p < k.out_h * k.out_w; ++p)
        for (size_t ch = 0; ch < k.c; ++ch)
          REQUIRE(args[2].data[(b * k.out_h * k.out_w + p) * k.c + ch] ==
                  std::abs(args[1].data[(b * k.c + ch) * k.out_h * k.out_w + p]));
  }
  return args[1].data;
}

TEST_CASE("xnnpack bilinear resize writes its NCHW delegate output itself", "[xnnpack]") {
  const std::vector<Case> cases = {
      {2, 21, 5, 7, 40, 56, 0},                              // x8 up, half-pixel centres
      {1, 3, 6, 5, 4, 3, 0},                                 // down
      {1, 5, 4, 6, 7, 11, XNN_FLAG_ALIGN_CORNERS},           // odd factors
      {1, 4, 5, 3, 9, 10, XNN_FLAG_TENSORFLOW_LEGACY_MODE},  // asymmetric
      {1, 21, 2, 1500, 3, 2000, 0},                          // channels blended in blocks
      {1, 2, 1, 1, 3, 4, 0},                                 // one input pixel
  };
  const bool native = xnnpack::native_convolution_available();
  for (const Case& k : cases) {
    for (int threads : {1, 2}) {
      INFO(k.c << " channels " << k.in_h << "x" << k.in_w << " -> " << k.out_h << "x" << k.out_w << " flags "
               << k.flags << ", " << threads << " thread(s)");
      const std::vector<float> want = reference(k, ramp(k.n * k.in_h * k.in_w * k.c));
      xnnpack::StageRunsOn runs_on{};
      const std::vector<float> got = run(k, false, threads, runs_on);
      CHECK(runs_on == (native ? xnnpack::StageRunsOn::kNative : xnnpack::StageRunsOn::kXnnpack));
      double worst = 0;
      for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, double(std::abs(got[i] - want[i])));
      CHECK(worst < 1e-5);
      // Read by another node too, the resize stays on XNNPACK with a staged output: the same values.
      xnnpack::StageRunsOn shared_runs_on{};
      const std::vector<float> staged = run(k, true, threads, shared_runs_on);
      CHECK(shared_runs_on == xnnpack::StageRunsOn::kXnnpack);
      worst = 0;
      for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, double(std::abs(staged[i] - want[i])));
      CHECK(worst < 1e-5);
    }
  }
}

}  // namespace
}  // namespace etc
