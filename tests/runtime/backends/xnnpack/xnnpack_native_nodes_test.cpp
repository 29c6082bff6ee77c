// The XNNPACK backend's native nodes (concatenate, slice, channel shuffle)
// compute what the blob schema documents, checked element for element
// against plain reference loops; they mix with XNNPACK stages (values
// crossing runtimes, delegate arguments read or written by native nodes,
// shared buffers reused); defective native nodes are refused at init,
// naming the node. Stage plans: xnnpack_stages_test.cpp.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
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
using xnnpack::fb::BoundaryLayout;
using xnnpack::fb::NodeType;

std::vector<size_t> unravel(size_t flat, const Dims& dims) {
  std::vector<size_t> idx(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    idx[d] = flat % dims[d];
    flat /= dims[d];
  }
  return idx;
}

size_t ravel(const std::vector<size_t>& idx, const Dims& dims) {
  size_t flat = 0;
  for (size_t d = 0; d < dims.size(); ++d) flat = flat * dims[d] + idx[d];
  return flat;
}

// out[..., k, ...] = input j at [..., k - (sizes of inputs before j), ...].
std::vector<float> reference_concat(const std::vector<Operand>& inputs, const Dims& out_dims, size_t axis) {
  std::vector<float> out(numel(out_dims));
  for (size_t i = 0; i < out.size(); ++i) {
    std::vector<size_t> idx = unravel(i, out_dims);
    size_t j = 0;
    while (idx[axis] >= inputs[j].dims[axis]) idx[axis] -= inputs[j++].dims[axis];
    out[i] = inputs[j].data[ravel(idx, inputs[j].dims)];
  }
  return out;
}

std::vector<float> reference_slice(const Operand& in, const Dims& out_dims, const Dims& offsets) {
  std::vector<float> out(numel(out_dims));
  for (size_t i = 0; i < out.size(); ++i) {
    std::vector<size_t> idx = unravel(i, out_dims);
    for (size_t d = 0; d < idx.size(); ++d) idx[d] += offsets[d];
    out[i] = in.data[ravel(idx, in.dims)];
  }
  return out;
}

std::vector<float> reference_shuffle(const std::vector<float>& in, size_t c, size_t groups) {
  std::vector<float> out(in.size());
  const size_t per_group = c / groups;
  for (size_t p = 0; p < in.size() / c; ++p)
    for (size_t i = 0; i < groups; ++i)
      for (size_t j = 0; j < per_group; ++j) out[p * c + j * groups + i] = in[p * c + i * per_group + j];
  return out;
}

// One concatenate of delegate inputs into the delegate output.
std::vector<float> run_concat(const std::vector<Operand>& inputs, const Dims& out_dims, uint32_t axis,
                              int num_threads = 0) {
  XnnpackBlobBuilder b;
  std::vector<uint32_t> ids;
  for (size_t i = 0; i < inputs.size(); ++i) ids.push_back(b.input(inputs[i].dims, static_cast<int>(i)));
  const uint32_t y = b.output(out_dims, 0);
  b.node(NodeType::Concatenate, ids, {y}).axis = axis;
  return run_blob(b.build(), inputs, {out_dims}, num_threads)[0];
}

std::vector<float> run_slice(const Operand& in, const Dims& out_dims, const Dims& offsets,
                             int num_threads = 0) {
  XnnpackBlobBuilder b;
  const uint32_t x = b.input(in.dims, 0);
  const uint32_t y = b.output(out_dims, 0);
  b.node(NodeType::Slice, {x}, {y}).offsets = offsets;
  return run_blob(b.build(), {in}, {out_dims}, num_threads)[0];
}

std::vector<float> run_shuffle(const Operand& in, uint32_t groups, int num_threads = 0) {
  XnnpackBlobBuilder b;
  const uint32_t x = b.input(in.dims, 0);
  const uint32_t y = b.output(in.dims, 0);
  b.node(NodeType::ChannelShuffle, {x}, {y}).groups = groups;
  return run_blob(b.build(), {in}, {in.dims}, num_threads)[0];
}

