// node_kinds.def against the blob's NodeType enum: every kind is either
// listed there or a native node, and a kind outside the enum is refused by
// name.
#include <catch2/catch.hpp>
#include <string>

#include "runtime/backends/xnnpack/blob_reader.h"
#include "runtime/backends/xnnpack/node_checks.h"
#include "tests/support/xnnpack_blob_builder.h"

namespace etc {
namespace {

using testing::XnnpackBlobBuilder;
using xnnpack::fb::NodeType;

// A one-node blob of `type` with no inputs: wrong for every kind, but the
// error says why, and "unknown node type" only for kinds nothing handles.
std::string error_for(NodeType type) {
  XnnpackBlobBuilder b;
  const uint32_t y = b.output({4}, 0);
  b.node(type, {}, {y});
  const std::vector<uint8_t> blob = b.build();
  auto view = xnnpack::read_xnnpack_blob(blob.data(), blob.size());
  return view.ok() ? std::string() : view.message();
}

TEST_CASE("every XNNPACK node kind is declared in node_kinds.def or is native", "[xnnpack]") {
  for (auto k = static_cast<int>(NodeType::MIN); k <= static_cast<int>(NodeType::MAX); ++k) {
    const auto type = static_cast<NodeType>(k);
    INFO(xnnpack::fb::EnumNameNodeType(type));
    const std::string error = error_for(type);
    CHECK_FALSE(error.empty());  // no inputs is never valid
    CHECK(error.find("unknown node type") == std::string::npos);
  }
}

TEST_CASE("a node kind outside the enum is refused as unknown, never run as another", "[xnnpack]") {
  const std::string error = error_for(static_cast<NodeType>(static_cast<int>(NodeType::MAX) + 1));
  CHECK(error.find("unknown node type") != std::string::npos);
}

TEST_CASE("packed inputs follow node_kinds.def", "[xnnpack]") {
  XnnpackBlobBuilder b;
  const uint32_t x = b.input({1, 4}, 0);
  const uint32_t y = b.output({1, 4}, 0);
  const std::vector<uint32_t> fc_inputs = {x, b.constant({4, 4}, std::vector<float>(16, 1.0f)),
                                           b.constant({4}, std::vector<float>(4, 0.0f))};
  b.node(NodeType::FullyConnected, fc_inputs, {y});
  const std::vector<uint8_t> blob = b.build();
  auto view = xnnpack::read_xnnpack_blob(blob.data(), blob.size());
  REQUIRE(view.ok());
  const xnnpack::fb::Node& fc = *view.get().graph->nodes()->Get(0);
  CHECK_FALSE(xnnpack::input_is_packed(fc, 0));
  CHECK(xnnpack::input_is_packed(fc, 1));
  CHECK(xnnpack::input_is_packed(fc, 2));
  CHECK_FALSE(xnnpack::input_is_packed(fc, 40));
}

}  // namespace
}  // namespace etc
