// Program files with delegates: DelegateCall instructions, one Delegate table
// per lowered module, processed bytes in their own segments.
#include <catch2/catch.hpp>

#include "compiler/backend/to_backend.h"
#include "compiler/emit/program_writer.h"
#include "runtime/executor/program.h"
#include "tests/support/graph_builder.h"
#include "tests/support/recording_backend.h"

namespace etc {
namespace {

using testing::GraphBuilder;
using testing::kRecordingA;
using testing::kRecordingB;

std::vector<uint8_t> bytes_of(const flatbuffers::Vector<uint8_t>* v) {
  return v ? std::vector<uint8_t>(v->begin(), v->end()) : std::vector<uint8_t>{};
}

std::vector<int32_t> ints_of(const flatbuffers::Vector<int32_t>* v) {
  return v ? std::vector<int32_t>(v->begin(), v->end()) : std::vector<int32_t>{};
}

// x → mul(x, w1) [a_0 → recording_a] → relu → add(·, w2) [b_0 → recording_b] → sub(·, w2).
ir::ExportedProgram lowered_program() {
  testing::register_recording_backends();
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {2, 8});
  const auto w1 = b.constant_f32("w1", {2, 8}, std::vector<float>(16, 2.f));
  const auto w2 = b.constant_f32("w2", {2, 8}, std::vector<float>(16, 3.f));
  const auto r = b.op(EdgeOp::Relu, {b.op(EdgeOp::Mul, {x, w1})});
  b.output(b.op(EdgeOp::Sub, {b.op(EdgeOp::Add, {r, w2}), w2}), "out");
  const ir::ExportedProgram program = b.build();
  PartitionResult tagged;
  tagged.tagged_exported_program = program;
  ir::Graph& g = tagged.tagged_exported_program.graph;
  g.node(0).meta.delegation_tag = "a_0";
  g.value(w1).delegation_tag = "a_0";
  g.node(2).meta.delegation_tag = "b_0";
  tagged.partition_tags["a_0"] = DelegationSpec{kRecordingA, {CompileSpec::from_string("level", "3")}};
  tagged.partition_tags["b_0"] = DelegationSpec{kRecordingB, {}};
  return to_backend(program, tagged);
}

// The program borrows `bytes`: they must outlive it.
Program load(const std::vector<uint8_t>& bytes) {
  auto loaded = Program::load_from_data(FileData::borrow(bytes.data(), bytes.size()), "delegates.etp");
  if (!loaded.ok()) FAIL(loaded.message());
  return std::move(loaded.get());
}

TEST_CASE("a program with delegates serializes, loads and keeps each delegate's bytes, specs and map",
          "[backend][emit]") {
  const ir::ExportedProgram p = lowered_program();
  REQUIRE(p.delegates.size() == 2);
  emit::EmitStats stats;
  const std::vector<uint8_t> bytes = emit::serialize_program(p, &stats);
  const Program program = load(bytes);
  const fb::Program& f = program.fb();

  REQUIRE(f.delegates());
  REQUIRE(f.delegates()->size() == 2);
  REQUIRE(f.segments()->size() == 3);  // constants (w2), then one per delegate
  for (uint32_t i = 0; i < 2; ++i) {
    const fb::Delegate& d = *f.delegates()->Get(i);
    CHECK(d.backend_id()->str() == p.delegates[i].backend_id);
    CHECK(d.segment() == static_cast<int32_t>(i + 1));
    CHECK(d.inline_data() == nullptr);
    const Span<const uint8_t> seg = program.segment(static_cast<uint32_t>(d.segment()));
    CHECK(std::vector<uint8_t>(seg.begin(), seg.end()) == p.delegates[i].processed_bytes);
    CHECK(f.segments()->Get(i + 1)->offset() % kSegmentAlignment == 0);
  }
  const fb::Delegate& a = *f.delegates()->Get(0);
  REQUIRE(a.compile_specs()->size() == 1);
  CHECK(a.compile_specs()->Get(0)->key()->str() == "level");
  CHECK(bytes_of(a.compile_specs()->Get(0)->value()) == std::vector<uint8_t>{'3'});
  REQUIRE(a.debug_handle_map()->size() == 1);
  CHECK(a.debug_handle_map()->Get(0)->int_id() == 0);
  CHECK(a.debug_handle_map()->Get(0)->string_id() == nullptr);
  CHECK(ints_of(a.debug_handle_map()->Get(0)->debug_handles()) == std::vector<int32_t>{1});  // the mul
  CHECK(f.delegates()->Get(1)->compile_specs()->size() == 0);

  CHECK(stats.num_delegates == 2);
  CHECK(stats.delegate_bytes ==
        p.delegates[0].processed_bytes.size() + p.delegates[1].processed_bytes.size());
  CHECK(stats.constant_bytes == 64);  // w2 only: w1 moved into a_0
  CHECK(stats.file_size == bytes.size());
}

TEST_CASE("call_delegate nodes become DelegateCall instructions and operators list only kernel ops",
          "[backend][emit]") {
  const ir::ExportedProgram p = lowered_program();
  const std::vector<uint8_t> bytes = emit::serialize_program(p);
  const Program program = load(bytes);
  const fb::Program& f = program.fb();
  std::vector<std::string> ops;
  for (const auto* s : *f.operators()) ops.push_back(s->str());
  CHECK(ops == std::vector<std::string>{"relu", "sub"});

  const fb::ExecutionPlan& plan = program.plan();
  REQUIRE(plan.instructions()->size() == p.graph.nodes().size());
  REQUIRE(plan.instructions()->size() == 4);
  int delegate_calls = 0;
  for (uint32_t i = 0; i < plan.instructions()->size(); ++i) {
    const fb::Instruction& ins = *plan.instructions()->Get(i);
    const ir::Node& n = p.graph.nodes()[i];
    CHECK(ints_of(ins.debug_handles()) == n.meta.debug_handles);
    if (!n.is_delegate_call()) {
      REQUIRE(ins.args_as_KernelCall());
      continue;
    }
    const fb::DelegateCall* call = ins.args_as_DelegateCall();
    REQUIRE(call);
    CHECK(call->delegate() == static_cast<uint32_t>(n.delegate));
    CHECK(ints_of(call->inputs()) == n.inputs);
    CHECK(ints_of(call->outputs()) == n.outputs);
    ++delegate_calls;
  }
  CHECK(delegate_calls == 2);
  // b_0 reads relu's output and the outer constant w2.
  const fb::DelegateCall* b = plan.instructions()->Get(2)->args_as_DelegateCall();
  REQUIRE(b);
  REQUIRE(b->inputs()->size() == 2);
  CHECK(plan.values()->Get(b->inputs()->Get(1))->kind() == fb::ValueKind::Constant);
  CHECK(plan.values()->Get(b->inputs()->Get(1))->name()->str() == "w2");
}

TEST_CASE("memory planning keeps a delegate's inputs and outputs apart", "[backend][emit]") {
  const ir::ExportedProgram p = lowered_program();
  const std::vector<uint8_t> bytes = emit::serialize_program(p);
  const Program program = load(bytes);
  const fb::ExecutionPlan& plan = program.plan();
  const fb::DelegateCall* b = plan.instructions()->Get(2)->args_as_DelegateCall();
  REQUIRE(b);
  const fb::Value& in = *plan.values()->Get(b->inputs()->Get(0));
  const fb::Value& out = *plan.values()->Get(b->outputs()->Get(0));
  const uint64_t size = 2 * 8 * sizeof(float);
  CHECK((in.arena_offset() + size <= out.arena_offset() || out.arena_offset() + size <= in.arena_offset()));
}

TEST_CASE("a delegate-only program puts processed bytes in segment 0 and writes string debug maps sorted",
          "[backend][emit]") {
  testing::register_recording_backends();
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {4});
  const auto w = b.constant_f32("w", {4}, {1.f, 2.f, 3.f, 4.f});
  b.output(b.op(EdgeOp::Add, {b.op(EdgeOp::Mul, {x, w}), x}));
  ir::ExportedProgram p = to_backend(kRecordingA, b.build(), {});
  REQUIRE(p.delegates.size() == 1);
  p.delegates[0].debug_handle_map = StringDelegateDebugMap{{"fused", {2, 1, 2}}, {"copy", {3}}};
  emit::EmitStats stats;
  const std::vector<uint8_t> bytes = emit::serialize_program(p, &stats);
  const Program program = load(bytes);
  const fb::Program& f = program.fb();
  CHECK(stats.constant_bytes == 0);
  CHECK(f.operators()->size() == 0);
  REQUIRE(f.segments()->size() == 1);
  const fb::Delegate& d = *f.delegates()->Get(0);
  CHECK(d.segment() == 0);
  const Span<const uint8_t> seg = program.segment(0);
  CHECK(std::vector<uint8_t>(seg.begin(), seg.end()) == p.delegates[0].processed_bytes);
  REQUIRE(d.debug_handle_map()->size() == 2);
  CHECK(d.debug_handle_map()->Get(0)->string_id()->str() == "copy");
  CHECK(d.debug_handle_map()->Get(1)->string_id()->str() == "fused");
  CHECK(ints_of(d.debug_handle_map()->Get(1)->debug_handles()) == std::vector<int32_t>{1, 2});
  const fb::DelegateCall* call = program.plan().instructions()->Get(0)->args_as_DelegateCall();
  REQUIRE(call);
  CHECK(ints_of(call->inputs()) ==
        std::vector<int32_t>(program.plan().inputs()->begin(), program.plan().inputs()->end()));
  CHECK(ints_of(call->outputs()) ==
        std::vector<int32_t>(program.plan().outputs()->begin(), program.plan().outputs()->end()));
}

TEST_CASE("emission rejects a call_delegate node naming a missing delegate", "[backend][emit]") {
  ir::ExportedProgram p = lowered_program();
  p.delegates.pop_back();
  CHECK_THROWS_WITH(emit::serialize_program(p), Catch::Contains("names delegate 1 of 1"));
}

}  // namespace
}  // namespace etc
