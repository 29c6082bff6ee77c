// plan_stages (runtime/backends/xnnpack/stages.h): nodes split into XNNPACK
// and native stages, every activation shared, and buffers planned node by
// node so that tensors alive at once never share one and disjoint lifetimes
// reuse them (checked by running the plans too).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "runtime/backends/xnnpack/blob_reader.h"
#include "runtime/backends/xnnpack/stages.h"
#include "tests/support/native_nodes_fixtures.h"
#include "tests/support/xnnpack_blob_builder.h"

namespace etc {
namespace {

using namespace testing::native_nodes;
using testing::XnnpackArg;
using testing::XnnpackBlobBuilder;
using testing::XnnpackRunner;
using testing::zeros;
using xnnpack::fb::NodeType;

using xnnpack::kNoOffset;

xnnpack::StagePlan plan_of(const std::vector<uint8_t>& blob) {
  auto view = xnnpack::read_xnnpack_blob(blob.data(), blob.size());
  if (!view.ok()) FAIL(view.message());
  return xnnpack::plan_stages(view.get(), xnnpack::NativeConvolutions::kOff);
}

TEST_CASE("xnnpack plan_stages splits nodes into stages and plans a buffer for every activation",
          "[xnnpack]") {
  SECTION("runs of XNNPACK nodes and single native nodes") {
    // x -> Clamp -> a -> Abs -> b -> Slice -> c -> ChannelShuffle -> d
    //   -> Negate -> e -> Abs -> y; constant k added to e inside the last stage.
    XnnpackBlobBuilder b;
    const uint32_t x = b.input({1, 2, 2, 6}, 0);
    const uint32_t a = b.tensor({1, 2, 2, 6});
    const uint32_t bb = b.tensor({1, 2, 2, 6});
    const uint32_t c = b.tensor({1, 2, 2, 4});
    const uint32_t d = b.tensor({1, 2, 2, 4});
    const uint32_t e = b.tensor({1, 2, 2, 4});
    const uint32_t k = b.constant({4}, {1, 2, 3, 4});
    const uint32_t f = b.tensor({1, 2, 2, 4});
    const uint32_t y = b.output({1, 2, 2, 4}, 0);
    b.node(NodeType::Clamp, {x}, {a});
    b.node(NodeType::Abs, {a}, {bb});
    b.node(NodeType::Slice, {bb}, {c}).offsets = {0, 0, 0, 2};
    b.node(NodeType::ChannelShuffle, {c}, {d}).groups = 2;
    b.node(NodeType::Negate, {d}, {e});
    b.node(NodeType::Add, {e, k}, {f});
    b.node(NodeType::Abs, {f}, {y});
    const xnnpack::StagePlan plan = plan_of(b.build());
    REQUIRE(plan.stages.size() == 4);
    CHECK(!plan.stages[0].native);
    CHECK(plan.stages[0].first_node == 0);
    CHECK(plan.stages[0].end_node == 2);
    CHECK(plan.stages[1].native);
    CHECK(plan.stages[1].first_node == 2);
    CHECK(plan.stages[1].end_node == 3);
    CHECK(plan.stages[2].native);
    CHECK(plan.stages[2].first_node == 3);
    CHECK(plan.stages[2].end_node == 4);
    CHECK(!plan.stages[3].native);
    CHECK(plan.stages[3].first_node == 4);
    CHECK(plan.stages[3].end_node == 7);

    // Every activation is shared: buffers are planned over the whole
    // delegate, node by node, not left to per-stage XNNPACK arenas.
    REQUIRE(plan.shared.size() == 9);
    for (uint32_t t : {x, a, bb, c, d, e, f, y}) CHECK(plan.shared[t]);
    CHECK(!plan.shared[k]);  // constant

    REQUIRE(plan.offset_of.size() == 9);
    for (uint32_t t : {x, k, y}) CHECK(plan.offset_of[t] == kNoOffset);  // arguments and constants
    const std::vector<uint32_t> chain = {a, bb, c, d, e, f};
    const std::vector<int64_t> floats = {24, 24, 16, 16, 16, 16};
    for (size_t i = 0; i < chain.size(); ++i) {
      REQUIRE(plan.offset_of[chain[i]] != kNoOffset);
      CHECK(plan.offset_of[chain[i]] % 16 == 0);  // 64-byte aligned
      CHECK(plan.offset_of[chain[i]] + floats[i] <= static_cast<int64_t>(plan.arena_elements));
    }
    // Each node reads one intermediate and writes the next: the two never
    // share memory, and two tensors' room (24 floats each, aligned to 32)
    // serves the whole chain.
    for (size_t i = 0; i + 1 < chain.size(); ++i) {
      const int64_t p = plan.offset_of[chain[i]], q = plan.offset_of[chain[i + 1]];
      CHECK((p + floats[i] <= q || q + floats[i + 1] <= p));
    }
    CHECK(plan.arena_elements == 64);
  }
  SECTION("a graph of only XNNPACK nodes is one stage; its intermediate gets a planned buffer") {
    XnnpackBlobBuilder b;
    const uint32_t x = b.input({2, 3}, 0);
    const uint32_t a = b.tensor({2, 3});
    const uint32_t y = b.output({2, 3}, 0);
    b.node(NodeType::Abs, {x}, {a});
    b.node(NodeType::Negate, {a}, {y});
    const xnnpack::StagePlan plan = plan_of(b.build());
    REQUIRE(plan.stages.size() == 1);
    CHECK(!plan.stages[0].native);
    CHECK(plan.shared == std::vector<bool>{true, true, true});
    CHECK(plan.offset_of[x] == kNoOffset);
    CHECK(plan.offset_of[y] == kNoOffset);
    CHECK(plan.offset_of[a] == 0);
    CHECK(plan.arena_elements == 16);  // 6 floats, 64-byte aligned
  }
}

// x [1,4,4,8] -> Clamp -> t1 [1,4,4,8] -> Slice -> t2 [1,4,4,6] -> Clamp -> t3
// [1,4,4,6] -> Slice -> t4 [1,4,4,4] -> Clamp -> y.
struct Chain {
  std::vector<uint8_t> blob;
  uint32_t t[4];
};

Chain clamp_slice_chain() {
  XnnpackBlobBuilder b;
  Chain chain;
  const uint32_t x = b.input({1, 4, 4, 8}, 0);
  chain.t[0] = b.tensor({1, 4, 4, 8});
  chain.t[1] = b.tensor({1, 4, 4, 6});
  chain.t[2] = b.tensor({1, 4, 4, 6});
  chain.t[3] = b.tensor({1, 4, 4, 4});
  const uint32_t y = b.output({1, 4, 4, 4}, 0);
  auto& c0 = b.node(NodeType::Clamp, {x}, {chain.t[0]});
  c0.output_min = -3;
  c0.output_max = 3;
  b.node(NodeType::Slice, {chain.t[0]}, {chain.t[1]}).offsets = {0, 0, 0, 1};
  auto& c1 = b.node(NodeType::Clamp, {chain.t[1]}, {chain.t[2]});
  c1.output_min = -2;
  c1.output_max = 2.5f;
  b.node(NodeType::Slice, {chain.t[2]}, {chain.t[3]}).offsets = {0, 0, 0, 2};
  auto& c2 = b.node(NodeType::Clamp, {chain.t[3]}, {y});
  c2.output_min = -1.5f;
  c2.output_max = 1;
  chain.blob = b.build();
  return chain;
}

TEST_CASE("xnnpack plan_stages places shared intermediates with disjoint lifetimes in shared memory",
          "[xnnpack]") {
  SECTION("a chain of XNNPACK and native stages") {
    const Chain chain = clamp_slice_chain();
    const xnnpack::StagePlan plan = plan_of(chain.blob);
    REQUIRE(plan.stages.size() == 5);
    const size_t sizes[] = {128, 96, 96, 64};
    for (size_t i = 0; i < 4; ++i) {
      CHECK(plan.shared[chain.t[i]]);
      REQUIRE(plan.offset_of[chain.t[i]] != kNoOffset);
      CHECK(static_cast<size_t>(plan.offset_of[chain.t[i]]) + sizes[i] <= plan.arena_elements);
    }
    // Neighbours are live together, so their ranges are apart; t1/t3 and
    // t2/t4 are not, so the arena holds the largest pair: 128 + 96 floats.
    for (size_t i = 0; i < 3; ++i) {
      const int64_t p = plan.offset_of[chain.t[i]], q = plan.offset_of[chain.t[i + 1]];
      CHECK((p + static_cast<int64_t>(sizes[i]) <= q || q + static_cast<int64_t>(sizes[i + 1]) <= p));
    }
    CHECK(plan.arena_elements == 224);

    // And the chain computes through the reused buffers.
    for (int threads : {1, 2}) {
      XnnpackRunner runner(threads);
      REQUIRE(runner.init(chain.blob).ok());
      for (size_t phase : {0, 3}) {
        const std::vector<float> x = wave(128, phase);
        std::vector<XnnpackArg> args{{Shape{1, 4, 4, 8}, x}, zeros(Shape{1, 4, 4, 4})};
        REQUIRE(runner.execute(args).ok());
        std::vector<float> expected(64);
        for (size_t p = 0; p < 16; ++p)
          for (size_t c = 0; c < 4; ++c) {
            const float t0 = clamp({x[p * 8 + 1 + 2 + c]}, -3, 3)[0];
            expected[p * 4 + c] = clamp({clamp({t0}, -2, 2.5f)[0]}, -1.5f, 1)[0];
          }
        CHECK(args[1].data == expected);
      }
    }
  }
  SECTION("growing intermediates: placed largest first, a dead one's room reused") {
    // x [1,2,2,2] ++ x -> t1 [..,4] ++ t1 -> t2 [..,8] ++ t2 -> t3 [..,16] -> Clamp -> y.
    XnnpackBlobBuilder b;
    const uint32_t x = b.input({1, 2, 2, 2}, 0);
    const uint32_t t1 = b.tensor({1, 2, 2, 4});
    const uint32_t t2 = b.tensor({1, 2, 2, 8});
    const uint32_t t3 = b.tensor({1, 2, 2, 16});
    const uint32_t y = b.output({1, 2, 2, 16}, 0);
    b.node(NodeType::Concatenate, {x, x}, {t1}).axis = 3;
    b.node(NodeType::Concatenate, {t1, t1}, {t2}).axis = 3;
    b.node(NodeType::Concatenate, {t2, t2}, {t3}).axis = 3;
    auto& c = b.node(NodeType::Clamp, {t3}, {y});
    c.output_min = 1;
    c.output_max = 2;
    const std::vector<uint8_t> blob = b.build();
    const xnnpack::StagePlan plan = plan_of(blob);
    REQUIRE(plan.stages.size() == 4);
    const uint32_t ts[] = {t1, t2, t3};
    const size_t sizes[] = {16, 32, 64};
    for (size_t i = 0; i < 3; ++i) {
      REQUIRE(plan.offset_of[ts[i]] != kNoOffset);
      CHECK(static_cast<size_t>(plan.offset_of[ts[i]]) + sizes[i] <= plan.arena_elements);
    }
    // Largest first: t3 at 0, t2 (live with t3) after it, t1 (dead before
    // t3 is written) back at 0.
    CHECK(plan.offset_of[t3] == 0);
    CHECK(plan.offset_of[t2] == 64);
    CHECK(plan.offset_of[t1] == 0);
    CHECK(plan.arena_elements == 96);

    const std::vector<float> in = ramp(8, 0.5f);  // 0.5 .. 2.25
    const auto out = run_blob(blob, {{{1, 2, 2, 2}, in}}, {{1, 2, 2, 16}}, 2)[0];
    std::vector<float> expected;
    for (size_t p = 0; p < 4; ++p)
      for (size_t r = 0; r < 8; ++r)
        for (size_t c2 = 0; c2 < 2; ++c2) expected.push_back(clamp({in[p * 2 + c2]}, 1, 2)[0]);
    CHECK(out == expected);
  }
}

TEST_CASE("xnnpack plan_stages lets an elementwise native node write over an input that dies with it",
          "[xnnpack]") {
  // x -> Clamp [-3, 3] -> a; a * s (ChannelScale) -> b; tanh(b) (UnaryMath)
  // -> c; then Clamp [-0.5, 0.5] -> y, or with `a_read_later` Add(a, c) -> y.
  for (bool a_read_later : {false, true}) {
    INFO("a read after the scale: " << a_read_later);
    XnnpackBlobBuilder b;
    const uint32_t x = b.input({1, 4, 4, 8}, 0);
    const uint32_t s = b.input({1, 1, 1, 8}, 1);
    const uint32_t a = b.tensor({1, 4, 4, 8});
    const uint32_t bt = b.tensor({1, 4, 4, 8});
    const uint32_t c = b.tensor({1, 4, 4, 8});
    const uint32_t y = b.output({1, 4, 4, 8}, 0);
    auto& first = b.node(NodeType::Clamp, {x}, {a});
    first.output_min = -3, first.output_max = 3;
    b.node(NodeType::ChannelScale, {a, s}, {bt});
    b.node(NodeType::UnaryMath, {bt}, {c});  // tanh
    if (a_read_later) {
      b.node(NodeType::Add, {a, c}, {y});
    } else {
      auto& last = b.node(NodeType::Clamp, {c}, {y});
      last.output_min = -0.5f, last.output_max = 0.5f;
    }
    const std::vector<uint8_t> blob = b.build();
    const xnnpack::StagePlan plan = plan_of(blob);
    for (uint32_t t : {a, bt, c}) REQUIRE(plan.offset_of[t] != kNoOffset);
    // tanh's input b dies with it either way: c takes b's memory.
    CHECK(plan.offset_of[c] == plan.offset_of[bt]);
    if (a_read_later) {
      // a lives on past the scale, so b has memory of its own.
      CHECK(std::abs(plan.offset_of[bt] - plan.offset_of[a]) >= 128);
      CHECK(plan.arena_elements == 256);
    } else {
      CHECK(plan.offset_of[bt] == plan.offset_of[a]);
      CHECK(plan.arena_elements == 128);
    }
    const std::vector<float> xs = wave(128, 5), gate = {0.5f, -1, 2, 0.25f, 1, -0.5f, 3, 0};
    std::vector<float> want(128);
    for (size_t i = 0; i < 128; ++i) {
      const float av = std::min(std::max(xs[i], -3.0f), 3.0f);
      const float cv = std::tanh(av * gate[i % 8]);
      want[i] = a_read_later ? av + cv : std::min(std::max(cv, -0.5f), 0.5f);
    }
    for (int threads : {1, 2}) {
      const auto got = run_blob(blob, {{{1, 4, 4, 8}, xs}, {{1, 1, 1, 8}, gate}}, {{1, 4, 4, 8}}, threads)[0];
      for (size_t i = 0; i < 128; ++i) REQUIRE(std::abs(got[i] - want[i]) < 1e-6f);
    }
  }
}

}  // namespace
}  // namespace etc

