// What the XNNPACK delegate shows developer tools (run_stages.h): one event
// per stage keyed by its debug id, with profiling_metadata.h bytes, at each
// DelegateDetail; node outputs logged in the program's layout; the failing
// node named on the context.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <string>
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
using xnnpack::fb::NodeType;

class RecordingTracer : public EventTracer {
 public:
  explicit RecordingTracer(bool outputs = false) : outputs_(outputs) {}
  EventTracerEntry start_profiling_delegate(std::string_view name, int64_t id) override {
    CHECK(name.empty());
    return EventTracerEntry{0, event_tracer_now(), id, name};
  }
  void end_profiling_delegate(const EventTracerEntry& entry, const void* metadata, size_t len) override {
    ids.push_back(entry.delegate_debug_id);
    const auto* bytes = static_cast<const uint8_t*>(metadata);
    metadata_.emplace_back(bytes, bytes + len);
  }
  void log_profiling_delegate(std::string_view, int64_t, uint64_t, uint64_t, const void*, size_t) override {}
  void log_output_delegate(std::string_view name, int64_t id, const Tensor& t) override {
    CHECK(name.empty());
    output_ids.push_back(id);
    shapes.push_back(t.shape());
    const auto* f = t.data_as<const float>();
    values.emplace_back(f, f + t.numel());
  }
  bool intermediate_outputs() const override { return outputs_; }

  xnnpack::StageMetadata metadata(size_t i) const {
    const auto m = xnnpack::decode_stage_metadata(metadata_.at(i).data(), metadata_.at(i).size());
    REQUIRE(m.has_value());
    return *m;
  }
  std::vector<int64_t> ids, output_ids;
  std::vector<Shape> shapes;
  std::vector<std::vector<float>> values;

 private:
  bool outputs_;
  std::vector<std::vector<uint8_t>> metadata_;
};

// x [1, 2, 2, 3] (NCHW [1, 3, 2, 2] outside) -> Negate (id 3) -> t -> Abs (id 4) -> y.
std::vector<uint8_t> two_node_blob() {
  XnnpackBlobBuilder b;
  const uint32_t x = b.input({1, 2, 2, 3}, 0, xnnpack::fb::BoundaryLayout::NchwToNhwc);
  const uint32_t t = b.tensor({1, 2, 2, 3});
  const uint32_t y = b.output({1, 2, 2, 3}, 0, xnnpack::fb::BoundaryLayout::NhwcToNchw);
  b.node(NodeType::Negate, {x}, {t}).debug_id = 3;
  b.node(NodeType::Abs, {t}, {y}).debug_id = 4;
  return b.build();
}

std::vector<XnnpackArg> two_node_args() {
  std::vector<float> in(12);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i) - 5.5f;
  return {{Shape{1, 3, 2, 2}, in}, zeros(Shape{1, 3, 2, 2})};
}

TEST_CASE("xnnpack fused stages of nodes with different debug ids report no event", "[xnnpack]") {
  XnnpackRunner runner;
  REQUIRE(runner.init(two_node_blob()).ok());
  RecordingTracer tracer;
  auto args = two_node_args();
  REQUIRE(runner.execute(args, &tracer).ok());
  CHECK(tracer.ids.empty());
  CHECK(args[1].data[0] == 5.5f);
}

TEST_CASE("xnnpack per-node detail times every node on its own, with metadata", "[xnnpack]") {
  XnnpackRunner runner;
  runner.options().delegate_detail = DelegateDetail::kPerNode;
  REQUIRE(runner.init(two_node_blob()).ok());
  RecordingTracer tracer;
  auto args = two_node_args();
  REQUIRE(runner.execute(args, &tracer).ok());
  REQUIRE(tracer.ids == std::vector<int64_t>{3, 4});
  const xnnpack::StageMetadata negate = tracer.metadata(0), abs = tracer.metadata(1);
  CHECK(negate.runs_on == xnnpack::StageRunsOn::kXnnpack);
  CHECK(negate.node_type == static_cast<uint16_t>(NodeType::Negate));
  CHECK(abs.node_type == static_cast<uint16_t>(NodeType::Abs));
  CHECK(negate.num_nodes == 1);
  CHECK(negate.folded_ids.empty());
  CHECK(tracer.values.empty());  // outputs are not logged at this detail
  for (size_t i = 0; i < 12; ++i) CHECK(args[1].data[i] == std::abs(static_cast<float>(i) - 5.5f));
}

