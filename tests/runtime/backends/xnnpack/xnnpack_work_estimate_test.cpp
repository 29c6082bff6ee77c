// How much work the XNNPACK backend counts in a blob, and what it does with
// a delegate too small to split: it runs on the calling thread, however many
// threads were asked for, unless the options hold it to them
// (work_estimate.h, RuntimeOptions::fit_threads_to_work).
#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "runtime/backends/register_builtin.h"
#include "runtime/backends/xnnpack/blob_reader.h"
#include "runtime/backends/xnnpack/work_estimate.h"
#include "runtime/core/log.h"
#include "runtime/executor/method.h"
#include "tests/support/native_conv_fixtures.h"
#include "tests/support/program_bytes.h"
#include "tests/support/random.h"
#include "tests/support/xnnpack_blob_builder.h"

namespace etc {
namespace {

using testing::XnnpackBlobBuilder;
using xnnpack::fb::BoundaryLayout;
using xnnpack::fb::NodeType;

// x [1, size, size, c] -> 3x3 convolution (pad 1, c -> c) -> t, then
// t -> Add(t, t) -> y: 2 * size^2 * c * 9c + size^2 * c operations.
std::vector<uint8_t> conv_add_blob(uint64_t size, uint64_t c) {
  std::mt19937 rng(5);
  XnnpackBlobBuilder b;
  const uint32_t x = b.input({1, size, size, c}, 0, BoundaryLayout::NchwToNhwc);
  const uint32_t w = b.constant({c, 3, 3, c}, testing::random_floats(c * 9 * c, rng));
  const uint32_t bias = b.constant({c}, testing::random_floats(c, rng));
  const uint32_t t = b.tensor({1, size, size, c});
  const uint32_t y = b.output({1, size, size, c}, 0, BoundaryLayout::NhwcToNchw);
  testing::native_conv::Geometry g;
  g.h = g.w = size, g.c = g.o = c, g.kh = g.kw = 3, g.pad = {1, 1, 1, 1};
  testing::native_conv::set_window(b.node(NodeType::Convolution2d, {x, w, bias}, {t}), g);
  b.node(NodeType::Add, {t, t}, {y});
  return b.build();
}

uint64_t conv_add_flops(uint64_t size, uint64_t c) { return 2 * size * size * c * 9 * c + size * size * c; }

uint64_t flops_of(const std::vector<uint8_t>& blob) {
  auto view = xnnpack::read_xnnpack_blob(blob.data(), blob.size());
  REQUIRE(view.ok());
  return xnnpack::estimated_flops(view.get());
}

int threads_for(const std::vector<uint8_t>& blob, int requested) {
  return xnnpack::threads_worth_using(flops_of(blob), requested);
}

TEST_CASE("xnnpack counts a convolution's multiply-adds and one operation per element elsewhere",
          "[xnnpack][threads]") {
  CHECK(flops_of(conv_add_blob(12, 8)) == conv_add_flops(12, 8));
  CHECK(flops_of(conv_add_blob(20, 32)) == conv_add_flops(20, 32));

  // Fully connected [3, 10] -> [3, 4]: 2 * 3 * 4 * 10.
  std::mt19937 rng(3);
  XnnpackBlobBuilder b;
  const uint32_t in = b.input({3, 10}, 0);
  const uint32_t filter = b.constant({4, 10}, testing::random_floats(40, rng));
  const uint32_t out = b.output({3, 4}, 0);
  b.node(NodeType::FullyConnected, {in, filter}, {out});
  CHECK(flops_of(b.build()) == 2 * 3 * 4 * 10);
}

TEST_CASE("xnnpack keeps the threads asked for only where the work pays for a second one",
          "[xnnpack][threads]") {
  const std::vector<uint8_t> tiny = conv_add_blob(12, 8), large = conv_add_blob(20, 32);
  REQUIRE(conv_add_flops(12, 8) < xnnpack::kFlopsWorthASecondThread);
  REQUIRE(conv_add_flops(20, 32) >= xnnpack::kFlopsWorthASecondThread);
  CHECK(threads_for(tiny, 2) == 1);
  CHECK(threads_for(tiny, 0) == 1);  // one per core
  CHECK(threads_for(tiny, 1) == 1);
  CHECK(threads_for(large, 2) == 2);
  CHECK(threads_for(large, 0) == 0);
  CHECK(threads_for(tiny, -1) == -1);  // refused by the pool, as before
}

std::vector<std::string>& logged() {
  static std::vector<std::string> messages;
  return messages;
}

void keep_message(LogLevel, const char* message) { logged().emplace_back(message); }

// Initialises the program that runs `blob` with `options` and returns
// whether init said the delegate runs on the calling thread.
bool init_says_one_thread(const std::vector<uint8_t>& blob, uint64_t size, uint64_t c,
                          const RuntimeOptions& options) {
  testing::ProgramBytes p;
  const int64_t s = static_cast<int64_t>(size), ch = static_cast<int64_t>(c);
  const int in = p.input("x", {1, ch, s, s});
  const int out = p.output("y", {1, ch, s, s});
  p.call_delegate(p.delegate("xnnpack", std::string(blob.begin(), blob.end())), {in}, {out});
  const std::vector<uint8_t> bytes = p.build();
  auto program = testing::load_program_bytes(bytes);
  REQUIRE(program.ok());
  logged().clear();
  set_log_sink(keep_message);
  auto method = Method::init(program.get(), 0, options);
  set_log_sink(nullptr);
  INFO((method.ok() ? std::string() : method.message()));
  REQUIRE(method.ok());
  // It still computes: x + x of the convolution's output has the input's size.
  std::vector<float> x(static_cast<size_t>(s * s * ch), 0.5f);
  REQUIRE(method.get()->set_input(0, TensorSpec{DType::Float32, {1, ch, s, s}}, x.data()).ok());
  REQUIRE(method.get()->execute().ok());
  for (const std::string& m : logged())
    if (m.find("runs on the calling thread") != std::string::npos) return true;
  return false;
}

TEST_CASE("a small xnnpack delegate runs on the calling thread unless held to the threads asked for",
          "[xnnpack][threads]") {
  REQUIRE(register_builtin_backends().ok());
  RuntimeOptions two;
  two.num_threads = 2;
  CHECK(init_says_one_thread(conv_add_blob(12, 8), 12, 8, two));
  CHECK_FALSE(init_says_one_thread(conv_add_blob(20, 32), 20, 32, two));
  RuntimeOptions held = two;
  held.fit_threads_to_work = false;
  CHECK_FALSE(init_says_one_thread(conv_add_blob(12, 8), 12, 8, held));
  RuntimeOptions one;
  one.num_threads = 1;
  CHECK_FALSE(init_says_one_thread(conv_add_blob(12, 8), 12, 8, one));
}

}  // namespace
}  // namespace etc
