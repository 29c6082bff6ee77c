// One loaded program, several Methods executing at once on different
// threads, their XNNPACK delegates running on the process's shared 2-thread
// pool (threadpool.h; pthreadpool serializes calls from different threads):
// every thread gets the single-threaded answer on every run. CI runs this
// under ThreadSanitizer (tools/run_tests.sh), where it shows that Methods
// share nothing mutable but the pool: the Program is read-only, and each
// Method owns its arena and delegate handles.
#include <catch2/catch.hpp>
#include <random>
#include <thread>
#include <vector>

#include "runtime/backends/register_builtin.h"
#include "runtime/executor/method.h"
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
      options.num_threads = 2;  // every Method's delegate uses the one 2-thread pool
      auto method = Method::init(program.get(), 0, options);
      if (!method.ok()) return;
      for (int r = 0; r < kRuns; ++r) matching[t] += run_once(*method.get(), input) == want ? 1 : 0;
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) CHECK(matching[t] == kRuns);
}

}  // namespace
}  // namespace etc