TEST_CASE("xnnpack logs each node's output in the program's NCHW layout", "[xnnpack]") {
  XnnpackRunner runner;
  runner.options().delegate_detail = DelegateDetail::kNodeOutputs;
  REQUIRE(runner.init(two_node_blob()).ok());
  auto args = two_node_args();
  const std::vector<float> in = args[0].data;
  SECTION("a tracer that asks for outputs gets both, keyed by debug id") {
    RecordingTracer tracer(true);
    REQUIRE(runner.execute(args, &tracer).ok());
    REQUIRE(tracer.output_ids == std::vector<int64_t>{3, 4});
    CHECK(tracer.shapes[0] == Shape{1, 3, 2, 2});
    CHECK(tracer.shapes[1] == Shape{1, 3, 2, 2});
    for (size_t i = 0; i < 12; ++i) {
      CHECK(tracer.values[0][i] == -in[i]);
      CHECK(tracer.values[1][i] == std::abs(in[i]));
    }
    CHECK(tracer.values[1] == args[1].data);
  }
  SECTION("a tracer that does not ask gets none") {
    RecordingTracer tracer(false);
    REQUIRE(runner.execute(args, &tracer).ok());
    CHECK(tracer.ids == std::vector<int64_t>{3, 4});
    CHECK(tracer.values.empty());
  }
}

TEST_CASE("xnnpack stage metadata says which convolutions run natively and which as Winograd", "[xnnpack]") {
  // x [1, 28, 28, 64] -> 3x3 conv (id 5, Winograd by the cost model) -> t
  // -> 1x1 conv (id 6, the direct native kernel) -> y.
  XnnpackBlobBuilder b;
  const uint32_t x = b.input({1, 28, 28, 64}, 0);
  const uint32_t t = b.tensor({1, 28, 28, 64});
  const uint32_t y = b.output({1, 28, 28, 64}, 0);
  auto& c3 = b.node(NodeType::Convolution2d,
                    {x, b.constant({64, 3, 3, 64}, std::vector<float>(64 * 9 * 64, 0.01f))}, {t});
  c3.kernel = {3, 3};
  c3.padding = {1, 1, 1, 1};
  c3.group_input_channels = c3.group_output_channels = 64;
  c3.debug_id = 5;
  auto& c1 = b.node(NodeType::Convolution2d,
                    {t, b.constant({64, 1, 1, 64}, std::vector<float>(64 * 64, 0.01f))}, {y});
  c1.kernel = {1, 1};
  c1.group_input_channels = c1.group_output_channels = 64;
  c1.debug_id = 6;
  XnnpackRunner runner(1);
  runner.options().delegate_detail = DelegateDetail::kPerNode;
  REQUIRE(runner.init(b.build()).ok());
  RecordingTracer tracer;
  std::vector<XnnpackArg> args = {{Shape{1, 28, 28, 64}, std::vector<float>(28 * 28 * 64, 1.0f)},
                                  zeros(Shape{1, 28, 28, 64})};
  REQUIRE(runner.execute(args, &tracer).ok());
  REQUIRE(tracer.ids == std::vector<int64_t>{5, 6});
  // Without AVX-512F or AVX2 every convolution stays on XNNPACK.
  const bool native = xnnpack::native_convolution_available();
  CHECK(tracer.metadata(0).runs_on ==
        (native ? xnnpack::StageRunsOn::kWinograd : xnnpack::StageRunsOn::kXnnpack));
  CHECK(tracer.metadata(1).runs_on ==
        (native ? xnnpack::StageRunsOn::kNative : xnnpack::StageRunsOn::kXnnpack));
  // Interior pixels: 9 taps x 64 channels x 0.01, then 64 x 0.01 of that.
  CHECK(std::abs(args[1].data[(14 * 28 + 14) * 64] - 5.76f * 0.64f) < 1e-4f);
}

