// Delegation end to end: partition → to_backend → program file → runtime with
// the demo backend, against the same program on the portable kernels.
#include <catch2/catch.hpp>
#include <cmath>

#include "compiler/backend/capability_partitioner.h"
#include "compiler/backend/to_backend.h"
#include "partitioners/composite/composite_partitioner.h"
#include "partitioners/demo/demo_partitioner.h"
#include "partitioners/register.h"
#include "preprocessors/demo/demo_preprocess.h"
#include "preprocessors/register.h"
#include "runtime/backend/interface.h"
#include "runtime/backends/demo/demo_backend.h"
#include "runtime/backends/register_builtin.h"
#include "tests/support/differential.h"
#include "tests/support/graph_builder.h"
#include "tests/support/random.h"
#include "tests/support/run_program.h"

namespace etc {
namespace {

using testing::GraphBuilder;

constexpr char kTwin[] = "demo_twin";

// The demo backend under a second name, so one model can use two backends.
void register_backends() {
  register_builtin_partitioners();
  register_builtin_preprocessors();
  REQUIRE(register_builtin_backends().ok());
  static const bool twin = [] {
    register_backend_details(kTwin, std::make_unique<demo::DemoBackendDetails>());
    return register_backend(Backend{kTwin, demo::demo_backend()}).ok();
  }();
  REQUIRE(twin);
}

// Takes only sin and cos, for the twin backend.
class TrigPartitioner : public Partitioner {
 public:
  std::string name() const override { return kTwin; }
  PartitionResult partition(const ir::ExportedProgram& program) const override {
    auto trig = [](const ir::Graph& g, const ir::Node& n) {
      if (n.op != EdgeOp::Sin && n.op != EdgeOp::Cos) return Support::no("not a trig op");
      return demo::DemoPartitioner::is_supported(g, n);
    };
    return partition_by_capability(program, trig, "twin", DelegationSpec{kTwin, {}});
  }
};

// x, y [2, 8]: relu(x * y + w) → tanh (portable) → sin, cos → sub; also an
// exp (portable) branch so the graph mixes backends.
ir::ExportedProgram mixed_program() {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {2, 8});
  const auto y = b.input("y", DType::Float32, {2, 8});
  std::vector<float> wv(16);
  for (size_t i = 0; i < wv.size(); ++i) wv[i] = 0.1f * static_cast<float>(i) - 0.7f;
  const auto w = b.constant_f32("w", {2, 8}, wv);
  const auto r = b.op(EdgeOp::Relu, {b.op(EdgeOp::Add, {b.op(EdgeOp::Mul, {x, y}), w})});
  const auto t = b.op(EdgeOp::Tanh, {r});
  const auto d = b.op(EdgeOp::Sub, {b.op(EdgeOp::Sin, {t}), b.op(EdgeOp::Cos, {r})});
  b.output(b.op(EdgeOp::Mul, {d, b.op(EdgeOp::Exp, {x})}), "out");
  b.output(r, "relu_out");
  return b.build();
}

std::vector<std::vector<uint8_t>> mixed_inputs() {
  std::mt19937 rng(5);
  return {testing::as_bytes(testing::random_floats(16, rng)),
          testing::as_bytes(testing::random_floats(16, rng))};
}

void check_same_outputs(const ir::ExportedProgram& lowered) {
  testing::check_same_float_outputs(mixed_program(), lowered, mixed_inputs(), 1e-6);
}

size_t count_backend(const ir::ExportedProgram& p, const std::string& backend) {
  size_t n = 0;
  for (const auto& d : p.delegates) n += d.backend_id == backend ? 1 : 0;
  return n;
}

TEST_CASE("a program lowered to the demo backend computes what the portable kernels compute",
          "[integration][demo]") {
  register_backends();
  const ir::ExportedProgram lowered = to_backend(mixed_program(), demo::DemoPartitioner());
  CHECK(count_backend(lowered, "demo") == 2);  // split by the tanh
  check_same_outputs(lowered);
}

TEST_CASE("two backends in one model: partitioners one after another", "[integration][demo]") {
  register_backends();
  const ir::ExportedProgram first = to_backend(mixed_program(), TrigPartitioner());
  CHECK(count_backend(first, kTwin) >= 1);
  const ir::ExportedProgram both = to_backend(first, demo::DemoPartitioner());
  CHECK(count_backend(both, kTwin) == count_backend(first, kTwin));
  CHECK(count_backend(both, "demo") >= 1);
  check_same_outputs(both);
}

TEST_CASE("two backends in one model: one partitioner assigns both", "[integration][demo]") {
  register_backends();
  std::vector<std::unique_ptr<Partitioner>> children;
  children.push_back(std::make_unique<TrigPartitioner>());
  children.push_back(std::make_unique<demo::DemoPartitioner>());
  const CompositePartitioner composite(std::move(children));
  const PartitionResult tagged = composite.partition(mixed_program());
  for (const ir::Node& n : tagged.tagged_exported_program.graph.nodes())
    if (n.op == EdgeOp::Sin || n.op == EdgeOp::Cos) CHECK(n.meta.delegation_tag.rfind("twin_", 0) == 0);
  const ir::ExportedProgram both = to_backend(mixed_program(), composite);
  CHECK(count_backend(both, kTwin) >= 1);
  CHECK(count_backend(both, "demo") >= 1);
  check_same_outputs(both);
}

TEST_CASE("a constant read by two partitions and a portable node is copied into each partition",
          "[integration][demo]") {
  register_backends();
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {4});
  const auto w = b.constant_f32("w", {4}, {0.5f, -1.f, 2.f, 0.25f});
  const auto a = b.op(EdgeOp::Add, {x, w});    // demo_0
  const auto t = b.op(EdgeOp::Tanh, {a});      // portable
  const auto m = b.op(EdgeOp::Mul, {t, w});    // demo_1
  b.output(b.op(EdgeOp::Div, {m, w}), "out");  // portable, reads w too
  const ir::ExportedProgram program = b.build();
  const ir::ExportedProgram lowered = to_backend(program, demo::DemoPartitioner());
  REQUIRE(count_backend(lowered, "demo") == 2);
  for (const auto& d : lowered.delegates) {
    const std::string blob(d.processed_bytes.begin(), d.processed_bytes.end());
    CHECK(blob.find("const c0 4 0.5 -1 2 0.25") != std::string::npos);
  }
  const std::vector<float> in = {1.f, 2.f, -3.f, 0.f};
  const auto want = testing::run_program(program, {testing::as_bytes(in)});
  const auto got = testing::run_program(lowered, {testing::as_bytes(in)});
  CHECK(testing::from_bytes<float>(got[0]) == testing::from_bytes<float>(want[0]));
}