TEST_CASE("xnnpack native concatenate joins along channels, rows and batches", "[xnnpack]") {
  SECTION("two NHWC tensors along channels (axis 3)") {
    const Operand a{{1, 2, 3, 2}, ramp(12, 1)}, c{{1, 2, 3, 5}, ramp(30, 100)};
    const Dims out{1, 2, 3, 7};
    const auto y = run_concat({a, c}, out, 3);
    CHECK(y == reference_concat({a, c}, out, 3));
    // Pixel 0: a's two channels, then c's five.
    CHECK(std::vector<float>(y.begin(), y.begin() + 7) ==
          std::vector<float>{1, 1.25f, 100, 100.25f, 100.5f, 100.75f, 101});
  }
  SECTION("three NHWC tensors of 3, 1 and 4 channels along axis 3") {
    const Operand a{{2, 3, 2, 3}, ramp(36, -5)}, c{{2, 3, 2, 1}, ramp(12, 50)},
        d{{2, 3, 2, 4}, ramp(48, 200)};
    const Dims out{2, 3, 2, 8};
    CHECK(run_concat({a, c, d}, out, 3) == reference_concat({a, c, d}, out, 3));
  }
  SECTION("along H (axis 1), with two batches") {
    const Operand a{{2, 1, 3, 2}, ramp(12, 1)}, c{{2, 3, 3, 2}, ramp(36, 40)};
    const Dims out{2, 4, 3, 2};
    const auto y = run_concat({a, c}, out, 1);
    CHECK(y == reference_concat({a, c}, out, 1));
    // Batch 1 starts with a's second row.
    CHECK(y[24] == a.data[6]);
  }
  SECTION("along W (axis 2) and along the batch (axis 0)") {
    const Operand a{{2, 2, 1, 3}, ramp(12, 1)}, c{{2, 2, 2, 3}, ramp(24, -30)};
    CHECK(run_concat({a, c}, {2, 2, 3, 3}, 2) == reference_concat({a, c}, {2, 2, 3, 3}, 2));
    const Operand e{{1, 2, 2, 3}, ramp(12, 9)};
    CHECK(run_concat({c, e}, {3, 2, 2, 3}, 0) == reference_concat({c, e}, {3, 2, 2, 3}, 0));
  }
  SECTION("rank 2 and a single input") {
    const Operand a{{3, 2}, ramp(6, 1)}, c{{3, 4}, ramp(12, 20)};
    CHECK(run_concat({a, c}, {3, 6}, 1) == reference_concat({a, c}, {3, 6}, 1));
    CHECK(run_concat({c}, {3, 4}, 1) == c.data);
  }
  SECTION("large enough to split across threads, 1 and 2 threads agree") {
    const Operand a{{1, 32, 32, 24}, ramp(32 * 32 * 24, -1000)}, c{{1, 32, 32, 40}, wave(32 * 32 * 40)};
    const Dims out{1, 32, 32, 64};
    const auto expected = reference_concat({a, c}, out, 3);
    CHECK(run_concat({a, c}, out, 3, 1) == expected);
    CHECK(run_concat({a, c}, out, 3, 2) == expected);
    const Operand h{{1, 7, 32, 64}, ramp(7 * 32 * 64, 3)};
    const Dims out_h{1, 39, 32, 64};
    CHECK(run_concat({h, {out, expected}}, out_h, 1, 2) == reference_concat({h, {out, expected}}, out_h, 1));
  }
}

