// Portable fallbacks (`etc preprocess --fallback portable`): a program keeps
// each delegate's portable instructions beside it and runs them where the
// backend is disabled, missing or fails to initialise, with the portable
// program's outputs; without a fallback those programs still fail init.
#include <catch2/catch.hpp>
#include <random>
#include <vector>

#include "compiler/backend/to_backend.h"
#include "compiler/driver.h"
#include "compiler/emit/program_writer.h"
#include "partitioners/demo/demo_partitioner.h"
#include "partitioners/register.h"
#include "partitioners/xnnpack/xnnpack_partitioner.h"
#include "preprocessors/register.h"
#include "runtime/backends/register_builtin.h"
#include "runtime/executor/method.h"
#include "runtime/executor/program.h"
#include "tests/support/random.h"

namespace etc {
namespace {

const char* kModel = ETC_SOURCE_DIR "/tests/models/example/mini_cnn.onnx";

struct Loaded {
  std::vector<uint8_t> bytes;
  Program program;
};

std::unique_ptr<Loaded> load(const ir::ExportedProgram& p) {
  auto l = std::make_unique<Loaded>();
  l->bytes = emit::serialize_program(p);
  auto program = Program::load_from_data(FileData::borrow(l->bytes.data(), l->bytes.size()), "fallback.etp");
  REQUIRE(program.ok());
  l->program = std::move(program).get();
  return l;
}

std::vector<float> run(Method& m) {
  std::mt19937 rng(11);
  const std::vector<float> x =
      testing::random_floats(static_cast<size_t>(m.input_spec(0).shape.numel()), rng, -1, 1);
  REQUIRE(m.set_input(0, m.input_spec(0), x.data()).ok());
  REQUIRE(m.execute().ok());
  const auto* p = static_cast<const float*>(m.output(0).data);
  return {p, p + m.output(0).numel()};
}

struct Programs {
  ir::ExportedProgram portable, delegated, with_fallback;
};

Programs compile() {
  register_builtin_partitioners();
  register_builtin_preprocessors();
  REQUIRE(register_builtin_backends().ok());
  Programs p;
  p.portable = compile_onnx(kModel);
  p.delegated = to_backend(p.portable, xnnpack::XnnpackPartitioner());
  REQUIRE(p.delegated.delegates.size() == 1);
  p.with_fallback = p.delegated;
  attach_fallbacks(p.with_fallback);
  return p;
}

}  // namespace

TEST_CASE("a delegate's portable fallback runs where its backend cannot", "[fallback]") {
  const Programs p = compile();
  const auto portable = load(p.portable);
  auto plain = Method::init(portable->program);
  REQUIRE(plain.ok());
  const std::vector<float> want = run(*plain.get());

  const auto fallback = load(p.with_fallback);
  SECTION("the backend runs: the fallback's kernels are never created") {
    auto m = Method::init(fallback->program);
    REQUIRE(m.ok());
    CHECK(m.get()->num_fallbacks_used() == 0);
    CHECK(m.get()->num_delegate_calls() == 1);
    const std::vector<float> got = run(*m.get());
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).margin(1e-5));
  }
  SECTION("the backend is disabled: the fallback gives the portable outputs") {
    RuntimeOptions options;
    options.disabled_backends = {"xnnpack"};
    auto m = Method::init(fallback->program, 0, options);
    REQUIRE(m.ok());
    CHECK(m.get()->num_fallbacks_used() == 1);
    CHECK(m.get()->num_delegate_calls() == 0);
    CHECK(run(*m.get()) == want);
    CHECK(run(*m.get()) == want);  // and again
  }
  SECTION("the backend fails to initialise: the fallback runs") {
    ir::ExportedProgram damaged = p.with_fallback;
    damaged.delegates[0].processed_bytes.resize(16);  // no longer a blob XNNPACK accepts
    const auto l = load(damaged);
    auto m = Method::init(l->program);
    REQUIRE(m.ok());
    CHECK(m.get()->num_fallbacks_used() == 1);
    CHECK(run(*m.get()) == want);
  }
  SECTION("without a fallback the program still fails init, naming the backend") {
    const auto l = load(p.delegated);
    RuntimeOptions options;
    options.disabled_backends = {"xnnpack"};
    auto m = Method::init(l->program, 0, options);
    REQUIRE_FALSE(m.ok());
    CHECK(m.error() == Error::DelegateUnavailable);
    CHECK_THAT(m.message(), Catch::Contains("backend 'xnnpack', which is disabled") &&
                                Catch::Contains("--fallback portable"));
  }
}

TEST_CASE("fallbacks of delegates between portable instructions", "[fallback]") {
  // Two demo delegates with portable instructions before, between and after.
  register_builtin_preprocessors();
  REQUIRE(register_builtin_backends().ok());
  const ir::ExportedProgram portable = compile_onnx(ETC_SOURCE_DIR "/tests/models/example/mixed_ops.onnx");
  ir::ExportedProgram delegated = to_backend(portable, demo::DemoPartitioner());
  REQUIRE(delegated.delegates.size() == 2);
  attach_fallbacks(delegated);
  const auto plain = load(portable);
  auto reference = Method::init(plain->program);
  REQUIRE(reference.ok());
  const std::vector<float> want = run(*reference.get());
  const auto l = load(delegated);
  RuntimeOptions options;
  options.disabled_backends = {"demo"};
  auto m = Method::init(l->program, 0, options);
  REQUIRE(m.ok());
  CHECK(m.get()->num_fallbacks_used() == 2);
  CHECK(run(*m.get()) == want);
  auto with_demo = Method::init(l->program);
  REQUIRE(with_demo.ok());
  CHECK(with_demo.get()->num_fallbacks_used() == 0);
  const std::vector<float> got = run(*with_demo.get());
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).margin(1e-5));
}

TEST_CASE("a fallback keeps the program's arena for its delegates apart", "[fallback]") {
  const Programs p = compile();
  emit::EmitStats with, without;
  (void)emit::serialize_program(p.with_fallback, &with);
  (void)emit::serialize_program(p.delegated, &without);
  // The values the delegated program needs are placed as before; the
  // fallback's come after them.
  CHECK(with.arena_size > without.arena_size);
  const auto l = load(p.with_fallback);
  const fb::ExecutionPlan& plan = l->program.plan(0);
  CHECK(plan.fallback_arena_offset() >= without.arena_size);
  CHECK(plan.fallback_arena_offset() < plan.arena_size());
}

}  // namespace etc