TEST_CASE("xnnpack stage metadata says which Winograd variant a convolution runs as", "[xnnpack]") {
  // x [1, 14, 14, 256] -> 3x3 conv (id 7, Winograd F(2x2, 3x3) by the cost
  // model: few tiles, many channels) -> y.
  XnnpackBlobBuilder b;
  const uint32_t x = b.input({1, 14, 14, 256}, 0);
  const uint32_t y = b.output({1, 14, 14, 256}, 0);
  auto& c3 = b.node(NodeType::Convolution2d,
                    {x, b.constant({256, 3, 3, 256}, std::vector<float>(256 * 9 * 256, 0.01f))}, {y});
  c3.kernel = {3, 3};
  c3.padding = {1, 1, 1, 1};
  c3.group_input_channels = c3.group_output_channels = 256;
  c3.debug_id = 7;
  XnnpackRunner runner(1);
  runner.options().delegate_detail = DelegateDetail::kPerNode;
  REQUIRE(runner.init(b.build()).ok());
  RecordingTracer tracer;
  std::vector<XnnpackArg> args = {{Shape{1, 14, 14, 256}, std::vector<float>(14 * 14 * 256, 1.0f)},
                                  zeros(Shape{1, 14, 14, 256})};
  REQUIRE(runner.execute(args, &tracer).ok());
  REQUIRE(tracer.ids == std::vector<int64_t>{7});
  CHECK(tracer.metadata(0).runs_on == (xnnpack::native_convolution_available()
                                           ? xnnpack::StageRunsOn::kWinograd2x2
                                           : xnnpack::StageRunsOn::kXnnpack));
  // Interior pixels: 9 taps x 256 channels x 0.01; a corner 4 taps.
  CHECK(std::abs(args[1].data[(7 * 14 + 7) * 256] - 23.04f) < 1e-3f);
  CHECK(std::abs(args[1].data[0] - 10.24f) < 1e-3f);
}

TEST_CASE("xnnpack stage metadata round-trips and rejects what it cannot read", "[xnnpack]") {
  xnnpack::StageMetadata m;
  m.runs_on = xnnpack::StageRunsOn::kNative;
  m.node_type = 513;
  m.num_nodes = 2;
  m.folded_ids = {17, -1, 70000};
  const std::vector<uint8_t> bytes = xnnpack::encode_stage_metadata(m);
  CHECK(bytes.size() == xnnpack::kStageMetadataHeaderBytes + 12);
  const auto back = xnnpack::decode_stage_metadata(bytes.data(), bytes.size());
  REQUIRE(back.has_value());
  CHECK(back->runs_on == m.runs_on);
  CHECK(back->node_type == 513);
  CHECK(back->num_nodes == 2);
  CHECK(back->folded_ids == m.folded_ids);
  CHECK_FALSE(xnnpack::decode_stage_metadata(bytes.data(), bytes.size() - 1).has_value());
  CHECK_FALSE(xnnpack::decode_stage_metadata(bytes.data(), 4).has_value());
  for (auto runs_on : {xnnpack::StageRunsOn::kXnnpack, xnnpack::StageRunsOn::kWinograd,
                       xnnpack::StageRunsOn::kWinograd2x2}) {
    m.runs_on = runs_on;
    const std::vector<uint8_t> b = xnnpack::encode_stage_metadata(m);
    CHECK(xnnpack::decode_stage_metadata(b.data(), b.size())->runs_on == runs_on);
  }
  std::vector<uint8_t> unknown = bytes;
  unknown[1] = 4;  // no such place to run
  CHECK_FALSE(xnnpack::decode_stage_metadata(unknown.data(), unknown.size()).has_value());
  std::vector<uint8_t> other = bytes;
  other[0] = 99;
  CHECK_FALSE(xnnpack::decode_stage_metadata(other.data(), other.size()).has_value());
  CHECK_FALSE(xnnpack::decode_stage_metadata(nullptr, 0).has_value());
}

}  // namespace
}  // namespace etc
