// The demo backend's runtime: strict parsing of the text program, the
// max_input_elements compile spec, argument checks, and the arithmetic.
#include "runtime/backends/demo/demo_backend.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/backends/demo/demo_format.h"
#include "runtime/backends/register_builtin.h"
#include "runtime/devtools/event_recorder.h"
#include "runtime/executor/method.h"
#include "tests/support/program_bytes.h"

namespace etc {
namespace {

// Runs the demo backend directly on float32 buffers, as the executor would.
class DemoRunner {
 public:
  DemoRunner() : init_context_(nullptr, "forward", &options_) {}
  ~DemoRunner() {
    if (handle_.ok()) backend_->destroy(handle_.get());
  }

  Status init(const std::string& text, const std::vector<CompileSpecView>& specs = {}) {
    FreeableBuffer processed(text.data(), text.size());
    handle_ = backend_->init(init_context_, &processed, Span<const CompileSpecView>(specs));
    if (!handle_.ok()) return handle_.failure();
    return Status::Ok();
  }

  // args: inputs then outputs; each float32 with the given element counts.
  Status execute(std::vector<std::vector<float>>& data, DType dtype = DType::Float32,
                 EventTracer* tracer = nullptr) {
    std::vector<Tensor> tensors(data.size());
    std::vector<EValue> values;
    std::vector<EValue*> args;
    for (size_t i = 0; i < data.size(); ++i) {
      tensors[i].spec = TensorSpec{dtype, {static_cast<int64_t>(data[i].size())}};
      tensors[i].data = data[i].data();
      values.emplace_back(&tensors[i]);
    }
    for (EValue& v : values) args.push_back(&v);
    BackendExecutionContext context(nullptr, tracer, "forward");
    return backend_->execute(context, handle_.get(), Span<EValue*>(args));
  }

  const Result<DelegateHandle*>& handle() const { return handle_; }