TEST_CASE("xnnpack native slice copies a window", "[xnnpack]") {
  const Operand x{{2, 5, 6, 8}, ramp(2 * 5 * 6 * 8, -20)};
  SECTION("a channel window (offsets {0, 0, 0, k})") {
    for (uint64_t k : {0, 2, 5}) {
      INFO("k = " << k);
      const Dims out{2, 5, 6, 3};
      const auto y = run_slice(x, out, {0, 0, 0, k});
      CHECK(y == reference_slice(x, out, {0, 0, 0, k}));
      CHECK(y[0] == x.data[k]);
    }
  }
  SECTION("a spatial window (offsets in H and W)") {
    const Dims out{2, 2, 3, 8};
    CHECK(run_slice(x, out, {0, 1, 2, 0}) == reference_slice(x, out, {0, 1, 2, 0}));
    // Whole rows of W: the window is contiguous per batch.
    const Dims rows{2, 3, 6, 8};
    CHECK(run_slice(x, rows, {0, 2, 0, 0}) == reference_slice(x, rows, {0, 2, 0, 0}));
  }
  SECTION("a window in every dimension, ending at the input's end") {
    const Dims out{1, 3, 2, 4};
    CHECK(run_slice(x, out, {1, 2, 4, 4}) == reference_slice(x, out, {1, 2, 4, 4}));
    const Dims inner{2, 4, 5, 6};
    CHECK(run_slice(x, inner, {0, 1, 1, 1}) == reference_slice(x, inner, {0, 1, 1, 1}));
  }
  SECTION("the whole tensor") { CHECK(run_slice(x, x.dims, {0, 0, 0, 0}) == x.data); }
  SECTION("one batch, and ranks 1 and 2") {
    CHECK(run_slice(x, {1, 5, 6, 8}, {1, 0, 0, 0}) == std::vector<float>(x.data.begin() + 240, x.data.end()));
    const Operand v{{10}, ramp(10, 0)};
    CHECK(run_slice(v, {4}, {3}) == std::vector<float>{0.75f, 1, 1.25f, 1.5f});
    const Operand m{{4, 5}, ramp(20, 0)};
    CHECK(run_slice(m, {2, 3}, {1, 2}) == reference_slice(m, {2, 3}, {1, 2}));
  }
  SECTION("large enough to split across threads, 1 and 2 threads agree") {
    const Operand big{{2, 40, 32, 24}, ramp(2 * 40 * 32 * 24, -3000)};
    const Dims out{2, 33, 30, 8};
    const auto expected = reference_slice(big, out, {0, 5, 1, 9});
    CHECK(run_slice(big, out, {0, 5, 1, 9}, 1) == expected);
    CHECK(run_slice(big, out, {0, 5, 1, 9}, 2) == expected);
  }
}

TEST_CASE("xnnpack native channel shuffle interleaves the groups", "[xnnpack]") {
  SECTION("known permutations of six channels") {
    const Operand x{{1, 1, 1, 6}, {0, 1, 2, 3, 4, 5}};
    CHECK(run_shuffle(x, 2) == std::vector<float>{0, 3, 1, 4, 2, 5});
    CHECK(run_shuffle(x, 3) == std::vector<float>{0, 2, 4, 1, 3, 5});
    CHECK(run_shuffle(x, 1) == x.data);
    CHECK(run_shuffle(x, 6) == x.data);
  }
  SECTION("groups 2 and 3 on NHWC tensors") {
    const Operand x{{2, 3, 4, 12}, ramp(2 * 3 * 4 * 12, -7)};
    CHECK(run_shuffle(x, 2) == reference_shuffle(x.data, 12, 2));
    CHECK(run_shuffle(x, 3) == reference_shuffle(x.data, 12, 3));
    CHECK(run_shuffle(x, 4) == reference_shuffle(x.data, 12, 4));
    const Operand z{{1, 5, 5, 9}, ramp(225, 2)};
    CHECK(run_shuffle(z, 3) == reference_shuffle(z.data, 9, 3));
  }
  SECTION("large enough to split across threads, 1 and 2 threads agree") {
    const Operand big{{1, 48, 48, 24}, ramp(48 * 48 * 24, -5000)};
    const auto expected = reference_shuffle(big.data, 24, 3);
    CHECK(run_shuffle(big, 3, 1) == expected);
    CHECK(run_shuffle(big, 3, 2) == expected);
  }
}

// x [1,4,4,6] -> Clamp -> a -> Slice(channels 1..4) -> s -> Clamp -> t
//   -> Add(t, s) -> u; Slice(x, channels 4..5) -> v (native reads the
//   delegate input); Concatenate(u, v) -> y (delegate output 0, written by a
//   native node); y -> Clamp -> z (delegate output 1, XNNPACK reads a
//   delegate output).
// Stages: [Clamp] [Slice] [Clamp, Add] [Slice] [Concatenate] [Clamp].
const Dims kMixedIn{1, 4, 4, 6};

