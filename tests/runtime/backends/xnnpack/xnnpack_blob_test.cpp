// The XNNPACK backend refuses defective blobs with a message naming the
// tensor or node (and never crashes on hostile bytes), checks its arguments
// at execute, and leaks nothing across init/destroy.
#include <atomic>
#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <vector>

#include "runtime/backends/xnnpack/blob_reader.h"
#include "runtime/backends/xnnpack/threadpool.h"
#include "runtime/backends/xnnpack/xnnpack_backend.h"
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

// conv 3x3 (3 -> 4 channels, NCHW boundary) + add of a constant + clamp.
XnnpackBlobBuilder small_graph() {
  XnnpackBlobBuilder b;
  std::mt19937 rng(5);
  const uint32_t x = b.input({1, 6, 6, 3}, 0, BoundaryLayout::NchwToNhwc);
  const uint32_t w = b.constant({4, 3, 3, 3}, testing::random_floats(108, rng));
  const uint32_t bias = b.constant({4}, testing::random_floats(4, rng));
  const uint32_t t = b.tensor({1, 4, 4, 4});
  const uint32_t c = b.constant({4}, {1, 2, 3, 4});
  const uint32_t u = b.tensor({1, 4, 4, 4});
  const uint32_t y = b.output({1, 4, 4, 4}, 0, BoundaryLayout::NhwcToNchw);
  auto& conv = b.node(NodeType::Convolution2d, {x, w, bias}, {t});
  conv.kernel = {3, 3};
  conv.group_input_channels = 3;
  conv.group_output_channels = 4;
  b.node(NodeType::Add, {t, c}, {u});
  auto& clamp = b.node(NodeType::Clamp, {u}, {y});
  clamp.output_min = -1;
  clamp.output_max = 1;
  return b;
}

Status init_blob(const std::vector<uint8_t>& blob) {
  XnnpackRunner runner;
  return runner.init(blob);
}

void check_refused(const std::vector<uint8_t>& blob, Error code, const std::string& words) {
  const Status s = init_blob(blob);
  INFO(s.message());
  CHECK(s.error() == code);
  CHECK(s.message().find(words) != std::string::npos);
}

TEST_CASE("xnnpack accepts the small graph the defect tests start from", "[xnnpack]") {
  XnnpackRunner runner;
  REQUIRE(runner.init(small_graph().build()).ok());
  std::vector<XnnpackArg> args = {zeros(Shape{1, 3, 6, 6}), zeros(Shape{1, 4, 4, 4})};
  REQUIRE(runner.execute(args).ok());
}

TEST_CASE("xnnpack reads a blob placed at an unaligned address", "[xnnpack]") {
  XnnpackRunner aligned, unaligned;
  REQUIRE(aligned.init(small_graph().build()).ok());
  REQUIRE(unaligned.init(small_graph().build(), 4).ok());
  std::mt19937 rng(9);
  const auto x = testing::random_floats(108, rng);
  std::vector<XnnpackArg> a = {{Shape{1, 3, 6, 6}, x}, zeros(Shape{1, 4, 4, 4})};
  std::vector<XnnpackArg> b = {{Shape{1, 3, 6, 6}, x}, zeros(Shape{1, 4, 4, 4})};
  REQUIRE(aligned.execute(a).ok());
  REQUIRE(unaligned.execute(b).ok());
  CHECK(a[1].data == b[1].data);
}

TEST_CASE("xnnpack refuses a blob of another version", "[xnnpack]") {
  check_refused(small_graph().build(1), Error::DelegateInvalidCompatibility,
                "xnnpack: blob version 1, this runtime reads version " +
                    std::to_string(xnnpack::kXnnpackBlobVersion) + "; recompile");
}

