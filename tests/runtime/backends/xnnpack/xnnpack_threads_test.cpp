// One loaded program, several Methods executing at once on different
// threads, their XNNPACK delegates running on the process's shared 2-thread
// pool (threadpool.h; pthreadpool serializes calls from different threads):
// every thread gets the single-threaded answer on every run. CI runs this
// under ThreadSanitizer (tools/run_tests.sh), where it shows that Methods
// share nothing mutable but the pool: the Program is read-only, and each
// Method owns its arena and delegate handles.
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <random>
#include <thread>
#include <vector>

#include "runtime/backends/register_builtin.h"
#include "runtime/executor/method.h"
#include "tests/support/native_conv_fixtures.h"
#include "tests/support/program_bytes.h"
#include "tests/support/random.h"
#include "tests/support/xnnpack_blob_builder.h"

namespace etc {
namespace {

using xnnpack::fb::BoundaryLayout;
using xnnpack::fb::NodeType;

constexpr int kChannels = 8, kSize = 12;

// x [1, 8, 12, 12] -> xnnpack 3x3 convolution (pad 1) -> relu (portable) -> y.
std::vector<uint8_t> program_bytes() {
  std::mt19937 rng(3);
  testing::XnnpackBlobBuilder b;
  const uint64_t c = kChannels, s = kSize;
  const uint32_t x = b.input({1, s, s, c}, 0, BoundaryLayout::NchwToNhwc);
  const uint32_t w = b.constant({c, 3, 3, c}, testing::random_floats(c * 9 * c, rng));
  const uint32_t bias = b.constant({c}, testing::random_floats(c, rng));
  const uint32_t y = b.output({1, s, s, c}, 0, BoundaryLayout::NhwcToNchw);
  auto& conv = b.node(NodeType::Convolution2d, {x, w, bias}, {y});
  conv.padding = {1, 1, 1, 1};
  conv.kernel = {3, 3};
  conv.stride = {1, 1};
  conv.groups = 1;
  conv.group_input_channels = c;
  conv.group_output_channels = c;
  conv.input_channels = c;
  conv.depth_multiplier = 1;
  conv.output_min = -1e30f;
  conv.output_max = 1e30f;
  const std::vector<uint8_t> blob = b.build();

  testing::ProgramBytes p;
  const int in = p.input("x", {1, kChannels, kSize, kSize});
  const int mid = p.activation("conv", {1, kChannels, kSize, kSize});
  const int out = p.output("y", {1, kChannels, kSize, kSize});
  p.call_delegate(p.delegate("xnnpack", std::string(blob.begin(), blob.end())), {in}, {mid});
  p.call_kernel("relu", {mid}, {out});
  return p.build();
}

std::vector<float> run_once(Method& m, const std::vector<float>& input) {
  const TensorSpec spec{DType::Float32, {1, kChannels, kSize, kSize}};
  if (!m.set_input(0, spec, input.data()).ok() || !m.execute().ok()) return {};
  const float* y = m.output(0).data_as<const float>();
  return {y, y + input.size()};
}

TEST_CASE("methods of one program run at once on several threads over a shared xnnpack pool",
          "[xnnpack][threads]") {
  REQUIRE(register_builtin_backends().ok());
  const std::vector<uint8_t> bytes = program_bytes();
  auto program = testing::load_program_bytes(bytes);
  REQUIRE(program.ok());
  std::mt19937 rng(11);
  const std::vector<float> input = testing::random_floats(kChannels * kSize * kSize, rng);
  RuntimeOptions single;
  single.num_threads = 1;
  auto reference_method = Method::init(program.get(), 0, single);
  REQUIRE(reference_method.ok());
  const std::vector<float> want = run_once(*reference_method.get(), input);
  REQUIRE(want.size() == input.size());

  constexpr int kThreads = 4, kRuns = 20;
  std::vector<int> matching(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      RuntimeOptions options;
      options.num_threads = 2;              // every Method's delegate uses the one 2-thread pool
      options.fit_threads_to_work = false;  // small as it is
      auto method = Method::init(program.get(), 0, options);
      if (!method.ok()) return;
      for (int r = 0; r < kRuns; ++r) matching[t] += run_once(*method.get(), input) == want ? 1 : 0;
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) CHECK(matching[t] == kRuns);
}

// x -> Clamp -> conv1 (3x3 16->32) -> a -> conv2 (3x3 32->32) -> b;
// Add(a, b) -> c -> conv3 (3x3, 2 groups, 32->8) -> y, small enough for an
// unoptimised ThreadSanitizer build: the backend's own kernel runs the two
// dense convolutions (native_convolution=on), XNNPACK the Clamp and the
// grouped convolution, in stages of their own; a delegate's init creates
// them on its pool's two threads (XNNPACK's packing into the instance's
// pool), here from four Methods at once.
TEST_CASE("delegates whose stages are created on two threads, four at once", "[xnnpack][threads]") {
  using namespace testing::native_conv;
  REQUIRE(register_builtin_backends().ok());
  const std::array<uint32_t, 4> p1 = {1, 1, 1, 1};
  const Geometry g1{.h = 6, .w = 5, .c = 16, .o = 32, .kh = 3, .kw = 3, .pad = p1};
  const Geometry g2{.h = 6, .w = 5, .c = 32, .o = 32, .kh = 3, .kw = 3, .pad = p1};
  const Geometry g3{.h = 6, .w = 5, .c = 32, .o = 8, .kh = 3, .kw = 3, .pad = p1, .groups = 2};
  const MixedStages m = mixed_stages(g1, g2, g3, 501, /*c_output=*/false);
  const std::vector<uint8_t>& blob = m.blob;
  {
    auto view = xnnpack::read_xnnpack_blob(blob.data(), blob.size());
    REQUIRE(view.ok());
    const xnnpack::StagePlan plan = xnnpack::plan_stages(view.get(), xnnpack::NativeConvolutions::kAll);
    size_t native = 0;
    for (const xnnpack::Stage& stage : plan.stages) native += stage.native ? 1 : 0;
    CHECK(native == (xnnpack::native_convolution_available() ? 2 : 0));
    CHECK(plan.stages.size() - native >= 2);  // XNNPACK's: the Clamp, the grouped convolution
  }
  testing::ProgramBytes p;
  const int in = p.input("x", {1, 16, 6, 5});
  const int out = p.output("y", {1, 8, 6, 5});
  p.call_delegate(p.delegate("xnnpack", std::string(blob.begin(), blob.end()),
                             {{"native_convolution", "on"}, {"winograd", "off"}}),
                  {in}, {out});
  const std::vector<uint8_t> bytes = p.build();
  auto program = testing::load_program_bytes(bytes);
  REQUIRE(program.ok());

  const std::vector<float> want = nhwc_to_nchw(reference(g3, m.c_ref, m.d3.filter, m.d3.bias), 1, 30, 8);
  const std::vector<float> input = nhwc_to_nchw(m.d1.x, 1, 30, 16);

  constexpr int kThreads = 4;
  std::vector<std::vector<float>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      RuntimeOptions options;
      options.num_threads = 2;
      options.fit_threads_to_work = false;
      auto method = Method::init(program.get(), 0, options);
      if (!method.ok()) return;
      const TensorSpec spec{DType::Float32, {1, 16, 6, 5}};
      if (!method.get()->set_input(0, spec, input.data()).ok() || !method.get()->execute().ok()) return;
      const float* out_data = method.get()->output(0).data_as<const float>();
      got[t].assign(out_data, out_data + want.size());
    });
  for (std::thread& th : threads) th.join();
  // conv1's rounding of a, amplified through conv2 and conv3: 1e-3.
  for (int t = 0; t < kThreads; ++t) {
    INFO("method " << t);
    REQUIRE(got[t].size() == want.size());
    CHECK(count_far(got[t], want, 1e-3) == 0);
  }
}

}  // namespace
}  // namespace etc