std::vector<uint8_t> mixed_blob() {
  XnnpackBlobBuilder b;
  const uint32_t x = b.input(kMixedIn, 0);
  const uint32_t a = b.tensor({1, 4, 4, 6});
  const uint32_t s = b.tensor({1, 4, 4, 4});
  const uint32_t t = b.tensor({1, 4, 4, 4});
  const uint32_t u = b.tensor({1, 4, 4, 4});
  const uint32_t v = b.tensor({1, 4, 4, 2});
  const uint32_t y = b.output({1, 4, 4, 6}, 0);
  const uint32_t z = b.output({1, 4, 4, 6}, 1);
  auto& c0 = b.node(NodeType::Clamp, {x}, {a});
  c0.output_min = -2;
  c0.output_max = 2;
  b.node(NodeType::Slice, {a}, {s}).offsets = {0, 0, 0, 1};
  auto& c1 = b.node(NodeType::Clamp, {s}, {t});
  c1.output_min = -1;
  c1.output_max = 1.5f;
  b.node(NodeType::Add, {t, s}, {u});
  b.node(NodeType::Slice, {x}, {v}).offsets = {0, 0, 0, 4};
  b.node(NodeType::Concatenate, {u, v}, {y}).axis = 3;
  auto& c2 = b.node(NodeType::Clamp, {y}, {z});
  c2.output_min = -3;
  c2.output_max = 3;
  return b.build();
}

void mixed_reference(const std::vector<float>& x, std::vector<float>& y, std::vector<float>& z) {
  y.assign(x.size(), 0);
  for (size_t p = 0; p < 16; ++p) {
    for (size_t c = 0; c < 4; ++c) {
      float s = x[p * 6 + 1 + c];
      s = s < -2 ? -2 : (s > 2 ? 2 : s);
      const float t = s < -1 ? -1 : (s > 1.5f ? 1.5f : s);
      y[p * 6 + c] = t + s;
    }
    y[p * 6 + 4] = x[p * 6 + 4];
    y[p * 6 + 5] = x[p * 6 + 5];
  }
  z = clamp(y, -3, 3);
}

TEST_CASE("xnnpack native nodes mix with XNNPACK stages", "[xnnpack]") {
  const std::vector<uint8_t> blob = mixed_blob();
  {
    auto view = xnnpack::read_xnnpack_blob(blob.data(), blob.size());
    REQUIRE(view.ok());
    const xnnpack::StagePlan plan = xnnpack::plan_stages(view.get(), xnnpack::NativeConvolutions::kOff);
    REQUIRE(plan.stages.size() == 6);
    const bool native[] = {false, true, false, true, true, false};
    for (size_t s = 0; s < 6; ++s) CHECK(plan.stages[s].native == native[s]);
  }
  std::vector<float> y_ref, z_ref;
  const std::vector<float> x0 = wave(96), x1 = wave(96, 5);
  std::vector<std::vector<float>> results;
  for (int threads : {1, 2}) {
    INFO(threads << " threads");
    XnnpackRunner runner(threads);
    const Status s = runner.init(blob);
    INFO(s.message());
    REQUIRE(s.ok());
    // Two runs with new values (and new argument buffers): nothing stale.
    for (const std::vector<float>* x : {&x0, &x1}) {
      std::vector<XnnpackArg> args{
          {to_shape(kMixedIn), *x}, zeros(to_shape(kMixedIn)), zeros(to_shape(kMixedIn))};
      const Status e = runner.execute(args);
      INFO(e.message());
      REQUIRE(e.ok());
      mixed_reference(*x, y_ref, z_ref);
      CHECK(args[1].data == y_ref);
      CHECK(args[2].data == z_ref);
      results.push_back(args[1].data);
      results.push_back(args[2].data);
    }
  }
  REQUIRE(results.size() == 8);
  for (size_t i = 0; i < 4; ++i) CHECK(results[i] == results[i + 4]);
  CHECK(results[0] != results[2]);  // the two inputs differ
}