TEST_CASE("xnnpack refuses blobs with defects, naming the tensor or node", "[xnnpack]") {
  SECTION("wrong identifier") {
    auto blob = small_graph().build();
    blob[8] = 'X';
    check_refused(blob, Error::InvalidProgram, "identifier");
  }
  SECTION("too small") { check_refused({1, 2, 3}, Error::InvalidProgram, "too small"); }
  SECTION("constant outside the constant data") {
    auto blob = small_graph().build();
    blob.resize(blob.size() - 16);
    check_refused(blob, Error::InvalidProgram, "tensor 4: constant bytes");
  }
  SECTION("constant size disagrees with dims") {
    XnnpackBlobBuilder b;
    const uint32_t x = b.input({3}, 0);
    const uint32_t c = b.constant({4}, {1, 2, 3});
    const uint32_t y = b.output({3}, 0);
    b.node(NodeType::Add, {x, c}, {y});
    check_refused(b.build(), Error::InvalidProgram, "tensor 1: constant of 12 bytes");
  }
  SECTION("rank above 6") {
    XnnpackBlobBuilder b;
    const uint32_t x = b.input({1, 1, 1, 1, 1, 1, 2}, 0);
    const uint32_t y = b.output({1, 1, 1, 1, 1, 1, 2}, 0);
    b.node(NodeType::Abs, {x}, {y});
    check_refused(b.build(), Error::InvalidProgram, "tensor 0 has rank 7");
  }
  SECTION("tensor id out of range") {
    XnnpackBlobBuilder b;
    const uint32_t x = b.input({3}, 0);
    const uint32_t y = b.output({3}, 0);
    b.node(NodeType::Abs, {x}, {y + 5});
    check_refused(b.build(), Error::InvalidProgram, "node 0 (Abs): output is tensor 6");
  }
  SECTION("delegate argument bound twice or never") {
    XnnpackBlobBuilder b;
    const uint32_t x = b.input({3}, 0);
    b.input({3}, 0);
    const uint32_t y = b.output({3}, 0);
    b.node(NodeType::Abs, {x}, {y});
    check_refused(b.build(), Error::InvalidProgram,
                  "delegate input 0 is bound to both tensor 0 and tensor 1");
    XnnpackBlobBuilder c;
    const uint32_t cx = c.input({3}, 0);
    const uint32_t cy = c.output({3}, 0);
    c.tensor({3});
    c.node(NodeType::Abs, {cx}, {cy});
    c.set_num_inputs(2);
    check_refused(c.build(), Error::InvalidProgram, "delegate input 1 is bound to no tensor");
  }
  SECTION("wrong input count for the node type") {
    XnnpackBlobBuilder b;
    const uint32_t x = b.input({3}, 0);
    const uint32_t y = b.output({3}, 0);
    b.node(NodeType::Add, {x}, {y});
    check_refused(b.build(), Error::InvalidProgram, "node 0 (Add): 1 inputs, expected 2");
  }
  SECTION("declared output dims disagree with the node") {
    XnnpackBlobBuilder b;
    const uint32_t x = b.input({1, 6, 6, 3}, 0);
    const uint32_t y = b.output({1, 4, 4, 3}, 0);
    auto& pool = b.node(NodeType::MaxPooling2d, {x}, {y});
    pool.kernel = {2, 2};
    pool.stride = {2, 2};
    check_refused(b.build(), Error::InvalidProgram,
                  "node 0 (MaxPooling2d): output (tensor 1) has dims [1, 4, 4, 3], expected [1, 3, 3, 3]");
  }
  SECTION("convolution filter that is not a constant") {
    XnnpackBlobBuilder b;
    const uint32_t x = b.input({1, 4, 4, 1}, 0);
    const uint32_t w = b.input({1, 3, 3, 1}, 1);
    const uint32_t y = b.output({1, 2, 2, 1}, 0);
    auto& conv = b.node(NodeType::Convolution2d, {x, w}, {y});
    conv.kernel = {3, 3};
    conv.group_input_channels = 1;
    conv.group_output_channels = 1;
    check_refused(b.build(), Error::InvalidProgram,
                  "node 0 (Convolution2d): input 1 (tensor 1) must be a constant");
  }
  SECTION("node input not yet computed") {
    XnnpackBlobBuilder b;
    const uint32_t x = b.input({3}, 0);
    const uint32_t t = b.tensor({3});
    const uint32_t y = b.output({3}, 0);
    b.node(NodeType::Abs, {t}, {y});
    b.node(NodeType::Abs, {x}, {t});
    check_refused(b.build(), Error::InvalidProgram, "node 0 (Abs): input tensor 1 is not a constant");
  }
}

// Every prefix of a valid blob, and blobs with bytes flipped, are refused or
// run; none may crash (the sanitizer build checks the "no out of bounds" half).
TEST_CASE("xnnpack survives truncated and corrupted blobs", "[xnnpack]") {
  const std::vector<uint8_t> valid = small_graph().build();
  for (size_t size = 0; size < valid.size(); ++size) {
    const std::vector<uint8_t> prefix(valid.begin(), valid.begin() + static_cast<std::ptrdiff_t>(size));
    CHECK_FALSE(init_blob(prefix).ok());
  }
  std::mt19937 rng(1234);
  size_t accepted = 0;
  const auto try_blob = [&](const std::vector<uint8_t>& blob) {
    XnnpackRunner runner;
    if (!runner.init(blob).ok()) return;
    ++accepted;
    // Accepted: run it with arguments of the sizes it declares.
    auto view = xnnpack::read_xnnpack_blob(blob.data(), blob.size());
    REQUIRE(view.ok());
    std::vector<XnnpackArg> args;
    for (uint32_t id : view->input_tensors)
      args.push_back(zeros(Shape{static_cast<int64_t>(view->tensors[id].numel)}));
    for (uint32_t id : view->output_tensors)
      args.push_back(zeros(Shape{static_cast<int64_t>(view->tensors[id].numel)}));
    CHECK(runner.execute(args).ok());
  };
  // Every byte of the flatbuffer part inverted, one at a time.
  const size_t flatbuffer_end = xnnpack::xnnpack_constant_base(valid.size());
  for (size_t i = 0; i < valid.size() && i < flatbuffer_end; ++i) {
    std::vector<uint8_t> blob = valid;
    blob[i] ^= 0xFF;
    try_blob(blob);
  }
  // Random multi-byte corruption.
  std::uniform_int_distribution<size_t> position(0, valid.size() - 1);
  std::uniform_int_distribution<int> byte(0, 255);
  for (int round = 0; round < 400; ++round) {
    std::vector<uint8_t> blob = valid;
    for (int k = 0; k < 4; ++k) blob[position(rng)] = static_cast<uint8_t>(byte(rng));
    try_blob(blob);
  }
  INFO("accepted corrupted blobs: " << accepted);
  SUCCEED();
}

