// Control flow end to end: ONNX If on a run-time condition and Loop compile
// into chains of the program and run in the executor, on portable kernels
// and with XNNPACK delegates inside a branch and a loop body; malformed
// control flow is refused with errors naming the node and the reason.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "compiler/backend/to_backend.h"
#include "compiler/common/compile_error.h"
#include "compiler/driver.h"
#include "compiler/emit/program_writer.h"
#include "partitioners/register.h"
#include "partitioners/xnnpack/xnnpack_partitioner.h"
#include "preprocessors/register.h"
#include "runtime/backends/register_builtin.h"
#include "runtime/executor/method.h"
#include "runtime/executor/program.h"
#include "tests/support/onnx_builder.h"
#include "tests/support/run_program.h"

namespace etc {
namespace {

using namespace testing::onnx_builder;
using testing::as_bytes;
using testing::from_bytes;

const std::vector<float> kX = {-2.0f, -1.0f, 0.0f, 0.5f, 1.5f, 3.0f};

void register_all() {
  register_builtin_partitioners();
  register_builtin_preprocessors();
  REQUIRE(register_builtin_backends().ok());
}

std::vector<uint8_t> bool_bytes(bool b) { return {static_cast<uint8_t>(b ? 1 : 0)}; }

std::vector<uint8_t> int_bytes(int64_t v) { return as_bytes(std::vector<int64_t>{v}); }

// Portable and XNNPACK-delegated programs of one model: each run with the
// same inputs must give `expected` (first output).
void check_both(const ir::ExportedProgram& program, const std::vector<std::vector<uint8_t>>& inputs,
                const std::vector<float>& expected, size_t min_delegates) {
  const ir::ExportedProgram delegated = to_backend(program, xnnpack::XnnpackPartitioner());
  CHECK(delegated.delegates.size() >= min_delegates);
  for (const ir::ExportedProgram* p : {&program, &delegated}) {
    const std::vector<float> y = from_bytes<float>(testing::run_program(*p, inputs)[0]);
    REQUIRE(y.size() == expected.size());
    for (size_t i = 0; i < y.size(); ++i) CHECK(y[i] == Approx(expected[i]).margin(1e-6));
  }
}

onnx::ModelProto runtime_if_model() {
  onnx::ModelProto m = model_with_input();
  add_value(m.mutable_graph()->mutable_input(), "flag", {}, onnx::TensorProto::BOOL);
  add_if(m.mutable_graph(), "flag", unary_branch("Relu", "t"), unary_branch("Neg", "e"), "y", "choose");
  return m;
}

// A Loop body: iteration i, condition, carried acc [2, 3]; acc + x (x read
// from outside), condition passed on, and the new acc as a scan output too.
onnx::GraphProto accumulate_body(bool with_scan, const std::string& stop_after = "") {
  onnx::GraphProto b;
  b.set_name("accumulate");
  add_value(b.mutable_input(), "i", {}, onnx::TensorProto::INT64);
  add_value(b.mutable_input(), "cond_in", {}, onnx::TensorProto::BOOL);
  add_value(b.mutable_input(), "acc_in", {2, 3});
  add_node(&b, "Add", {"acc_in", "x"}, {"acc_out"}, "accumulate_add");
  if (stop_after.empty()) {
    add_node(&b, "Identity", {"cond_in"}, {"cond_out"}, "pass_cond");
  } else {
    int_scalar(&b, "limit", std::stoll(stop_after));
    add_node(&b, "Less", {"i", "limit"}, {"cond_out"}, "keep_going");
  }
  add_value(b.mutable_output(), "cond_out", {}, onnx::TensorProto::BOOL);
  add_value(b.mutable_output(), "acc_out", {2, 3});
  if (with_scan) {
    add_node(&b, "Relu", {"acc_out"}, {"row"}, "scan_relu");
    add_value(b.mutable_output(), "row", {2, 3});
  }
  return b;
}

onnx::ModelProto loop_model(const std::string& trip_name, bool runtime_trips, bool with_scan,
                            const std::string& stop_after = "") {
  onnx::ModelProto m = model_with_input();
  onnx::GraphProto* g = m.mutable_graph();
  if (runtime_trips) add_value(g->mutable_input(), trip_name, {}, onnx::TensorProto::INT64);
  std::vector<std::string> outs{"y"};
  if (with_scan) {
    outs.push_back("rows");
    add_value(g->mutable_output(), "rows", {3, 2, 3});
  }
  add_graph_attr(add_node(g, "Loop", {trip_name, "", "x"}, outs, "repeat"), "body",
                 accumulate_body(with_scan, stop_after));
  return m;
}

}  // namespace

TEST_CASE("an If on a run-time condition runs the branch the condition picks", "[control]") {
  register_all();
  const ir::ExportedProgram program = compile_onnx(save(runtime_if_model(), "runtime_if"));
  for (bool flag : {true, false}) {
    INFO("flag " << flag);
    std::vector<float> expected;
    for (float v : kX) expected.push_back(flag ? std::max(v, 0.0f) : -v);
    check_both(program, {as_bytes(kX), bool_bytes(flag)}, expected, 2);
  }
  // Both branches' nodes keep debug handles of their own.
  int named = 0;
  for (const auto& [handle, info] : program.debug_handles)
    named += info.onnx_name == "t_node" || info.onnx_name == "e_node";
  CHECK(named == 2);
}

TEST_CASE("a nested If reads a value from two levels out", "[control]") {
  register_all();
  onnx::ModelProto m = runtime_if_model();
  onnx::GraphProto* g = m.mutable_graph();
  g->mutable_node()->Clear();
  add_value(g->mutable_input(), "inner_flag", {}, onnx::TensorProto::BOOL);
  onnx::GraphProto then_branch;  // if inner_flag: relu(x) + 1 else: -x + 1
  then_branch.set_name("outer_then");
  add_if(&then_branch, "inner_flag", unary_branch("Relu", "r"), unary_branch("Neg", "n"), "inner_y", "inner");
  float_initializer(&then_branch, "one", {1.0f});
  add_node(&then_branch, "Add", {"inner_y", "one"}, {"t"}, "plus_one");
  add_value(then_branch.mutable_output(), "t", {2, 3});
  add_if(g, "flag", then_branch, unary_branch("Abs", "e"), "y", "outer");
  const ir::ExportedProgram program = compile_onnx(save(m, "nested_runtime_if"));
  for (bool outer : {true, false})
    for (bool inner : {true, false}) {
      INFO("outer " << outer << ", inner " << inner);
      std::vector<float> expected;
      for (float v : kX) expected.push_back(!outer ? std::abs(v) : inner ? std::max(v, 0.0f) + 1 : -v + 1);
      check_both(program, {as_bytes(kX), bool_bytes(outer), bool_bytes(inner)}, expected, 1);
    }
}

TEST_CASE("a Loop carries values for a trip count given at run time", "[control]") {
  register_all();
  const ir::ExportedProgram program = compile_onnx(save(loop_model("n", true, false), "loop_runtime"));
  for (int64_t n : {0, 1, 4}) {
    INFO("trip count " << n);
    std::vector<float> expected;
    for (float v : kX) expected.push_back(v * static_cast<float>(n + 1));
    check_both(program, {as_bytes(kX), int_bytes(n)}, expected, 1);
  }
}

TEST_CASE("a Loop past the runtime's iteration limit fails the run", "[control]") {
  register_all();
  const ir::ExportedProgram program = compile_onnx(save(loop_model("n", true, false), "loop_limit"));
  RuntimeOptions options;
  options.max_loop_iterations = 3;
  CHECK_NOTHROW(testing::run_program(program, {as_bytes(kX), int_bytes(3)}, options));
  CHECK_THROWS_WITH(testing::run_program(program, {as_bytes(kX), int_bytes(4)}, options),
                    Catch::Contains("'repeat'") && Catch::Contains("stopped after 3 iterations"));
}

TEST_CASE("a Loop inside a Loop reads the outermost graph's values and the outer loop's", "[control]") {
  register_all();
  // outer: n times { acc = inner(acc) }, inner: m times { acc = acc + x }:
  // y = x * (1 + n * m); m is an input of the main graph read two levels in.
  onnx::ModelProto m = loop_model("n", true, false);
  onnx::GraphProto* g = m.mutable_graph();
  add_value(g->mutable_input(), "m", {}, onnx::TensorProto::INT64);
  onnx::GraphProto outer;
  outer.set_name("outer");
  add_value(outer.mutable_input(), "j", {}, onnx::TensorProto::INT64);
  add_value(outer.mutable_input(), "outer_cond_in", {}, onnx::TensorProto::BOOL);
  add_value(outer.mutable_input(), "outer_acc_in", {2, 3});
  add_node(&outer, "Identity", {"outer_cond_in"}, {"outer_cond_out"}, "outer_pass_cond");
  onnx::GraphProto inner = accumulate_body(false);
  add_graph_attr(add_node(&outer, "Loop", {"m", "", "outer_acc_in"}, {"outer_acc_out"}, "inner_repeat"),
                 "body", inner);
  add_value(outer.mutable_output(), "outer_cond_out", {}, onnx::TensorProto::BOOL);
  add_value(outer.mutable_output(), "outer_acc_out", {2, 3});
  g->mutable_node(0)->mutable_attribute(0)->mutable_g()->CopyFrom(outer);
  const ir::ExportedProgram program = compile_onnx(save(m, "nested_loops"));
  for (auto [n, k] : {std::pair<int64_t, int64_t>{2, 3}, {0, 5}, {3, 0}}) {
    INFO("n " << n << ", m " << k);
    std::vector<float> expected;
    for (float v : kX) expected.push_back(v * static_cast<float>(1 + n * k));
    check_both(program, {as_bytes(kX), int_bytes(n), int_bytes(k)}, expected, 1);
  }
}

TEST_CASE("a Loop stops when its body's condition turns false", "[control]") {
  register_all();
  // Trip count 10, but the body continues only while i < 2: 3 iterations.
  const ir::ExportedProgram program =
      compile_onnx(save(loop_model("n", true, false, "2"), "loop_early_exit"));
  std::vector<float> expected;
  for (float v : kX) expected.push_back(v * 4);
  check_both(program, {as_bytes(kX), int_bytes(10)}, expected, 1);
}

TEST_CASE("a Loop with a constant trip count stacks its scan outputs", "[control]") {
  register_all();
  onnx::ModelProto m = loop_model("trips", false, true);
  int_scalar(m.mutable_graph(), "trips", 3);
  const ir::ExportedProgram program = compile_onnx(save(m, "loop_scan"));
  for (const ir::ExportedProgram& p : {program, to_backend(program, xnnpack::XnnpackPartitioner())}) {
    const auto outs = testing::run_program(p, {as_bytes(kX)});
    const std::vector<float> y = from_bytes<float>(outs[0]);
    const std::vector<float> rows = from_bytes<float>(outs[1]);
    REQUIRE(rows.size() == 3 * kX.size());
    for (size_t i = 0; i < kX.size(); ++i) {
      CHECK(y[i] == Approx(kX[i] * 4));
      for (size_t k = 0; k < 3; ++k)
        CHECK(rows[k * kX.size() + i] == Approx(std::max(kX[i] * (k + 2), 0.0f)));
    }
  }
}

TEST_CASE("a Scan runs over its inputs' axis in either direction and places its outputs", "[control]") {
  register_all();
  // x [2, 3] scanned along axis 1 from the end; the state sums the columns
  // seen; the scan output, reversed and placed on axis 1, holds at column j
  // the sum of columns j.. of x.
  onnx::ModelProto m = model_with_input(11);
  onnx::GraphProto* g = m.mutable_graph();
  g->mutable_output()->Clear();
  float_initializer(g, "zeros", {0.0f, 0.0f});
  add_value(g->mutable_output(), "total", {2});
  add_value(g->mutable_output(), "y", {2, 3});
  onnx::GraphProto body;
  body.set_name("suffix_sums");
  add_value(body.mutable_input(), "sum_in", {2});
  add_value(body.mutable_input(), "column", {2});
  add_node(&body, "Add", {"sum_in", "column"}, {"sum_out"}, "accumulate");
  add_node(&body, "Identity", {"sum_out"}, {"row"}, "emit_row");
  add_value(body.mutable_output(), "sum_out", {2});
  add_value(body.mutable_output(), "row", {2});
  onnx::NodeProto* scan = add_node(g, "Scan", {"zeros", "x"}, {"total", "y"}, "suffix_scan");
  add_graph_attr(scan, "body", body);
  for (auto [name, value] : {std::pair{"num_scan_inputs", 1}}) {
    auto* a = scan->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(value);
  }
  for (auto [name, value] : {std::pair{"scan_input_axes", 1}, std::pair{"scan_input_directions", 1},
                             std::pair{"scan_output_axes", 1}, std::pair{"scan_output_directions", 1}}) {
    auto* a = scan->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    a->add_ints(value);
  }
  const ir::ExportedProgram program = compile_onnx(save(m, "scan_reverse"));
  for (const ir::ExportedProgram& p : {program, to_backend(program, xnnpack::XnnpackPartitioner())}) {
    const auto outs = testing::run_program(p, {as_bytes(kX)});
    const std::vector<float> total = from_bytes<float>(outs[0]);
    const std::vector<float> y = from_bytes<float>(outs[1]);
    for (size_t r = 0; r < 2; ++r) {
      CHECK(total[r] == Approx(kX[r * 3] + kX[r * 3 + 1] + kX[r * 3 + 2]));
      for (size_t j = 0; j < 3; ++j) {
        float suffix = 0;
        for (size_t c = j; c < 3; ++c) suffix += kX[r * 3 + c];
        CHECK(y[r * 3 + j] == Approx(suffix));
      }
    }
  }
}

TEST_CASE("a branch that cannot compile at the program's shapes fails only when taken", "[control]") {
  register_all();
  onnx::ModelProto m = runtime_if_model();
  onnx::GraphProto* g = m.mutable_graph();
  g->mutable_node()->Clear();
  onnx::GraphProto bad;  // a MatMul of [2,3] by [2,3]: valid only for other shapes
  bad.set_name("other_shapes");
  add_node(&bad, "MatMul", {"x", "x"}, {"e"}, "needs_other_shapes");
  add_value(bad.mutable_output(), "e", {2, 3});
  add_if(g, "flag", unary_branch("Relu", "t"), bad, "y", "choose");
  const ir::ExportedProgram program = compile_onnx(save(m, "if_other_shapes"));
  const auto y = from_bytes<float>(testing::run_program(program, {as_bytes(kX), bool_bytes(true)})[0]);
  CHECK(y[0] == 0.0f);
  CHECK(y[5] == 3.0f);
  CHECK_THROWS_WITH(
      testing::run_program(program, {as_bytes(kX), bool_bytes(false)}),
      Catch::Contains("'choose'") && Catch::Contains("else branch") && Catch::Contains("needs_other_shapes"));
}

TEST_CASE("malformed control flow is refused naming the node and the reason", "[control]") {
  SECTION("branches whose outputs differ in shape") {
    onnx::ModelProto m = runtime_if_model();
    onnx::GraphProto* g = m.mutable_graph();
    g->mutable_node()->Clear();
    onnx::GraphProto other;
    other.set_name("flat");
    int_scalar(&other, "six", 6);
    add_node(&other, "Reshape", {"x", "six_shape"}, {"e"}, "flatten");
    auto* t = other.add_initializer();
    t->set_name("six_shape");
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(1);
    t->add_int64_data(6);
    add_value(other.mutable_output(), "e", {6});
    add_if(g, "flag", unary_branch("Relu", "t"), other, "y", "choose");
    CHECK_THROWS_WITH(compile_onnx(save(m, "if_mismatch")),
                      Catch::Contains("'choose'") && Catch::Contains("differ"));
  }
  SECTION("a loop body without outputs") {
    onnx::ModelProto m = loop_model("n", true, false);
    m.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_g()->clear_output();
    CHECK_THROWS_WITH(compile_onnx(save(m, "loop_no_outputs")),
                      Catch::Contains("'repeat'") && Catch::Contains("output"));
  }
  SECTION("a carried value that changes shape") {
    onnx::ModelProto m = loop_model("n", true, false);
    onnx::GraphProto* body = m.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_g();
    body->mutable_node(0)->set_op_type("Concat");
    auto* axis = body->mutable_node(0)->add_attribute();
    axis->set_name("axis");
    axis->set_type(onnx::AttributeProto::INT);
    axis->set_i(0);
    CHECK_THROWS_WITH(compile_onnx(save(m, "loop_growing")),
                      Catch::Contains("'repeat'") && Catch::Contains("changes type or shape"));
  }
  SECTION("scan outputs with a trip count known only at run time") {
    onnx::ModelProto m = loop_model("n", true, true);
    CHECK_THROWS_WITH(compile_onnx(save(m, "loop_runtime_scan")),
                      Catch::Contains("'repeat'") && Catch::Contains("scan outputs"));
  }
}

TEST_CASE("a program's control flow is chains the executor checks", "[control]") {
  register_all();
  const ir::ExportedProgram program = compile_onnx(save(loop_model("n", true, false), "loop_chains"));
  const std::vector<uint8_t> bytes = emit::serialize_program(program);
  auto loaded = Program::load_from_data(FileData::borrow(bytes.data(), bytes.size()), "loop.etp");
  REQUIRE(loaded.ok());
  const fb::ExecutionPlan& plan = loaded->plan();
  REQUIRE(plan.chains());
  CHECK(plan.chains()->size() == 2);
  auto method = Method::init(loaded.get());
  REQUIRE(method.ok());
  CHECK(method.get()->num_chains() == 2);
}

}  // namespace etc
