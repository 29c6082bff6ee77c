// The XNNPACK backend's runtime: each node kind against a reference computed
// here, NCHW boundaries, constants after the blob is freed, thread counts,
// profiling, and a program run through Method.
#include "runtime/backends/xnnpack/xnnpack_backend.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "runtime/backends/register_builtin.h"
#include "runtime/executor/method.h"
#include "tests/support/program_bytes.h"
#include "tests/support/random.h"
#include "tests/support/xnnpack_blob_builder.h"

namespace etc {
namespace {

using testing::XnnpackArg;
using testing::XnnpackBlobBuilder;
using testing::XnnpackRunner;
using testing::zeros;
using xnnpack::fb::BoundaryLayout;
using xnnpack::fb::NodeType;

void check_close(const std::vector<float>& got, const std::vector<float>& want, float tolerance = 1e-4f) {
  REQUIRE(got.size() == want.size());
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::abs(got[i] - want[i]) <= tolerance * (1.0f + std::abs(want[i])))) ++bad;
  CHECK(bad == 0);
}

struct ConvCase {
  int n, c, h, w, o, k, stride, pad, groups;
  float lo, hi;
};

// A convolution (dense or depthwise) with bias on NCHW input and output.
std::vector<uint8_t> conv_blob(const ConvCase& cc, const std::vector<float>& w_oihw,
                               const std::vector<float>& bias, int oh, int ow) {
  XnnpackBlobBuilder b;
  const auto u = [](int v) { return static_cast<uint64_t>(v); };
  const uint32_t x = b.input({u(cc.n), u(cc.h), u(cc.w), u(cc.c)}, 0, BoundaryLayout::NchwToNhwc);
  const bool depthwise = cc.groups == cc.c && cc.groups > 1;
  uint32_t filter;
  if (depthwise) {
    std::vector<float> f(w_oihw.size());  // [1, kh, kw, C]: OIHW with I = 1
    for (int oc = 0; oc < cc.o; ++oc)
      for (int p = 0; p < cc.k * cc.k; ++p)
        f[static_cast<size_t>(p * cc.o + oc)] = w_oihw[static_cast<size_t>(oc * cc.k * cc.k + p)];
    filter = b.constant({1, u(cc.k), u(cc.k), u(cc.o)}, f);
  } else {
    filter = b.constant({u(cc.o), u(cc.k), u(cc.k), u(cc.c / cc.groups)},
                        testing::oihw_to_ohwi(w_oihw, cc.o, cc.c / cc.groups, cc.k, cc.k));
  }
  const uint32_t bias_id = b.constant({u(cc.o)}, bias);
  const uint32_t y = b.output({u(cc.n), u(oh), u(ow), u(cc.o)}, 0, BoundaryLayout::NhwcToNchw);
  auto& node = b.node(depthwise ? NodeType::DepthwiseConvolution2d : NodeType::Convolution2d,
                      {x, filter, bias_id}, {y});
  const auto u32 = [](int v) { return static_cast<uint32_t>(v); };
  node.padding = {u32(cc.pad), u32(cc.pad), u32(cc.pad), u32(cc.pad)};
  node.kernel = {u32(cc.k), u32(cc.k)};
  node.stride = {u32(cc.stride), u32(cc.stride)};
  node.groups = u32(cc.groups);
  node.group_input_channels = u(cc.c / cc.groups);
  node.group_output_channels = u(cc.o / cc.groups);
  node.input_channels = u(cc.c);
  node.depth_multiplier = u32(cc.o / cc.c == 0 ? 1 : cc.o / cc.c);
  node.output_min = cc.lo;
  node.output_max = cc.hi;
  return b.build();
}

// Runs `cc` through the backend and the reference; returns the backend's output.
std::vector<float> run_conv_case(const ConvCase& cc, int threads = 0, bool scribble_blob = false) {
  std::mt19937 rng(7);
  const auto x = testing::random_floats(static_cast<size_t>(cc.n * cc.c * cc.h * cc.w), rng);
  const auto weights =
      testing::random_floats(static_cast<size_t>(cc.o * (cc.c / cc.groups) * cc.k * cc.k), rng);
  const auto bias = testing::random_floats(static_cast<size_t>(cc.o), rng);
  int oh = 0, ow = 0;
  const auto want = testing::reference_conv_nchw(x, cc.n, cc.c, cc.h, cc.w, weights, cc.o, cc.k, cc.k, bias,
                                                 cc.stride, cc.pad, cc.groups, cc.lo, cc.hi, oh, ow);
  XnnpackRunner runner(threads);
  const Status s = runner.init(conv_blob(cc, weights, bias, oh, ow));
  INFO(s.message());
  REQUIRE(s.ok());
  CHECK(runner.freed_by_init());
  if (scribble_blob) std::fill(runner.blob().begin(), runner.blob().end(), uint8_t{0xAB});
  std::vector<XnnpackArg> args = {{Shape{cc.n, cc.c, cc.h, cc.w}, x}, zeros(Shape{cc.n, cc.o, oh, ow})};
  REQUIRE(runner.execute(args).ok());
  check_close(args[1].data, want);
  return args[1].data;
}