TEST_CASE("xnnpack refuses arguments of the wrong size or type at execute", "[xnnpack]") {
  XnnpackRunner runner;
  REQUIRE(runner.init(small_graph().build()).ok());
  std::vector<XnnpackArg> args = {zeros(Shape{1, 3, 6, 5}), zeros(Shape{1, 4, 4, 4})};
  Status s = runner.execute(args);
  CHECK(s.error() == Error::InvalidArgument);
  CHECK(s.message() == "xnnpack: input 0: expected float32 [1, 3, 6, 6] (NCHW), 108 elements");
  args = {zeros(Shape{1, 3, 6, 6}), zeros(Shape{1, 4, 4, 4})};
  s = runner.execute(args, nullptr, DType::Int32);
  CHECK(s.error() == Error::InvalidArgument);
  std::vector<XnnpackArg> too_few = {zeros(Shape{1, 3, 6, 6})};
  CHECK(runner.execute(too_few).error() == Error::InvalidArgument);
  // Still usable afterwards.
  CHECK(runner.execute(args).ok());
}

TEST_CASE("xnnpack init, execute and destroy repeat without leaking pools or memory", "[xnnpack]") {
  const std::vector<uint8_t> blob = small_graph().build();
  const size_t pools_before = xnnpack::live_threadpool_count();
  std::vector<float> first;
  for (int round = 0; round < 25; ++round) {
    XnnpackRunner runner(round % 3);  // pools of 0 (all cores), 1 and 2 threads
    REQUIRE(runner.init(blob).ok());
    std::vector<XnnpackArg> args = {{Shape{1, 3, 6, 6}, std::vector<float>(108, 0.5f)},
                                    zeros(Shape{1, 4, 4, 4})};
    REQUIRE(runner.execute(args).ok());
    if (round == 0) first = args[1].data;
    CHECK(args[1].data == first);
  }
  CHECK(xnnpack::live_threadpool_count() == pools_before);
}

TEST_CASE("xnnpack delegates share one pool per thread count", "[xnnpack]") {
  const size_t before = xnnpack::live_threadpool_count();
  {
    XnnpackRunner a(2), b(2), c(1);
    REQUIRE(a.init(small_graph().build()).ok());
    REQUIRE(b.init(small_graph().build()).ok());
    CHECK(xnnpack::live_threadpool_count() == before + 1);
    REQUIRE(c.init(small_graph().build()).ok());
    CHECK(xnnpack::live_threadpool_count() == before + 2);
    a.reset();
    CHECK(xnnpack::live_threadpool_count() == before + 2);
  }
  CHECK(xnnpack::live_threadpool_count() == before);
  CHECK_FALSE(xnnpack::SharedThreadpool::acquire(-1).ok());
}

TEST_CASE("xnnpack pools have the threads asked for and run every task", "[xnnpack]") {
  for (int threads : {1, 2, 3}) {
    INFO("threads " << threads);
    auto pool = xnnpack::SharedThreadpool::acquire(threads);
    REQUIRE(pool.ok());
    CHECK(pthreadpool_get_threads_count(pool->get()) == static_cast<size_t>(threads));
    std::vector<std::atomic<int>> runs(37);
    pthreadpool_parallelize_1d(
        pool->get(), [](void* c, size_t i) { (*static_cast<std::vector<std::atomic<int>>*>(c))[i]++; }, &runs,
        runs.size(), 0);
    for (const auto& r : runs) CHECK(r.load() == 1);
  }
}

TEST_CASE("xnnpack is available on this machine", "[xnnpack]") {
  CHECK(xnnpack::xnnpack_backend()->is_available());
}

}  // namespace
}  // namespace etc
