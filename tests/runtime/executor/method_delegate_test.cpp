// The executor's delegate path, against a stub backend whose behaviour each
// test swaps: what init and execute receive, how their failures surface, and
// that every handle is destroyed exactly once.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "runtime/backend/registry.h"
#include "runtime/backends/register_builtin.h"
#include "runtime/executor/method.h"
#include "tests/runtime/backend/stub_backend.h"
#include "tests/support/program_bytes.h"

namespace etc {
namespace {

using testing::load_program_bytes;
using testing::ProgramBytes;
using testing::stub_backend;
using testing::StubBackend;

// y = delegate(x, c): x input [2], c constant [2], y output [2].
std::vector<uint8_t> one_delegate_program(
    const std::string& backend = "stub", const std::string& blob = "blob",
    std::vector<std::pair<std::string, std::string>> specs = {},
    ProgramBytes::Placement placement = ProgramBytes::Placement::Inline) {
  ProgramBytes p;
  const int x = p.input("x", {2});
  const int c = p.constant("c", {2}, {10.0f, 20.0f});
  const int y = p.output("y", {2});
  p.call_delegate(p.delegate(backend, blob, std::move(specs), placement), {x, c}, {y});
  return p.build();
}

// Two delegate calls in a row: t = d0(x); y = d1(t).
std::vector<uint8_t> two_delegate_program(const std::string& second_backend = "stub") {
  ProgramBytes p;
  const int x = p.input("x", {2});
  const int t = p.activation("t", {2});
  const int y = p.output("y", {2});
  p.call_delegate(p.delegate("stub", "first"), {x}, {t});
  p.call_delegate(p.delegate(second_backend, "second"), {t}, {y});
  return p.build();
}

class RecordingTracer : public EventTracer {
 public:
  EventTracerEntry start_profiling_delegate(std::string_view, int64_t id) override {
    return EventTracerEntry{0, event_tracer_now(), id, {}};
  }
  void end_profiling_delegate(const EventTracerEntry&, const void*, size_t) override {}
  void log_profiling_delegate(std::string_view, int64_t, uint64_t, uint64_t, const void*, size_t) override {}
};

TEST_CASE("a delegate gets its inputs, then its outputs, as the program's tensors", "[backend]") {
  StubBackend& stub = stub_backend();
  std::vector<std::vector<float>> seen;
  stub.on_execute = [&](BackendExecutionContext&, DelegateHandle*, Span<EValue*> args) {
    for (EValue* a : args) {
      REQUIRE(a->is_tensor());
      const Tensor& t = a->to_tensor();
      REQUIRE(t.dtype() == DType::Float32);
      REQUIRE(t.numel() == 2);
      seen.emplace_back(t.data_as<float>(), t.data_as<float>() + 2);
    }
    float* y = args[2]->to_tensor().data_as<float>();
    const float* x = args[0]->to_tensor().data_as<const float>();
    const float* c = args[1]->to_tensor().data_as<const float>();
    for (int i = 0; i < 2; ++i) y[i] = x[i] + c[i];
    return Status::Ok();
  };
  const auto bytes = one_delegate_program();
  auto program = load_program_bytes(bytes);
  REQUIRE(program.ok());
  auto method = Method::init(program.get());
  REQUIRE(method.ok());
  Method& m = *method.get();
  CHECK(m.num_delegate_calls() == 1);
  const float x[2] = {1.5f, -2.0f};
  REQUIRE(m.set_input(0, TensorSpec{DType::Float32, {2}}, x).ok());
  REQUIRE(m.execute().ok());
  REQUIRE(seen.size() == 3);
  CHECK(seen[0] == std::vector<float>{1.5f, -2.0f});
  CHECK(seen[1] == std::vector<float>{10.0f, 20.0f});
  const float* y = m.output(0).data_as<const float>();
  CHECK(y[0] == 11.5f);
  CHECK(y[1] == 18.0f);
}

TEST_CASE("a delegate receives its processed bytes and compile specs intact", "[backend]") {
  const std::string blob("bytes\0with\xffzeros", 16);
  for (auto placement : {ProgramBytes::Placement::Inline, ProgramBytes::Placement::Segment}) {
    StubBackend& stub = stub_backend();
    std::string got_blob, method_name;
    std::vector<std::pair<std::string, std::string>> got_specs;
    size_t temp_bytes = 0;
    stub.on_init = [&](BackendInitContext& ctx, FreeableBuffer* processed,
                       Span<const CompileSpecView> specs) -> Result<DelegateHandle*> {
      got_blob.assign(static_cast<const char*>(processed->data()), processed->size());
      for (const CompileSpecView& s : specs)
        got_specs.emplace_back(std::string(s.key), std::string(s.value.begin(), s.value.end()));
      method_name = std::string(ctx.get_method_name());
      temp_bytes = ctx.options().temp_allocator_bytes;
      processed->free();  // allowed: the executor's buffer has no free function
      return static_cast<DelegateHandle*>(new int(0));
    };
    const auto bytes =
        one_delegate_program("stub", blob, {{"level", "3"}, {"raw", std::string("\0\1", 2)}}, placement);
    auto program = load_program_bytes(bytes);
    REQUIRE(program.ok());
    RuntimeOptions options;
    options.temp_allocator_bytes = 4096;
    auto method = Method::init(program.get(), 0, options);
    REQUIRE(method.ok());
    CHECK(got_blob == blob);
    REQUIRE(got_specs.size() == 2);
    CHECK(got_specs[0] == std::pair<std::string, std::string>{"level", "3"});
    CHECK(got_specs[1] == std::pair<std::string, std::string>{"raw", std::string("\0\1", 2)});
    CHECK(method_name == "forward");
    CHECK(temp_bytes == 4096);
  }
}

TEST_CASE("a failing delegate init fails Method::init, naming the backend", "[backend]") {
  StubBackend& stub = stub_backend();
  stub.on_init = [](BackendInitContext&, FreeableBuffer*,
                    Span<const CompileSpecView>) -> Result<DelegateHandle*> {
    return fail(Error::DelegateInvalidCompatibility, "blob from the future");
  };
  const auto bytes = one_delegate_program();
  auto program = load_program_bytes(bytes);
  REQUIRE(program.ok());
  auto method = Method::init(program.get());
  REQUIRE_FALSE(method.ok());
  CHECK(method.error() == Error::DelegateInvalidCompatibility);
  CHECK(method.message() ==
        "test.etp: instruction 0: delegate 0 (backend 'stub') failed to initialise: blob from the future");
}

TEST_CASE("a failing delegate execute fails Method::execute, naming the backend", "[backend]") {
  StubBackend& stub = stub_backend();
  int calls = 0;
  stub.on_execute = [&](BackendExecutionContext&, DelegateHandle*, Span<EValue*>) -> Status {
    ++calls;
    return fail(Error::Internal, "device lost");
  };
  const auto bytes = two_delegate_program();
  auto program = load_program_bytes(bytes);
  REQUIRE(program.ok());
  auto method = Method::init(program.get());
  REQUIRE(method.ok());
  const Status s = method.get()->execute();
  CHECK(s.error() == Error::Internal);
  CHECK(s.message() == "instruction 0: delegate 0 (backend 'stub') failed: device lost");
  CHECK(calls == 1);  // the run stops at the first failure
}

TEST_CASE("every delegate handle is destroyed once, last first", "[backend]") {
  StubBackend& stub = stub_backend();
  int handles[2] = {0, 0};
  int next = 0;
  std::vector<DelegateHandle*> destroyed;
  stub.on_init = [&](BackendInitContext&, FreeableBuffer*,
                     Span<const CompileSpecView>) -> Result<DelegateHandle*> {
    return static_cast<DelegateHandle*>(&handles[next++]);
  };
  std::vector<DelegateHandle*> executed;
  stub.on_execute = [&](BackendExecutionContext&, DelegateHandle* h, Span<EValue*>) {
    executed.push_back(h);
    return Status::Ok();
  };
  stub.on_destroy = [&](DelegateHandle* h) { destroyed.push_back(h); };
  const auto bytes = two_delegate_program();
  auto program = load_program_bytes(bytes);
  REQUIRE(program.ok());
  {
    auto method = Method::init(program.get());
    REQUIRE(method.ok());
    REQUIRE(method.get()->execute().ok());
    REQUIRE(method.get()->execute().ok());
    CHECK(executed == std::vector<DelegateHandle*>{&handles[0], &handles[1], &handles[0], &handles[1]});
    CHECK(destroyed.empty());
  }
  CHECK(destroyed == std::vector<DelegateHandle*>{&handles[1], &handles[0]});
}

TEST_CASE("a delegate init that runs out of memory by throwing fails Method::init, not the process",
          "[backend]") {
  StubBackend& stub = stub_backend();
  int first = 0;
  std::vector<DelegateHandle*> destroyed;
  stub.on_init = [&](BackendInitContext&, FreeableBuffer* processed,
                     Span<const CompileSpecView>) -> Result<DelegateHandle*> {
    const std::string blob(static_cast<const char*>(processed->data()), processed->size());
    if (blob == "second") throw std::bad_alloc();
    return static_cast<DelegateHandle*>(&first);
  };
  stub.on_destroy = [&](DelegateHandle* h) { destroyed.push_back(h); };
  const auto bytes = two_delegate_program();
  auto program = load_program_bytes(bytes);
  REQUIRE(program.ok());
  auto method = Method::init(program.get());
  REQUIRE_FALSE(method.ok());
  CHECK(method.error() == Error::DelegateMemoryAllocationFailed);
  CHECK(method.message() ==
        "test.etp: instruction 1: delegate 1 (backend 'stub') failed to initialise: out of memory");
  CHECK(destroyed == std::vector<DelegateHandle*>{&first});
}

TEST_CASE("a method's allocations that cannot be made are errors naming them", "[backend]") {
  const auto bytes = one_delegate_program();
  auto program = load_program_bytes(bytes);
  REQUIRE(program.ok());
  RuntimeOptions options;
  options.temp_allocator_bytes = SIZE_MAX - 8;  // no machine has it
  auto method = Method::init(program.get(), 0, options);
  REQUIRE_FALSE(method.ok());
  CHECK(method.error() == Error::MemoryAllocationFailed);
  CHECK(method.message().find("cannot allocate the") != std::string::npos);
  CHECK(method.message().find("temp allocator for delegates") != std::string::npos);
}

TEST_CASE("when a later delegate fails to initialise, the earlier ones are destroyed", "[backend]") {
  StubBackend& stub = stub_backend();
  int first = 0;
  int inits = 0;
  std::vector<DelegateHandle*> destroyed;
  stub.on_init = [&](BackendInitContext&, FreeableBuffer* processed,
                     Span<const CompileSpecView>) -> Result<DelegateHandle*> {
    ++inits;
    const std::string blob(static_cast<const char*>(processed->data()), processed->size());
    if (blob == "second") return fail(Error::DelegateMemoryAllocationFailed, "out of device memory");
    return static_cast<DelegateHandle*>(&first);
  };
  stub.on_destroy = [&](DelegateHandle* h) { destroyed.push_back(h); };
  const auto bytes = two_delegate_program();
  auto program = load_program_bytes(bytes);
  REQUIRE(program.ok());
  auto method = Method::init(program.get());
  REQUIRE_FALSE(method.ok());
  CHECK(method.error() == Error::DelegateMemoryAllocationFailed);
  CHECK(method.message().find("instruction 1: delegate 1 (backend 'stub')") != std::string::npos);
  CHECK(inits == 2);
  CHECK(destroyed == std::vector<DelegateHandle*>{&first});
}

TEST_CASE("the temp allocator is reset after every delegate call", "[backend]") {
  StubBackend& stub = stub_backend();
  std::vector<size_t> used_before;
  std::vector<bool> got_memory;
  stub.on_execute = [&](BackendExecutionContext& ctx, DelegateHandle*, Span<EValue*>) {
    REQUIRE(ctx.get_temp_allocator() != nullptr);
    used_before.push_back(ctx.get_temp_allocator()->used());
    got_memory.push_back(ctx.allocate(200) != nullptr);
    got_memory.push_back(ctx.allocate(200) != nullptr);  // past the 256 bytes
    return Status::Ok();
  };
  const auto bytes = two_delegate_program();
  auto program = load_program_bytes(bytes);
  REQUIRE(program.ok());
  RuntimeOptions options;
  options.temp_allocator_bytes = 256;
  auto method = Method::init(program.get(), 0, options);
  REQUIRE(method.ok());
  REQUIRE(method.get()->execute().ok());
  REQUIRE(method.get()->execute().ok());
  CHECK(used_before == std::vector<size_t>{0, 0, 0, 0});
  CHECK(got_memory == std::vector<bool>{true, false, true, false, true, false, true, false});
}

TEST_CASE("the method's tracer and name reach the backend at init and execute", "[backend]") {
  StubBackend& stub = stub_backend();
  RecordingTracer tracer;
  std::vector<EventTracer*> tracers;
  std::string exec_name;
  stub.on_init = [&](BackendInitContext& ctx, FreeableBuffer*,
                     Span<const CompileSpecView>) -> Result<DelegateHandle*> {
    tracers.push_back(ctx.event_tracer());
    return static_cast<DelegateHandle*>(new int(0));
  };
  stub.on_execute = [&](BackendExecutionContext& ctx, DelegateHandle*, Span<EValue*>) {
    tracers.push_back(ctx.event_tracer());
    exec_name = std::string(ctx.get_method_name());
    return Status::Ok();
  };
  ProgramBytes p;
  const int x = p.input("x", {1});
  const int y = p.output("y", {1});
  p.call_delegate(p.delegate("stub", "b"), {x}, {y});
  p.set_plan_name("encode");
  const auto bytes = p.build();
  auto program = load_program_bytes(bytes);
  REQUIRE(program.ok());
  auto method = Method::init(program.get(), 0, {}, &tracer);
  REQUIRE(method.ok());
  CHECK(method.get()->name() == "encode");
  REQUIRE(method.get()->execute().ok());
  CHECK(tracers == std::vector<EventTracer*>{&tracer, &tracer});
  CHECK(exec_name == "encode");
}

TEST_CASE("a delegate whose backend is not registered fails init with the registered list", "[backend]") {
  StubBackend& stub = stub_backend();
  REQUIRE(register_builtin_backends().ok());
  int inits = 0;
  stub.on_init = [&](BackendInitContext&, FreeableBuffer*,
                     Span<const CompileSpecView>) -> Result<DelegateHandle*> {
    ++inits;
    return static_cast<DelegateHandle*>(new int(0));
  };
  // The stub delegate comes first, yet nothing is initialised.
  const auto bytes = two_delegate_program("no_such_backend");
  auto program = load_program_bytes(bytes, "model.etp");
  REQUIRE(program.ok());
  auto method = Method::init(program.get());
  REQUIRE_FALSE(method.ok());
  CHECK(method.error() == Error::DelegateNotRegistered);
  CHECK(method.message() ==
        "model.etp: delegate 1 needs backend 'no_such_backend', which is not registered "
        "(registered: " +
            global_backend_registry().names() + ")");
  CHECK(method.message().find("stub") != std::string::npos);
  CHECK(method.message().find("demo") != std::string::npos);
  CHECK(inits == 0);
}

TEST_CASE("a delegate whose backend is unavailable here fails init", "[backend]") {
  StubBackend& stub = stub_backend();
  stub.available = [] { return false; };
  int inits = 0;
  stub.on_init = [&](BackendInitContext&, FreeableBuffer*,
                     Span<const CompileSpecView>) -> Result<DelegateHandle*> {
    ++inits;
    return static_cast<DelegateHandle*>(new int(0));
  };
  const auto bytes = one_delegate_program();
  auto program = load_program_bytes(bytes, "model.etp");
  REQUIRE(program.ok());
  auto method = Method::init(program.get());
  REQUIRE_FALSE(method.ok());
  CHECK(method.error() == Error::DelegateUnavailable);
  CHECK(method.message() ==
        "model.etp: delegate 0 needs backend 'stub', which is registered but not available on this machine "
        "(compile with --fallback portable to run such programs anyway, more slowly)");
  CHECK(inits == 0);
}

TEST_CASE("kernels and delegates run in program order", "[backend]") {
  StubBackend& stub = stub_backend();
  stub.on_execute = [](BackendExecutionContext&, DelegateHandle*, Span<EValue*> args) {
    const float* in = args[0]->to_tensor().data_as<const float>();
    float* out = args[1]->to_tensor().data_as<float>();
    for (int i = 0; i < 3; ++i) out[i] = in[i] * 10.0f;
    return Status::Ok();
  };
  // y = relu(delegate(x + c))
  ProgramBytes p;
  const int x = p.input("x", {3});
  const int c = p.constant("c", {3}, {1.0f, -5.0f, 0.5f});
  const int s = p.activation("s", {3});
  const int d = p.activation("d", {3});
  const int y = p.output("y", {3});
  p.call_kernel("add", {x, c}, {s});
  p.call_delegate(p.delegate("stub", "x10"), {s}, {d});
  p.call_kernel("relu", {d}, {y});
  const auto bytes = p.build();
  auto program = load_program_bytes(bytes);
  REQUIRE(program.ok());
  auto method = Method::init(program.get());
  REQUIRE(method.ok());
  const float in[3] = {1.0f, 2.0f, 3.0f};
  REQUIRE(method.get()->set_input(0, TensorSpec{DType::Float32, {3}}, in).ok());
  REQUIRE(method.get()->execute().ok());
  const float* out = method.get()->output(0).data_as<const float>();
  CHECK(out[0] == 20.0f);
  CHECK(out[1] == 0.0f);
  CHECK(out[2] == 35.0f);
}

}  // namespace
}  // namespace etc