TEST_CASE("xnnpack 3x3 convolution with bias and clamp on NCHW data matches the reference", "[xnnpack]") {
  run_conv_case({1, 3, 9, 9, 5, 3, 1, 1, 1, -0.5f, 0.75f});
  run_conv_case({2, 4, 9, 7, 6, 3, 2, 1, 1, -1e30f, 1e30f});
  // Grouped, and the weights are packed: scribbling on the freed blob changes nothing.
  run_conv_case({1, 6, 8, 8, 4, 3, 1, 0, 2, -2.0f, 2.0f}, 0, true);
}

TEST_CASE("xnnpack depthwise convolution matches the reference", "[xnnpack]") {
  run_conv_case({1, 8, 6, 6, 8, 3, 1, 1, 8, -1e30f, 1e30f});
  run_conv_case({2, 5, 7, 9, 5, 3, 2, 1, 5, 0.0f, 6.0f});
}

TEST_CASE("xnnpack fully connected with bias matches the reference", "[xnnpack]") {
  std::mt19937 rng(3);
  const auto x = testing::random_floats(2 * 10, rng);
  const auto w = testing::random_floats(4 * 10, rng);
  const auto bias = testing::random_floats(4, rng);
  XnnpackBlobBuilder b;
  const uint32_t in = b.input({2, 10}, 0);
  const uint32_t filter = b.constant({4, 10}, w);
  const uint32_t bias_id = b.constant({4}, bias);
  const uint32_t out = b.output({2, 4}, 0);
  b.node(NodeType::FullyConnected, {in, filter, bias_id}, {out});
  XnnpackRunner runner;
  REQUIRE(runner.init(b.build()).ok());
  std::vector<XnnpackArg> args = {{Shape{2, 10}, x}, zeros(Shape{2, 4})};
  REQUIRE(runner.execute(args).ok());
  std::vector<float> want(8);
  for (int r = 0; r < 2; ++r)
    for (int o = 0; o < 4; ++o) {
      float acc = bias[static_cast<size_t>(o)];
      for (int i = 0; i < 10; ++i)
        acc += x[static_cast<size_t>(r * 10 + i)] * w[static_cast<size_t>(o * 10 + i)];
      want[static_cast<size_t>(r * 4 + o)] = acc;
    }
  check_close(args[1].data, want);
}

TEST_CASE("xnnpack max and average pooling on NCHW data match the reference", "[xnnpack]") {
  // One input feeds both pools: 2x2/2 max and 3x3/1 average, two outputs.
  XnnpackBlobBuilder b;
  const uint32_t x = b.input({1, 6, 6, 3}, 0, BoundaryLayout::NchwToNhwc);
  const uint32_t max_out = b.output({1, 3, 3, 3}, 0, BoundaryLayout::NhwcToNchw);
  const uint32_t avg_out = b.output({1, 4, 4, 3}, 1, BoundaryLayout::NhwcToNchw);
  auto& max_pool = b.node(NodeType::MaxPooling2d, {x}, {max_out});
  max_pool.kernel = {2, 2};
  max_pool.stride = {2, 2};
  auto& avg_pool = b.node(NodeType::AveragePooling2d, {x}, {avg_out});
  avg_pool.kernel = {3, 3};
  XnnpackRunner runner;
  REQUIRE(runner.init(b.build()).ok());
  std::mt19937 rng(11);
  std::vector<XnnpackArg> args = {{Shape{1, 3, 6, 6}, testing::random_floats(108, rng)},
                                  zeros(Shape{1, 3, 3, 3}),
                                  zeros(Shape{1, 3, 4, 4})};
  REQUIRE(runner.execute(args).ok());
  const auto& in = args[0].data;
  std::vector<float> want_max(27), want_avg(48);
  for (int c = 0; c < 3; ++c) {
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        float m = -1e30f;
        for (int u = 0; u < 2; ++u)
          for (int v = 0; v < 2; ++v)
            m = std::max(m, in[static_cast<size_t>((c * 6 + 2 * i + u) * 6 + 2 * j + v)]);
        want_max[static_cast<size_t>((c * 3 + i) * 3 + j)] = m;
      }
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) {
        float s = 0;
        for (int u = 0; u < 3; ++u)
          for (int v = 0; v < 3; ++v) s += in[static_cast<size_t>((c * 6 + i + u) * 6 + j + v)];
        want_avg[static_cast<size_t>((c * 4 + i) * 4 + j)] = s / 9;
      }
  }
  check_close(args[1].data, want_max);
  check_close(args[2].data, want_avg);
}