namespace etc {
namespace {

TEST_CASE("xnnpack plan_stages runs small and memory-bound nodes serially, in stages of their own",
          "[xnnpack]") {
  // x (small) -> Sigmoid -> added to a large input (memory-bound) -> Sigmoid
  // (large: parallel) -> y
  testing::XnnpackBlobBuilder b;
  const uint32_t x = b.input({1, 1, 1, 32}, 0);      // 32 elements
  const uint32_t big = b.input({1, 64, 64, 32}, 1);  // 131072 elements
  const uint32_t a = b.tensor({1, 1, 1, 32});
  const uint32_t d = b.tensor({1, 64, 64, 32});
  const uint32_t y = b.output({1, 64, 64, 32}, 0);
  b.node(xnnpack::fb::NodeType::Sigmoid, {x}, {a});
  b.node(xnnpack::fb::NodeType::Add, {big, a}, {d});
  b.node(xnnpack::fb::NodeType::Sigmoid, {d}, {y});
  const std::vector<uint8_t> blob = b.build();
  auto view = xnnpack::read_xnnpack_blob(blob.data(), blob.size());
  REQUIRE(view.ok());
  const xnnpack::StagePlan plan = xnnpack::plan_stages(view.get(), xnnpack::NativeConvolutions::kOff);
  REQUIRE(plan.stages.size() == 2);
  CHECK(plan.stages[0].serial);
  CHECK(plan.stages[0].end_node == 2);
  CHECK(!plan.stages[1].serial);
  CHECK(plan.stages[1].first_node == 2);
  const xnnpack::fb::Graph* g = view.get().graph;
  CHECK(xnnpack::is_small_node(view.get(), *g->nodes()->Get(0)));
  CHECK(xnnpack::is_small_node(view.get(), *g->nodes()->Get(1)));
  CHECK(!xnnpack::is_small_node(view.get(), *g->nodes()->Get(2)));
}

}  // namespace
}  // namespace etc
