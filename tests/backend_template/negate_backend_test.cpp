// The backend template end to end, as a backend author's own test would be:
// register the three pieces, partition and preprocess a graph, write and
// load the program, run it, and see the delegate's events reach ONNX nodes.
#include "tests/backend_template/negate_backend.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "compiler/backend/backend_details.h"
#include "compiler/backend/to_backend.h"
#include "compiler/emit/program_writer.h"
#include "runtime/backend/registry.h"
#include "runtime/devtools/event_recorder.h"
#include "runtime/executor/method.h"
#include "runtime/executor/node_names.h"
#include "tests/backend_template/negate_format.h"
#include "tests/backend_template/negate_partitioner.h"
#include "tests/backend_template/negate_preprocess.h"
#include "tests/support/graph_builder.h"
#include "tests/support/program_bytes.h"

namespace etc {
namespace {

void register_negate_once() {
  static const bool done = [] {
    register_backend_details(negate::kNegateBackendId, std::make_unique<negate::NegateBackendDetails>());
    return register_backend(Backend{negate::kNegateBackendId, negate::negate_backend()}).ok();
  }();
  REQUIRE(done);
}

// x -> Neg -> Neg -> Relu -> Neg -> y: partitions [Neg, Neg] and [Neg].
ir::ExportedProgram chain() {
  testing::GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {4});
  const auto a = b.op(EdgeOp::Neg, {x});
  const auto c = b.op(EdgeOp::Neg, {a});
  const auto r = b.op(EdgeOp::Relu, {c});
  b.output(b.op(EdgeOp::Neg, {r}), "y");
  return b.build();
}

TEST_CASE("a backend built from the template partitions, compiles, runs and profiles", "[backend_template]") {
  register_negate_once();
  const ir::ExportedProgram delegated = to_backend(chain(), negate::NegatePartitioner());
  const std::vector<uint8_t> bytes = emit::serialize_program(delegated);
  auto program = testing::load_program_bytes(bytes, "negate.etp");
  REQUIRE(program.ok());
  REQUIRE(program.get().fb().delegates()->size() == 2);

  std::vector<RecordedEvent> events(64);
  std::vector<uint8_t> data(4096);
  EventRecorder recorder{Span<RecordedEvent>(events), Span<uint8_t>(data)};
  auto method = Method::init(program.get(), 0, {}, &recorder);
  INFO((method.ok() ? std::string() : method.message()));
  REQUIRE(method.ok());
  const float x[4] = {1, -2, 3, -4};
  REQUIRE(method.get()->set_input(0, TensorSpec{DType::Float32, Shape{4}}, x).ok());
  REQUIRE(method.get()->execute().ok());
  const float* y = method.get()->output(0).data_as<const float>();
  // -relu(--x) = -relu(x)
  CHECK(std::vector<float>(y, y + 4) == std::vector<float>{-1, -0.0f, -3, -0.0f});

  // Three delegate events, each naming its ONNX node through the map.
  std::vector<std::string> nodes;
  for (size_t i = 0; i < recorder.num_events(); ++i) {
    const RecordedEvent& e = recorder.event(i);
    if (e.kind != RecordedEventKind::kDelegate) continue;
    nodes.push_back(describe_onnx_nodes(
        program.get(), delegate_debug_handles(program.get(), static_cast<uint32_t>(e.delegate_index), {},
                                              e.delegate_debug_id)));
  }
  CHECK(nodes == std::vector<std::string>{"ONNX node 'neg_1' (neg)", "ONNX node 'neg_2' (neg)",
                                          "ONNX node 'neg_4' (neg)"});
}

TEST_CASE("the template backend refuses a blob it did not write", "[backend_template]") {
  register_negate_once();
  testing::ProgramBytes p;
  const int x = p.input("x", {4});
  const int y = p.output("y", {4});
  p.call_delegate(p.delegate(negate::kNegateBackendId, "short"), {x}, {y});
  const std::vector<uint8_t> bytes = p.build();
  auto program = testing::load_program_bytes(bytes, "bad.etp");
  REQUIRE(program.ok());
  auto method = Method::init(program.get());
  REQUIRE_FALSE(method.ok());
  CHECK(method.message().find("negate: the blob is not 16 bytes") != std::string::npos);
}

}  // namespace
}  // namespace etc