TEST_CASE("xnnpack add with a broadcast constant keeps working after the blob is freed", "[xnnpack]") {
  XnnpackBlobBuilder b;
  const uint32_t x = b.input({2, 3}, 0);
  const uint32_t c = b.constant({3}, {10, 20, 30});
  const uint32_t y = b.output({2, 3}, 0);
  b.node(NodeType::Add, {x, c}, {y});
  XnnpackRunner runner;
  REQUIRE(runner.init(b.build()).ok());
  CHECK(runner.freed_by_init());
  // XNNPACK reads an add's static operand at every run: it must not be the blob.
  std::fill(runner.blob().begin(), runner.blob().end(), uint8_t{0xFF});
  std::vector<XnnpackArg> args = {{Shape{2, 3}, {1, 2, 3, 4, 5, 6}}, zeros(Shape{2, 3})};
  REQUIRE(runner.execute(args).ok());
  CHECK(args[1].data == std::vector<float>{11, 22, 33, 14, 25, 36});
  // New argument buffers (new pointers) are bound again.
  std::vector<XnnpackArg> moved = {{Shape{2, 3}, {0, 0, 0, 1, 1, 1}}, zeros(Shape{2, 3})};
  REQUIRE(runner.execute(moved).ok());
  CHECK(moved[1].data == std::vector<float>{10, 20, 30, 11, 21, 31});
  // The same buffers with new contents.
  moved[0].data = {-10, -20, -30, 0, 0, 0};
  REQUIRE(runner.execute(moved).ok());
  CHECK(moved[1].data == std::vector<float>{0, 0, 0, 10, 20, 30});
}

TEST_CASE("xnnpack gives the same results with 1 and 2 threads", "[xnnpack]") {
  // 32 -> 64 channels: Winograd at both thread counts (a layer whose choice
  // of kernel differs between thread counts differs in its rounding too).
  const ConvCase cc{1, 32, 20, 20, 64, 3, 1, 1, 1, -1e30f, 1e30f};
  const std::vector<float> one = run_conv_case(cc, 1);
  const std::vector<float> two = run_conv_case(cc, 2);
  CHECK(one == two);
}

class CountingTracer : public EventTracer {
 public:
  EventTracerEntry start_profiling_delegate(std::string_view name, int64_t id) override {
    names.emplace_back(name);
    ids.push_back(id);
    return EventTracerEntry{0, event_tracer_now(), id, name};
  }
  void end_profiling_delegate(const EventTracerEntry& entry, const void*, size_t) override {
    ++ended;
    CHECK(event_tracer_now() >= entry.start_time);
  }
  void log_profiling_delegate(std::string_view, int64_t, uint64_t, uint64_t, const void*, size_t) override {}
  std::vector<std::string> names;
  std::vector<int64_t> ids;
  int ended = 0;
};

TEST_CASE("xnnpack reports each stage by the debug id its nodes share", "[xnnpack]") {
  XnnpackBlobBuilder b;
  const uint32_t x = b.input({4}, 0);
  const uint32_t y = b.output({4}, 0);
  b.node(NodeType::Negate, {x}, {y}).debug_id = 5;
  XnnpackRunner runner;
  REQUIRE(runner.init(b.build()).ok());
  CountingTracer tracer;
  std::vector<XnnpackArg> args = {{Shape{4}, {1, -2, 3, -4}}, zeros(Shape{4})};
  REQUIRE(runner.execute(args, &tracer).ok());
  REQUIRE(runner.execute(args, &tracer).ok());
  CHECK(tracer.names == std::vector<std::string>{"", ""});
  CHECK(tracer.ids == std::vector<int64_t>{5, 5});
  CHECK(tracer.ended == 2);
  CHECK(args[1].data == std::vector<float>{-1, 2, -3, 4});
}

