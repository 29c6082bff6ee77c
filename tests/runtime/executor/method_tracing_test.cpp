// Method with a tracer: one run and one event per instruction, delegate
// events nested inside their call, logged outputs, and run-time errors that
// name the ONNX node.
#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/backends/register_builtin.h"
#include "runtime/devtools/event_recorder.h"
#include "runtime/executor/method.h"
#include "tests/runtime/backend/stub_backend.h"
#include "tests/support/program_bytes.h"

namespace etc {
namespace {

using testing::ProgramBytes;

struct Recording {
  std::vector<RecordedEvent> events = std::vector<RecordedEvent>(256);
  std::vector<uint8_t> data = std::vector<uint8_t>(1 << 16);
  EventRecorder recorder{Span<RecordedEvent>(events), Span<uint8_t>(data)};
};

// relu (ONNX node 'r', handle 1) → stub delegate (handles 2, 3) → neg
// (handle 4). The stub's map: id 0 → handle 2, id 1 → handle 3.
std::vector<uint8_t> traced_program() {
  ProgramBytes p;
  const int x = p.input("x", {4});
  const int a = p.activation("a", {4});
  const int b = p.activation("b", {4});
  const int y = p.output("y", {4});
  p.debug_handle(1, "r", "Relu");
  p.debug_handle(2, "conv_a", "Conv");
  p.debug_handle(3, "conv_b", "Conv");
  p.debug_handle(4, "n", "Neg");
  p.call_kernel("relu", {x}, {a}, {1});
  const int d = p.delegate(testing::kStubBackendId, "blob");
  p.delegate_map_entry(d, 0, "", {2});
  p.delegate_map_entry(d, 1, "", {3});
  p.call_delegate(d, {a}, {b}, {2, 3});
  p.call_kernel("neg", {b}, {y}, {4});
  return p.build();
}

// The stub copies its input to its output and reports one event per node.
void stub_copies_and_profiles(testing::StubBackend& stub) {
  stub.on_execute = [](BackendExecutionContext& ctx, DelegateHandle*, Span<EValue*> args) {
    for (int64_t id : {0, 1}) {
      const EventTracerEntry e = event_tracer_start_profiling_delegate(ctx.event_tracer(), {}, id);
      event_tracer_end_profiling_delegate(ctx.event_tracer(), e);
    }
    std::memcpy(args[1]->to_tensor().data, args[0]->to_tensor().data, args[0]->to_tensor().nbytes());
    return Status::Ok();
  };
}

TEST_CASE("a traced run logs each instruction once, with delegate events nested in their call",
          "[executor]") {
  testing::StubBackend& stub = testing::stub_backend();
  stub_copies_and_profiles(stub);
  const std::vector<uint8_t> bytes = traced_program();
  auto program = testing::load_program_bytes(bytes);
  REQUIRE(program.ok());
  Recording rec;
  auto method = Method::init(program.get(), 0, {}, &rec.recorder);
  REQUIRE(method.ok());
  const float in[4] = {1, -2, 3, -4};
  REQUIRE(method.get()->set_input(0, TensorSpec{DType::Float32, Shape{4}}, in).ok());
  REQUIRE(method.get()->execute().ok());
  REQUIRE(method.get()->execute().ok());

  const EventRecorder& r = rec.recorder;
  CHECK(r.num_runs() == 2);
  REQUIRE(r.num_events() == 2 * (1 + 3 + 2));
  // Run 0: run, relu, the stub's two events, the delegate call, neg.
  CHECK(r.event(0).kind == RecordedEventKind::kRun);
  CHECK(r.event(1).kind == RecordedEventKind::kInstruction);
  CHECK(r.event(1).instruction == 0);
  CHECK(r.event(1).delegate_index == -1);
  const RecordedEvent& inner = r.event(3);
  const RecordedEvent& call = r.event(4);
  CHECK(r.event(2).kind == RecordedEventKind::kDelegate);
  CHECK(r.event(2).delegate_debug_id == 0);
  CHECK(inner.delegate_debug_id == 1);
  CHECK(inner.instruction == 1);
  CHECK(inner.delegate_index == 0);
  CHECK(call.kind == RecordedEventKind::kInstruction);
  CHECK(call.instruction == 1);
  CHECK(call.delegate_index == 0);
  CHECK(call.start_time <= r.event(2).start_time);
  CHECK(call.end_time >= inner.end_time);
  CHECK(r.event(5).instruction == 2);
  CHECK(r.event(6).kind == RecordedEventKind::kRun);
  CHECK(r.event(6).run == 1);
  CHECK(r.event(0).end_time <= r.event(6).start_time);
}

TEST_CASE("a traced run logs every instruction's outputs when the tracer asks", "[executor]") {
  testing::StubBackend& stub = testing::stub_backend();
  stub_copies_and_profiles(stub);
  const std::vector<uint8_t> bytes = traced_program();
  auto program = testing::load_program_bytes(bytes);
  REQUIRE(program.ok());
  Recording rec;
  rec.recorder.set_intermediate_outputs(true);
  auto method = Method::init(program.get(), 0, {}, &rec.recorder);
  REQUIRE(method.ok());
  const float in[4] = {1, -2, 3, -4};
  REQUIRE(method.get()->set_input(0, TensorSpec{DType::Float32, Shape{4}}, in).ok());
  REQUIRE(method.get()->execute().ok());
  std::vector<std::vector<float>> outputs;
  for (size_t i = 0; i < rec.recorder.num_events(); ++i) {
    const RecordedEvent& e = rec.recorder.event(i);
    if (e.kind != RecordedEventKind::kInstructionOutput) continue;
    CHECK(e.instruction == static_cast<int32_t>(outputs.size()));
    CHECK(e.output_index == 0);
    const Span<const uint8_t> b = rec.recorder.bytes_of(e);
    REQUIRE(b.size() == 16);
    std::vector<float> v(4);
    std::memcpy(v.data(), b.data(), 16);
    outputs.push_back(v);
  }
  REQUIRE(outputs.size() == 3);
  CHECK(outputs[0] == std::vector<float>{1, 0, 3, 0});
  CHECK(outputs[1] == std::vector<float>{1, 0, 3, 0});
  CHECK(outputs[2] == std::vector<float>{-1, -0.0f, -3, -0.0f});
}

TEST_CASE("a kernel failing at run time names its ONNX node", "[executor]") {
  ProgramBytes p;
  const int data = p.input("data", {3});
  const int index = p.input("index", {1}, DType::Int64);
  const int y = p.output("y", {1});
  p.debug_handle(5, "lookup", "Gather");
  p.call_kernel("gather", {data, index}, {y}, {5}, {{"axis", 0}});
  const std::vector<uint8_t> bytes = p.build();
  auto program = testing::load_program_bytes(bytes, "m.etp");
  REQUIRE(program.ok());
  for (bool traced : {false, true}) {
    Recording rec;
    auto method = Method::init(program.get(), 0, {}, traced ? &rec.recorder : nullptr);
    INFO((method.ok() ? std::string() : method.message()));
    REQUIRE(method.ok());
    const float d[3] = {1, 2, 3};
    const int64_t i[1] = {7};
    REQUIRE(method.get()->set_input(0, TensorSpec{DType::Float32, Shape{3}}, d).ok());
    REQUIRE(method.get()->set_input(1, TensorSpec{DType::Int64, Shape{1}}, i).ok());
    const Status s = method.get()->execute();
    CHECK(s.error() == Error::OutOfRange);
    INFO(s.message());
    CHECK(s.message().find("instruction 0 (gather) from ONNX node 'lookup' (Gather): gather: index") == 0);
  }
}

TEST_CASE("a delegate failing at run time names the ONNX node its backend reports", "[executor]") {
  testing::StubBackend& stub = testing::stub_backend();
  const std::vector<uint8_t> bytes = traced_program();
  auto program = testing::load_program_bytes(bytes, "m.etp");
  REQUIRE(program.ok());
  const float in[4] = {1, -2, 3, -4};
  auto run = [&]() {
    auto method = Method::init(program.get());
    REQUIRE(method.ok());
    REQUIRE(method.get()->set_input(0, TensorSpec{DType::Float32, Shape{4}}, in).ok());
    return method.get()->execute();
  };
  stub.on_execute = [](BackendExecutionContext& ctx, DelegateHandle*, Span<EValue*>) -> Status {
    ctx.set_failed_node({}, 1);
    return fail(Error::Internal, "stub: node 1 broke");
  };
  Status s = run();
  CHECK(s.error() == Error::Internal);
  CHECK(s.message() ==
        "instruction 1: delegate 0 (backend 'stub') failed in its node 1, ONNX node 'conv_b' (Conv): stub: "
        "node 1 "
        "broke");
  // An identifier the map does not hold is said to be unknown, not guessed.
  stub.on_execute = [](BackendExecutionContext& ctx, DelegateHandle*, Span<EValue*>) -> Status {
    ctx.set_failed_node({}, 77);
    return fail(Error::Internal, "stub: broke");
  };
  s = run();
  CHECK(s.message().find("failed in its node 77 (not in its debug handle map): stub: broke") !=
        std::string::npos);
  // A backend that names no node: the error lists what the delegate runs.
  stub.on_execute = [](BackendExecutionContext&, DelegateHandle*, Span<EValue*>) -> Status {
    return fail(Error::Internal, "stub: broke");
  };
  s = run();
  CHECK(s.message() ==
        "instruction 1: delegate 0 (backend 'stub') failed (it runs ONNX nodes 'conv_a' (Conv), 'conv_b' "
        "(Conv)): "
        "stub: broke");
}

}  // namespace
}  // namespace etc