TEST_CASE("xnnpack native nodes at NCHW boundaries and on constants", "[xnnpack]") {
  SECTION("an NCHW input shuffled into an NCHW output, no XNNPACK stage") {
    // NCHW [1, 6, 2, 3]: XNNPACK dims [1, 2, 3, 6].
    XnnpackBlobBuilder b;
    const uint32_t x = b.input({1, 2, 3, 6}, 0, BoundaryLayout::NchwToNhwc);
    const uint32_t y = b.output({1, 2, 3, 6}, 0, BoundaryLayout::NhwcToNchw);
    b.node(NodeType::ChannelShuffle, {x}, {y}).groups = 3;
    const std::vector<float> in = ramp(36, 0);
    for (int threads : {1, 2}) {
      XnnpackRunner runner(threads);
      REQUIRE(runner.init(b.build()).ok());
      std::vector<XnnpackArg> args{{Shape{1, 6, 2, 3}, in}, zeros(Shape{1, 6, 2, 3})};
      REQUIRE(runner.execute(args).ok());
      // In NCHW the shuffle moves whole channel planes: out plane j*3+i is
      // in plane i*2+j.
      std::vector<float> expected(36);
      for (size_t i = 0; i < 3; ++i)
        for (size_t j = 0; j < 2; ++j)
          for (size_t p = 0; p < 6; ++p) expected[(j * 3 + i) * 6 + p] = in[(i * 2 + j) * 6 + p];
      CHECK(args[1].data == expected);
    }
  }
  SECTION("an NCHW input sliced, clamped and concatenated with a constant into an NCHW output") {
    // x NCHW [1, 4, 3, 3] -> channels 1..2 -> Clamp -> ++ constant channel -> NCHW [1, 3, 3, 3].
    XnnpackBlobBuilder b;
    const uint32_t x = b.input({1, 3, 3, 4}, 0, BoundaryLayout::NchwToNhwc);
    const uint32_t s = b.tensor({1, 3, 3, 2});
    const uint32_t t = b.tensor({1, 3, 3, 2});
    const std::vector<float> k_data = ramp(9, 10);
    const uint32_t k = b.constant({1, 3, 3, 1}, k_data);
    const uint32_t y = b.output({1, 3, 3, 3}, 0, BoundaryLayout::NhwcToNchw);
    b.node(NodeType::Slice, {x}, {s}).offsets = {0, 0, 0, 1};
    auto& c = b.node(NodeType::Clamp, {s}, {t});
    c.output_min = -1;
    c.output_max = 1;
    b.node(NodeType::Concatenate, {t, k}, {y}).axis = 3;
    XnnpackRunner runner;
    REQUIRE(runner.init(b.build()).ok());
    // The blob is freed after init: the constant must have been copied.
    std::fill(runner.blob().begin(), runner.blob().end(), uint8_t{0xff});
    const std::vector<float> in = wave(36);
    std::vector<XnnpackArg> args{{Shape{1, 4, 3, 3}, in}, zeros(Shape{1, 3, 3, 3})};
    REQUIRE(runner.execute(args).ok());
    std::vector<float> expected(27);
    for (size_t p = 0; p < 9; ++p) {
      expected[0 * 9 + p] = clamp({in[1 * 9 + p]}, -1, 1)[0];
      expected[1 * 9 + p] = clamp({in[2 * 9 + p]}, -1, 1)[0];
      expected[2 * 9 + p] = k_data[p];
    }
    CHECK(args[1].data == expected);
  }
}

Status init_blob(const std::vector<uint8_t>& blob) {
  XnnpackRunner runner;
  return runner.init(blob);
}

void check_refused(const std::vector<uint8_t>& blob, const std::string& words) {
  const Status s = init_blob(blob);
  INFO(s.message());
  CHECK(s.error() == Error::InvalidProgram);
  CHECK(s.message().find(words) != std::string::npos);
}