TEST_CASE("the whole program lowered to one backend runs as one delegate call", "[integration][demo]") {
  register_backends();
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {5});
  b.output(b.op(EdgeOp::Cos, {b.op(EdgeOp::Sin, {x})}));
  const ir::ExportedProgram program = b.build();
  const ir::ExportedProgram lowered = to_backend("demo", program, {});
  REQUIRE(lowered.graph.num_live_nodes() == 1);
  const std::vector<float> in = {0.f, 0.5f, -1.f, 2.f, 3.f};
  const auto out = testing::from_bytes<float>(testing::run_program(lowered, {testing::as_bytes(in)})[0]);
  for (size_t i = 0; i < in.size(); ++i) CHECK(out[i] == Approx(std::cos(std::sin(in[i]))));
}

TEST_CASE("a demo compile spec limiting input size fails at init", "[integration][demo]") {
  register_backends();
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {100});
  b.output(b.op(EdgeOp::Relu, {x}));
  const std::vector<CompileSpec> specs = {CompileSpec::from_string("max_input_elements", "64")};
  const ir::ExportedProgram lowered = to_backend(b.build(), demo::DemoPartitioner(specs));
  REQUIRE_THROWS_WITH(testing::run_program(lowered, {std::vector<uint8_t>(400)}), Catch::Contains("64"));
}

}  // namespace
}  // namespace etc