 private:
  BackendInterface* backend_ = demo::demo_backend();
  RuntimeOptions options_;
  BackendInitContext init_context_;
  Result<DelegateHandle*> handle_ = Error::InvalidState;
};

CompileSpecView spec(std::string_view key, const std::string& value) {
  return CompileSpecView{key, {reinterpret_cast<const uint8_t*>(value.data()), value.size()}};
}

// Records the identifier and metadata of every ended event.
class CountingTracer : public EventTracer {
 public:
  EventTracerEntry start_profiling_delegate(std::string_view name, int64_t id) override {
    return EventTracerEntry{static_cast<int64_t>(started.size()), event_tracer_now(), id, name};
  }
  void end_profiling_delegate(const EventTracerEntry& entry, const void* metadata, size_t len) override {
    CHECK(entry.delegate_debug_id == kUnsetDelegateDebugIntId);
    started.emplace_back(entry.name);
    const auto* bytes = static_cast<const uint8_t*>(metadata);
    uint64_t value = 0;
    for (size_t b = 0; b < len; ++b) value |= uint64_t{bytes[b]} << (8 * b);
    CHECK(len == demo::kDemoMetadataBytes);
    elements.push_back(value);
    CHECK(event_tracer_now() >= entry.start_time);
  }
  void log_profiling_delegate(std::string_view, int64_t, uint64_t, uint64_t, const void*, size_t) override {}
  std::vector<std::string> started;
  std::vector<uint64_t> elements;
};

const std::string kSample =
    "etc-demo-program 2\n"
    "input in0 3\n"
    "input in1 3\n"
    "output out0 3\n"
    "output out1 3\n"
    "const c0 3 0.5 1 -2\n"
    "buffer t0 3\n"
    "mul_add t0 in0 in1 c0 #0\n"
    "relu out1 t0 #1\n"
    "sin t0 out1 #2\n"
    "cos out0 out1 #3\n"
    "sub out0 t0 out0 #4\n";

TEST_CASE("a demo program computes what its text says", "[demo][backend]") {
  DemoRunner demo;
  REQUIRE(demo.init(kSample).ok());
  std::vector<std::vector<float>> args = {{1, 2, 3}, {4, -5, 0.25f}, {0, 0, 0}, {0, 0, 0}};
  REQUIRE(demo.execute(args).ok());
  const float c[3] = {0.5f, 1, -2};
  for (size_t i = 0; i < 3; ++i) {
    const float product = args[0][i] * args[1][i];
    const float r = product + c[i] > 0 ? product + c[i] : 0.0f;
    CHECK(args[3][i] == r);
    CHECK(args[2][i] == std::sin(r) - std::cos(r));
  }
  CHECK(args[3] == std::vector<float>{4.5f, 0, 0});
  // A second run gives the same result.
  std::vector<std::vector<float>> again = {{1, 2, 3}, {4, -5, 0.25f}, {9, 9, 9}, {9, 9, 9}};
  REQUIRE(demo.execute(again).ok());
  CHECK(again == args);
}

TEST_CASE("demo add, sub, mul and mul_add are exact float32 arithmetic", "[demo][backend]") {
  DemoRunner demo;
  REQUIRE(demo.init("etc-demo-program 2\n"
                    "input in0 4\n"
                    "output out0 4\n"
                    "output out1 4\n"
                    "output out2 4\n"
                    "const c0 4 0.1 1e-08 -3.5 1e+30\n"
                    "const c1 4 3 3 3 3\n"
                    "add out0 in0 c0\n"
                    "mul out1 in0 c1\n"
                    "mul_add out2 in0 c1 c0\n"
                    "sub out2 out2 out1\n")
              .ok());
  std::vector<std::vector<float>> args = {{1.5f, -2, 0, 7}, {}, {}, {}};
  for (size_t i = 1; i < 4; ++i) args[i].assign(4, 0.0f);
  REQUIRE(demo.execute(args).ok());
  const float c0[4] = {0.1f, 1e-08f, -3.5f, 1e+30f};
  for (size_t i = 0; i < 4; ++i) {
    CHECK(args[1][i] == args[0][i] + c0[i]);
    CHECK(args[2][i] == args[0][i] * 3.0f);
    const float product = args[0][i] * 3.0f;
    const float sum = product + c0[i];
    CHECK(args[3][i] == sum - args[2][i]);
  }
}

TEST_CASE("demo init frees the processed bytes once it has parsed them", "[demo][backend]") {
  int frees = 0;
  auto count = [](void* context, const void*, size_t) { ++*static_cast<int*>(context); };
  FreeableBuffer processed(kSample.data(), kSample.size(), count, &frees);
  RuntimeOptions options;
  BackendInitContext context(nullptr, "forward", &options);
  auto handle = demo::demo_backend()->init(context, &processed, {});
  REQUIRE(handle.ok());
  CHECK(frees == 1);
  CHECK(processed.data() == nullptr);
  demo::demo_backend()->destroy(handle.get());
}

TEST_CASE("a demo program of another version is refused as incompatible", "[demo][backend]") {
  DemoRunner demo;
  // Version 1 had integer identifiers; its `#0` would not match a string map.
  const Status s = demo.init("etc-demo-program 1\ninput in0 1\noutput out0 1\nrelu out0 in0 #0\n");
  CHECK(s.error() == Error::DelegateInvalidCompatibility);
  CHECK(s.message().find("demo: program version 1, this runtime reads version 2") == 0);
}

TEST_CASE("bytes that are not a demo program are refused as incompatible", "[demo][backend]") {
  const std::vector<std::string> texts = {"", "input in0 1\n", "\netc-demo-program 2\n",
                                          std::string("\x7f"
                                                      "ELF\0\1",
                                                      6)};
  for (const std::string& text : texts) {
    DemoRunner demo;
    const Status s = demo.init(text);
    INFO(text);
    CHECK(s.error() == Error::DelegateInvalidCompatibility);
    CHECK(s.message().find("demo: not a demo program") == 0);
  }
}

TEST_CASE("a malformed demo program is refused, naming the line", "[demo][backend]") {
  const std::string head = "etc-demo-program 2\ninput in0 2\ninput in1 3\noutput out0 2\nbuffer t0 2\n";
  struct Case {
    std::string text;
    std::string message;
  };
  const Case cases[] = {
      {"etc-demo-program one\n", "line 1: expected 'etc-demo-program <version>'"},
      {"etc-demo-program 2 extra\n", "line 1: expected 'etc-demo-program <version>'"},
      {head + "tanh out0 in0\n", "line 6: unknown instruction 'tanh'"},
      {head + "relu out0 x0\n", "line 6: bad operand 'x0'"},
      {head + "relu out0 in00\n", "line 6: bad operand 'in00'"},
      {head + "relu out0 t7\n", "line 6: undefined operand 't7'"},
      {head + "relu out0 c0\n", "line 6: undefined operand 'c0'"},
      {head + "add out0 in0\n", "line 6: add takes 3 operands (dst a b), got 2"},
      {head + "relu out0 in0 in0 #1\n", "line 6: relu takes 2 operands (dst a), got 3"},
      {head + "add out0 in0 in1\n", "line 6: add: in1 has 3 elements but out0 has 2"},
      {head + "relu in0 out0\n", "line 6: relu writes in0; only outputs and buffers can be written"},
      {head + "relu out0 t0\n", "line 6: relu reads t0 before any instruction writes it"},
      {head + "relu out0 in0 #\n", "line 6: empty debug identifier '#'"},
      {head + "add out0 #1 in0\n", "line 6: bad operand '#1'"},
      {head + "\n\nrelu t0 in0\n", "line 4: output out0 is never written"},
      {head + "input in3 2\n", "line 6: expected in2, got 'in3'"},
      {head + "input in2\n", "line 6: expected 'input in2 <elements>'"},
      {head + "buffer t1 -4\n", "line 6: bad element count '-4' for t1"},
      {head + "buffer t1 99999999999\n", "line 6: bad element count '99999999999' for t1"},
      {head + "buffer t1 268435456\n",
       "line 6: t1 declares 268435456 elements, more than any input, output or constant declared before it"},
      {head + "const c0 2 1\n", "line 6: c0 declares 2 elements but lists 1 values"},
      {head + "const c0 2 1 x\n", "line 6: bad value 'x' in c0"},
      {head + "const c0 1 1e99\n", "line 6: bad value '1e99' in c0"},
  };
  for (const Case& c : cases) {
    DemoRunner demo;
    const Status s = demo.init(c.text);
    INFO(c.text);
    CHECK(s.error() == Error::InvalidProgram);
    CHECK(s.message().find("demo: program " + c.message) == 0);
  }
}

TEST_CASE("demo constants keep special values as written", "[demo][backend]") {
  DemoRunner demo;
  REQUIRE(demo.init("etc-demo-program 2\ninput in0 4\noutput out0 4\nconst c0 4 inf -inf nan 1.17549435e-38\n"
                    "add out0 in0 c0 #7\n")
              .ok());
  std::vector<std::vector<float>> args = {{0, 0, 0, 0}, {1, 1, 1, 1}};
  REQUIRE(demo.execute(args).ok());
  CHECK(args[1][0] == INFINITY);
  CHECK(args[1][1] == -INFINITY);
  CHECK(std::isnan(args[1][2]));
  CHECK(args[1][3] == 1.17549435e-38f);
}

TEST_CASE("max_input_elements refuses a larger input at init", "[demo][backend]") {
  const std::string text = "etc-demo-program 2\ninput in0 4\ninput in1 100\noutput out0 4\nrelu out0 in0\n";
  {
    DemoRunner demo;
    const Status s = demo.init(text, {spec(demo::kMaxInputElementsKey, "64")});
    CHECK(s.error() == Error::InvalidArgument);
    CHECK(s.message() == "demo: input in1 has 100 elements, more than max_input_elements = 64");
  }
  {
    DemoRunner demo;
    CHECK(demo.init(text, {spec(demo::kMaxInputElementsKey, "100"), spec("unknown_hint", "x")}).ok());
  }
  for (const std::string bad : std::vector<std::string>{"", "-1", "6 4", "1e3", "99999999999999999999"}) {
    DemoRunner demo;
    const Status s = demo.init(text, {spec(demo::kMaxInputElementsKey, bad)});
    INFO(bad);
    CHECK(s.error() == Error::InvalidArgument);
    CHECK(s.message().find("is not a decimal element count") != std::string::npos);
  }
}

TEST_CASE("demo execute checks its arguments against the declarations", "[demo][backend]") {
  DemoRunner demo;
  REQUIRE(demo.init("etc-demo-program 2\ninput in0 2\noutput out0 2\nrelu out0 in0\n").ok());
  std::vector<std::vector<float>> too_few = {{1, 2}};
  Status s = demo.execute(too_few);
  CHECK(s.error() == Error::InvalidArgument);
  CHECK(s.message() == "demo: the delegate takes 1 inputs and 1 outputs, got 1 arguments");
  std::vector<std::vector<float>> wrong_count = {{1, 2}, {0, 0, 0}};
  s = demo.execute(wrong_count);
  CHECK(s.error() == Error::InvalidShape);
  CHECK(s.message() == "demo: argument out0 has 3 elements, the demo program declares 2");
  std::vector<std::vector<float>> ints = {{1, 2}, {0, 0}};
  s = demo.execute(ints, DType::Int32);
  CHECK(s.error() == Error::InvalidType);
  CHECK(s.message().find("argument in0 is int32") != std::string::npos);
}

TEST_CASE("demo instructions with a string identifier are profiled with their element count",
          "[demo][backend]") {
  DemoRunner demo;
  REQUIRE(demo.init("etc-demo-program 2\ninput in0 3\noutput out0 3\nbuffer t0 3\n"
                    "sin t0 in0 #first\ncos t0 t0\nrelu out0 t0 #mul+relu~2\n")
              .ok());
  CountingTracer tracer;
  std::vector<std::vector<float>> args = {{1, 2, 3}, {0, 0, 0}};
  REQUIRE(demo.execute(args, DType::Float32, &tracer).ok());
  CHECK(tracer.started == std::vector<std::string>{"first", "mul+relu~2"});
  CHECK(tracer.elements == std::vector<uint64_t>{3, 3});
  CHECK(args[1][0] == std::cos(std::sin(1.0f)));
}

TEST_CASE("demo instructions log their results when the tracer asks for intermediate outputs",
          "[demo][backend]") {
  DemoRunner demo;
  REQUIRE(demo.init("etc-demo-program 2\ninput in0 2\noutput out0 2\nbuffer t0 2\n"
                    "sin t0 in0 #s\nrelu out0 t0 #r\n")
              .ok());
  std::vector<RecordedEvent> events(16);
  std::vector<uint8_t> data(1024);
  EventRecorder recorder(events, data);
  std::vector<std::vector<float>> args = {{1, -2}, {0, 0}};
  REQUIRE(demo.execute(args, DType::Float32, &recorder).ok());
  CHECK(recorder.num_events() == 2);  // profiling only
  recorder.reset();
  recorder.set_intermediate_outputs(true);
  REQUIRE(demo.execute(args, DType::Float32, &recorder).ok());
  std::vector<std::string> logged;
  for (size_t i = 0; i < recorder.num_events(); ++i) {
    const RecordedEvent& e = recorder.event(i);
    if (e.kind != RecordedEventKind::kDelegateOutput) continue;
    logged.emplace_back(recorder.name_of(e));
    REQUIRE(e.rank == 1);
    CHECK(e.dims[0] == 2);
    const auto bytes = recorder.bytes_of(e);
    REQUIRE(bytes.size() == 2 * sizeof(float));
    float values[2];
    std::memcpy(values, bytes.data(), sizeof(values));
    if (logged.back() == "s") CHECK(values[1] == std::sin(-2.0f));
    if (logged.back() == "r") CHECK(values[1] == 0.0f);
  }
  CHECK(logged == std::vector<std::string>{"s", "r"});
}

TEST_CASE("a program delegating to the demo backend runs through Method", "[demo][backend]") {
  REQUIRE(register_builtin_backends().ok());
  testing::ProgramBytes p;
  const int x = p.input("x", {2, 2});
  const int c = p.constant("c", {2, 2}, {1, 2, 3, 4});
  const int y = p.output("y", {2, 2});
  const std::string blob =
      "etc-demo-program 2\ninput in0 4\ninput in1 4\noutput out0 4\nbuffer t0 4\n"
      "mul t0 in0 in1 #0\nrelu out0 t0 #1\n";
  p.call_delegate(
      p.delegate("demo", blob, {{"max_input_elements", "4"}}, testing::ProgramBytes::Placement::Segment),
      {x, c}, {y});
  const auto bytes = p.build();
  auto program = testing::load_program_bytes(bytes);
  REQUIRE(program.ok());
  auto method = Method::init(program.get());
  REQUIRE(method.ok());
  const float in[4] = {1, -1, 0.5f, 2};
  REQUIRE(method.get()->set_input(0, TensorSpec{DType::Float32, {2, 2}}, in).ok());
  REQUIRE(method.get()->execute().ok());
  const float* out = method.get()->output(0).data_as<const float>();
  CHECK(out[0] == 1.0f);
  CHECK(out[1] == 0.0f);
  CHECK(out[2] == 1.5f);
  CHECK(out[3] == 8.0f);
}

TEST_CASE("a demo delegate whose blob is refused fails Method::init with the demo message",
          "[demo][backend]") {
  REQUIRE(register_builtin_backends().ok());
  testing::ProgramBytes p;
  const int x = p.input("x", {3});
  const int y = p.output("y", {3});
  p.call_delegate(p.delegate("demo", "etc-demo-program 7\n"), {x}, {y});
  const auto bytes = p.build();
  auto program = testing::load_program_bytes(bytes, "model.etp");
  REQUIRE(program.ok());
  auto method = Method::init(program.get());
  REQUIRE_FALSE(method.ok());
  CHECK(method.error() == Error::DelegateInvalidCompatibility);
  CHECK(method.message().find("model.etp: instruction 0: delegate 0 (backend 'demo') failed to initialise: "
                              "demo: program version 7, this runtime reads version 2") == 0);
}

}  // namespace
}  // namespace etc