TEST_CASE("xnnpack refuses defective native nodes, naming the node", "[xnnpack]") {
  SECTION("concatenate axis out of range") {
    XnnpackBlobBuilder b;
    const uint32_t x = b.input({1, 2, 2, 3}, 0);
    const uint32_t y = b.output({1, 2, 2, 3}, 0);
    b.node(NodeType::Concatenate, {x}, {y}).axis = 4;
    check_refused(b.build(), "node 0 (Concatenate): axis 4 of a rank-4 output");
  }
  SECTION("concatenate inputs whose off-axis dims differ") {
    XnnpackBlobBuilder b;
    const uint32_t x0 = b.input({1, 2, 2, 3}, 0);
    const uint32_t x1 = b.input({1, 2, 3, 2}, 1);
    const uint32_t y = b.output({1, 2, 2, 5}, 0);
    b.node(NodeType::Concatenate, {x0, x1}, {y}).axis = 3;
    check_refused(b.build(), "node 0 (Concatenate): input 1 has dims [1, 2, 3, 2]");
  }
  SECTION("concatenate input of another rank") {
    XnnpackBlobBuilder b;
    const uint32_t x0 = b.input({1, 2, 2, 3}, 0);
    const uint32_t x1 = b.input({2, 2, 2}, 1);
    const uint32_t y = b.output({1, 2, 2, 5}, 0);
    b.node(NodeType::Concatenate, {x0, x1}, {y}).axis = 3;
    check_refused(b.build(), "node 0 (Concatenate): input 1 has dims [2, 2, 2]");
  }
  SECTION("concatenate inputs that do not sum to the output") {
    for (uint64_t c : {4, 6}) {
      XnnpackBlobBuilder b;
      const uint32_t x0 = b.input({1, 2, 2, 3}, 0);
      const uint32_t x1 = b.input({1, 2, 2, 2}, 1);
      const uint32_t y = b.output({1, 2, 2, c}, 0);
      b.node(NodeType::Concatenate, {x0, x1}, {y}).axis = 3;
      check_refused(b.build(),
                    "node 0 (Concatenate): the inputs hold 5 along axis 3, the output " + std::to_string(c));
    }
  }
  SECTION("concatenate with no inputs") {
    XnnpackBlobBuilder b;
    b.input({1, 2, 2, 3}, 0);
    const uint32_t y = b.output({1, 2, 2, 3}, 0);
    b.node(NodeType::Concatenate, {}, {y}).axis = 3;
    check_refused(b.build(), "node 0 (Concatenate): 0 inputs");
  }
  SECTION("slice window past the input end") {
    XnnpackBlobBuilder b;
    const uint32_t x = b.input({1, 4, 4, 8}, 0);
    const uint32_t y = b.output({1, 4, 4, 4}, 0);
    b.node(NodeType::Slice, {x}, {y}).offsets = {0, 0, 0, 5};
    check_refused(b.build(), "node 0 (Slice): the window at offset 5");
  }
  SECTION("slice window past the end in a spatial dimension, after an XNNPACK node") {
    XnnpackBlobBuilder b;
    const uint32_t x = b.input({1, 4, 4, 8}, 0);
    const uint32_t a = b.tensor({1, 4, 4, 8});
    const uint32_t y = b.output({1, 2, 2, 8}, 0);
    b.node(NodeType::Abs, {x}, {a});
    b.node(NodeType::Slice, {a}, {y}).offsets = {0, 3, 0, 0};
    check_refused(b.build(), "node 1 (Slice): the window at offset 3");
  }
  SECTION("slice offset beyond the input (no overflow)") {
    XnnpackBlobBuilder b;
    const uint32_t x = b.input({1, 4, 4, 8}, 0);
    const uint32_t y = b.output({1, 4, 4, 4}, 0);
    b.node(NodeType::Slice, {x}, {y}).offsets = {0, 0, 0, ~uint64_t{0}};
    check_refused(b.build(), "node 0 (Slice): the window at offset");
  }
  SECTION("slice output larger than the input") {
    XnnpackBlobBuilder b;
    const uint32_t x = b.input({1, 4, 4, 8}, 0);
    const uint32_t y = b.output({1, 5, 4, 8}, 0);
    b.node(NodeType::Slice, {x}, {y}).offsets = {0, 0, 0, 0};
    check_refused(b.build(), "node 0 (Slice): the window at offset 0");
  }
  SECTION("slice offsets of the wrong rank, or none") {
    for (const Dims& offsets : {Dims{0, 0, 1}, Dims{0, 0, 0, 0, 0}, Dims{}}) {
      XnnpackBlobBuilder b;
      const uint32_t x = b.input({1, 4, 4, 8}, 0);
      const uint32_t y = b.output({1, 4, 4, 4}, 0);
      b.node(NodeType::Slice, {x}, {y}).offsets = offsets;
      check_refused(b.build(), "node 0 (Slice): input, output and offsets must have the same rank");
    }
  }
  SECTION("slice output of another rank") {
    XnnpackBlobBuilder b;
    const uint32_t x = b.input({1, 4, 4, 8}, 0);
    const uint32_t y = b.output({4, 4, 4}, 0);
    b.node(NodeType::Slice, {x}, {y}).offsets = {0, 0, 0};
    check_refused(b.build(), "node 0 (Slice): input, output and offsets must have the same rank");
  }
  SECTION("slice with two inputs") {
    XnnpackBlobBuilder b;
    const uint32_t x = b.input({1, 4, 4, 8}, 0);
    const uint32_t y = b.output({1, 4, 4, 4}, 0);
    b.node(NodeType::Slice, {x, x}, {y}).offsets = {0, 0, 0, 0};
    check_refused(b.build(), "node 0 (Slice): 2 inputs, expected 1");
  }
  SECTION("channel shuffle whose groups do not divide C") {
    for (uint32_t groups : {4u, 0u, 7u}) {
      XnnpackBlobBuilder b;
      const uint32_t x = b.input({1, 2, 2, 6}, 0);
      const uint32_t y = b.output({1, 2, 2, 6}, 0);
      b.node(NodeType::ChannelShuffle, {x}, {y}).groups = groups;
      check_refused(b.build(),
                    "node 0 (ChannelShuffle): " + std::to_string(groups) + " groups do not divide");
    }
  }
  SECTION("channel shuffle output dims differing") {
    XnnpackBlobBuilder b;
    const uint32_t x = b.input({1, 2, 2, 6}, 0);
    const uint32_t y = b.output({1, 2, 3, 4}, 0);
    b.node(NodeType::ChannelShuffle, {x}, {y}).groups = 2;
    check_refused(b.build(),
                  "node 0 (ChannelShuffle): output dims [1, 2, 3, 4] differ from input [1, 2, 2, 6]");
  }
  SECTION("a native node with flags set") {
    {
      XnnpackBlobBuilder b;
      const uint32_t x = b.input({1, 4, 4, 8}, 0);
      const uint32_t y = b.output({1, 4, 4, 4}, 0);
      auto& n = b.node(NodeType::Slice, {x}, {y});
      n.offsets = {0, 0, 0, 0};
      n.flags = 1;
      check_refused(b.build(), "node 0 (Slice): flags 1 (none allowed)");
    }
    {
      XnnpackBlobBuilder b;
      const uint32_t x = b.input({1, 2, 2, 3}, 0);
      const uint32_t a = b.tensor({1, 2, 2, 3});
      const uint32_t y = b.output({1, 2, 2, 6}, 0);
      b.node(NodeType::Abs, {x}, {a});
      auto& n = b.node(NodeType::Concatenate, {x, a}, {y});
      n.axis = 3;
      n.flags = 4;
      check_refused(b.build(), "node 1 (Concatenate): flags 4 (none allowed)");
    }
    {
      XnnpackBlobBuilder b;
      const uint32_t x = b.input({1, 2, 2, 6}, 0);
      const uint32_t y = b.output({1, 2, 2, 6}, 0);
      auto& n = b.node(NodeType::ChannelShuffle, {x}, {y});
      n.groups = 2;
      n.flags = 2;
      check_refused(b.build(), "node 0 (ChannelShuffle): flags 2 (none allowed)");
    }
  }
  SECTION("a native node writing a constant") {
    XnnpackBlobBuilder b;
    const uint32_t x = b.input({1, 1, 1, 2}, 0);
    const uint32_t k = b.constant({1, 1, 1, 2}, {1, 2});
    const uint32_t y = b.output({1, 1, 1, 2}, 0);
    b.node(NodeType::Slice, {x}, {k}).offsets = {0, 0, 0, 0};
    b.node(NodeType::Abs, {k}, {y});
    check_refused(b.build(), "node 0 (Slice): the output is a constant");
  }
  SECTION("a native node reading a tensor no earlier node produced") {
    XnnpackBlobBuilder b;
    b.input({1, 2, 2, 6}, 0);
    const uint32_t t = b.tensor({1, 2, 2, 6});
    const uint32_t y = b.output({1, 2, 2, 6}, 0);
    b.node(NodeType::ChannelShuffle, {t}, {y}).groups = 2;
    check_refused(b.build(), "node 0 (ChannelShuffle): input tensor 1 is not a constant");
  }
}

}  // namespace
}  // namespace etc