TEST_CASE("xnnpack native stages report their node's debug id", "[xnnpack]") {
  // Negate (XNNPACK) -> Slice (native, debug id 7) -> Abs (XNNPACK).
  XnnpackBlobBuilder b;
  const uint32_t x = b.input({1, 2, 2, 6}, 0);
  const uint32_t n = b.tensor({1, 2, 2, 6});
  const uint32_t s = b.tensor({1, 2, 2, 4});
  const uint32_t y = b.output({1, 2, 2, 4}, 0);
  b.node(NodeType::Negate, {x}, {n}).debug_id = 3;
  auto& slice = b.node(NodeType::Slice, {n}, {s});
  slice.offsets = {0, 0, 0, 1};
  slice.debug_id = 7;
  b.node(NodeType::Abs, {s}, {y}).debug_id = 9;
  XnnpackRunner runner;
  REQUIRE(runner.init(b.build()).ok());
  CountingTracer tracer;
  std::vector<float> in(24);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i);
  std::vector<XnnpackArg> args = {{Shape{1, 2, 2, 6}, in}, zeros(Shape{1, 2, 2, 4})};
  REQUIRE(runner.execute(args, &tracer).ok());
  CHECK(tracer.names == std::vector<std::string>{"", "", ""});
  CHECK(tracer.ids == std::vector<int64_t>{3, 7, 9});
  CHECK(tracer.ended == 3);
  CHECK(args[1].data[0] == 1.0f);  // |-(x[1])|
  CHECK(args[1].data[3] == 4.0f);
}

TEST_CASE("a program delegating to xnnpack runs through Method", "[xnnpack]") {
  REQUIRE(register_builtin_backends().ok());
  XnnpackBlobBuilder b;
  const uint32_t x = b.input({1, 2, 2, 3}, 0, BoundaryLayout::NchwToNhwc);
  const uint32_t t = b.tensor({1, 2, 2, 3});
  const uint32_t y = b.output({1, 2, 2, 3}, 0, BoundaryLayout::NhwcToNchw);
  auto& clamp = b.node(NodeType::Clamp, {x}, {t});
  clamp.output_min = 0;
  clamp.output_max = 6;
  b.node(NodeType::Square, {t}, {y});
  const std::vector<uint8_t> blob = b.build();
  testing::ProgramBytes p;
  const int in = p.input("x", {1, 3, 2, 2});
  const int out = p.output("y", {1, 3, 2, 2});
  p.call_delegate(p.delegate("xnnpack", std::string(blob.begin(), blob.end())), {in}, {out});
  const auto bytes = p.build();
  auto program = testing::load_program_bytes(bytes);
  REQUIRE(program.ok());
  RuntimeOptions options;
  options.num_threads = 2;
  auto method = Method::init(program.get(), 0, options);
  INFO((method.ok() ? std::string() : method.message()));
  REQUIRE(method.ok());
  std::vector<float> data(12);
  for (size_t i = 0; i < 12; ++i) data[i] = static_cast<float>(i) - 4.0f;
  REQUIRE(method.get()->set_input(0, TensorSpec{DType::Float32, {1, 3, 2, 2}}, data.data()).ok());
  REQUIRE(method.get()->execute().ok());
  const float* result = method.get()->output(0).data_as<const float>();
  for (size_t i = 0; i < 12; ++i) {
    const float r = std::min(std::max(data[i], 0.0f), 6.0f);
    CHECK(result[i] == r * r);
  }
}

// A benchmark, not a test: prints the time of a 3x3 64->64 convolution at
// 56x56 for 1 and 2 threads. Run with: etc_unit_tests "[.xnnpack-bench]"
TEST_CASE("xnnpack 3x3 64->64 56x56 convolution timing", "[.xnnpack-bench]") {
  const ConvCase cc{1, 64, 56, 56, 64, 3, 1, 1, 1, -1e30f, 1e30f};
  std::mt19937 rng(1);
  const auto w = testing::random_floats(64 * 64 * 9, rng);
  const auto bias = testing::random_floats(64, rng);
  for (int threads : {1, 2}) {
    XnnpackRunner runner(threads);
    REQUIRE(runner.init(conv_blob(cc, w, bias, 56, 56)).ok());
    std::vector<XnnpackArg> args = {{Shape{1, 64, 56, 56}, testing::random_floats(64 * 56 * 56, rng)},
                                    zeros(Shape{1, 64, 56, 56})};
    for (int i = 0; i < 5; ++i) REQUIRE(runner.execute(args).ok());
    double best = 1e9;
    for (int i = 0; i < 30; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      REQUIRE(runner.execute(args).ok());
      best = std::min(
          best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    const double gflops = 2.0 * 64 * 64 * 9 * 56 * 56 / (best * 1e6);
    std::printf("xnnpack conv 3x3 64->64 56x56 NCHW boundary, %d thread(s): %.3f ms (%.1f GFLOPS)\n", threads,
                best, gflops);
  }
}

}  // namespace
}  // namespace etc
