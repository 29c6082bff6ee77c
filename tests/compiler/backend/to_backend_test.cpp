#include "compiler/backend/to_backend.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <functional>
#include <mutex>

#include "compiler/common/compile_error.h"
#include "compiler/ir/verifier.h"
#include "tests/support/graph_builder.h"
#include "tests/support/recording_backend.h"

namespace etc {
namespace {

using testing::GraphBuilder;
using testing::kRecordingA;
using testing::kRecordingB;
using testing::recordings;

// Tags nodes (by id) of a copy of `program`; the tag's backend is `backend`.
PartitionResult tag_nodes(const ir::ExportedProgram& program, const std::vector<ir::NodeId>& ids,
                          const std::string& tag, const std::string& backend = kRecordingA) {
  PartitionResult r;
  r.tagged_exported_program = program;
  for (ir::NodeId id : ids) r.tagged_exported_program.graph.node(id).meta.delegation_tag = tag;
  r.partition_tags[tag] = DelegationSpec{backend, {}};
  return r;
}

void add_tag(PartitionResult& r, const std::vector<ir::NodeId>& ids, const std::string& tag,
             const std::string& backend = kRecordingA) {
  for (ir::NodeId id : ids) r.tagged_exported_program.graph.node(id).meta.delegation_tag = tag;
  r.partition_tags[tag] = DelegationSpec{backend, {}};
}

// A partitioner built from a function that tags a copy of the program.
class FnPartitioner : public Partitioner {
 public:
  explicit FnPartitioner(std::function<void(PartitionResult&)> fn) : fn_(std::move(fn)) {}
  std::string name() const override { return "fn"; }
  PartitionResult partition(const ir::ExportedProgram& program) const override {
    PartitionResult r;
    r.tagged_exported_program = program;
    fn_(r);
    return r;
  }

 private:
  std::function<void(PartitionResult&)> fn_;
};

// Tags every live edge node whose op is in `ops` with `tag`.
FnPartitioner tag_ops(std::vector<EdgeOp> ops, const std::string& tag, const std::string& backend) {
  return FnPartitioner([=](PartitionResult& r) {
    for (ir::Node& n : r.tagged_exported_program.graph.nodes())
      if (!n.dead && !n.is_delegate_call() && std::find(ops.begin(), ops.end(), n.op) != ops.end())
        n.meta.delegation_tag = tag;
    r.partition_tags[tag] = DelegationSpec{backend, {CompileSpec::from_string("who", backend)}};
  });
}

std::vector<ir::NodeId> delegate_calls(const ir::Graph& g) {
  std::vector<ir::NodeId> ids;
  for (const ir::Node& n : g.nodes())
    if (n.is_delegate_call()) ids.push_back(n.id);
  return ids;
}

const ir::Value* find_value(const ir::Graph& g, const std::string& name) {
  for (const ir::Value& v : g.values())
    if (v.name == name) return &v;
  return nullptr;
}

std::string lower_error(const ir::ExportedProgram& original, const PartitionResult& r) {
  try {
    to_backend(original, r);
  } catch (const CompileError& e) {
    return e.what();
  }
  FAIL("to_backend accepted an invalid partition");
  return "";
}

void setup() {
  testing::register_recording_backends();
  recordings(kRecordingA).clear();
  recordings(kRecordingB).clear();
}

TEST_CASE("untagged constants become delegate inputs while tagged constants move into the delegate",
          "[backend]") {
  setup();
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {2, 3});
  const auto w1 = b.constant_f32("w1", {2, 3}, std::vector<float>(6, 2.f));
  const auto w2 = b.constant_f32("w2", {2, 3}, std::vector<float>(6, 3.f));
  const auto w3 = b.constant_f32("w3", {2, 3}, std::vector<float>(6, 4.f));
  const auto sum = b.op(EdgeOp::Add, {b.op(EdgeOp::Mul, {x, w1}), w2});
  const auto out = b.op(EdgeOp::Sub, {b.op(EdgeOp::Relu, {b.op(EdgeOp::Mul, {sum, w3})}), w3});
  b.output(out, "out");
  const ir::ExportedProgram program = b.build();
  PartitionResult r = tag_nodes(program, {0, 1, 2}, "a_0");
  r.tagged_exported_program.graph.value(w1).delegation_tag = "a_0";
  r.tagged_exported_program.graph.value(w3).delegation_tag = "a_0";  // also read outside: stays there too

  const ir::ExportedProgram lowered = to_backend(program, r);
  REQUIRE(ir::verify(lowered).ok());
  REQUIRE(recordings(kRecordingA).size() == 1);
  const testing::RecordedPartition& rec = recordings(kRecordingA)[0];
  CHECK(rec.node_ops == std::vector<std::string>{"mul", "add", "mul"});
  CHECK(rec.input_names == std::vector<std::string>{"x", "w2"});
  CHECK(rec.constant_names == std::vector<std::string>{"w1", "w3"});
  CHECK(rec.output_names.size() == 1);

  const ir::Graph& g = lowered.graph;
  REQUIRE(g.nodes().size() == 3);
  const ir::Node& call = g.nodes()[0];
  REQUIRE(call.is_delegate_call());
  REQUIRE(call.inputs.size() == 2);
  CHECK(g.value(call.inputs[0]).name == "x");
  CHECK(g.value(call.inputs[1]).name == "w2");
  CHECK(g.value(call.inputs[1]).is_constant());
  CHECK(find_value(g, "w1") == nullptr);  // moved in, read by nothing outside
  REQUIRE(find_value(g, "w3") != nullptr);
  CHECK(find_value(g, "w3")->delegation_tag.empty());
  CHECK(g.nodes()[1].op == EdgeOp::Relu);
  CHECK(g.nodes()[1].inputs[0] == call.outputs[0]);
}

TEST_CASE("two partitions of one backend become two call_delegate nodes wired in order", "[backend]") {
  setup();
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {4});
  const auto a = b.op(EdgeOp::Abs, {b.op(EdgeOp::Neg, {x})});  // nodes 0, 1
  const auto r = b.op(EdgeOp::Relu, {a});                      // node 2
  const auto e = b.op(EdgeOp::Sin, {b.op(EdgeOp::Exp, {r})});  // nodes 3, 4
  b.output(e, "out");
  b.output(a, "abs_out");
  const ir::ExportedProgram program = b.build();
  PartitionResult tagged = tag_nodes(program, {0, 1}, "a_0");
  add_tag(tagged, {3, 4}, "a_1");

  const ir::ExportedProgram lowered = to_backend(program, tagged);
  const ir::Graph& g = lowered.graph;
  REQUIRE(lowered.delegates.size() == 2);
  CHECK(lowered.delegates[0].tag == "a_0");
  CHECK(lowered.delegates[1].tag == "a_1");
  CHECK(lowered.delegates[0].backend_id == kRecordingA);
  REQUIRE(g.nodes().size() == 3);
  const ir::Node& first = g.nodes()[0];
  const ir::Node& relu = g.nodes()[1];
  const ir::Node& second = g.nodes()[2];
  REQUIRE(first.is_delegate_call());
  REQUIRE(second.is_delegate_call());
  CHECK(first.delegate == 0);
  CHECK(second.delegate == 1);
  CHECK(g.value(first.inputs.at(0)).name == "x");
  REQUIRE(first.outputs.size() == 1);
  CHECK(g.value(first.outputs[0]).name == "abs_out");
  CHECK(relu.inputs.at(0) == first.outputs[0]);
  CHECK(second.inputs == std::vector<ir::ValueId>{relu.outputs[0]});
  CHECK(g.outputs() == std::vector<ir::ValueId>{second.outputs.at(0), first.outputs[0]});
  CHECK(g.value(g.outputs()[0]).name == "out");
  REQUIRE(recordings(kRecordingA).size() == 2);
  CHECK(recordings(kRecordingA)[1].node_ops == std::vector<std::string>{"exp", "sin"});
}

TEST_CASE("nodes between a partition's nodes are re-ordered around its call_delegate node", "[backend]") {
  setup();
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {4});
  const auto a = b.op(EdgeOp::Neg, {x});     // node 0, tagged
  const auto r = b.op(EdgeOp::Relu, {a});    // node 1: reads the partition
  const auto u = b.op(EdgeOp::Exp, {x});     // node 2: the partition reads it
  const auto c = b.op(EdgeOp::Add, {a, u});  // node 3, tagged
  b.output(r, "r");
  b.output(c, "c");
  const ir::ExportedProgram program = b.build();
  const ir::ExportedProgram lowered = to_backend(program, tag_nodes(program, {0, 3}, "a_0"));
  REQUIRE(ir::verify(lowered).ok());
  const ir::Graph& g = lowered.graph;
  REQUIRE(g.nodes().size() == 3);
  CHECK(g.nodes()[0].op == EdgeOp::Exp);
  CHECK(g.nodes()[1].is_delegate_call());
  CHECK(g.nodes()[2].op == EdgeOp::Relu);
  CHECK(g.nodes()[1].inputs == std::vector<ir::ValueId>{g.inputs()[0], g.nodes()[0].outputs[0]});
  CHECK(g.nodes()[2].inputs == std::vector<ir::ValueId>{g.nodes()[1].outputs.at(0)});
  for (const ir::Node& n : g.nodes()) CHECK(n.id == &n - g.nodes().data());
  for (const ir::Node& n : g.nodes())
    for (ir::ValueId v : n.outputs) CHECK(g.value(v).producer == n.id);
}

TEST_CASE("two backends in one model via two to_backend runs", "[backend]") {
  setup();
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {4});
  const auto w = b.constant_f32("w", {4}, {1.f, 2.f, 3.f, 4.f});
  const auto t = b.op(EdgeOp::Cos, {b.op(EdgeOp::Sin, {x})});      // nodes 0, 1 → A
  const auto u = b.op(EdgeOp::Relu, {b.op(EdgeOp::Mul, {t, w})});  // nodes 2, 3 → B
  b.output(b.op(EdgeOp::Exp, {u}), "out");                         // node 4 stays portable
  const ir::ExportedProgram program = b.build();

  const ir::ExportedProgram first =
      to_backend(program, tag_ops({EdgeOp::Sin, EdgeOp::Cos}, "trig_0", kRecordingA));
  REQUIRE(delegate_calls(first.graph).size() == 1);
  const ir::ExportedProgram both =
      to_backend(first, tag_ops({EdgeOp::Mul, EdgeOp::Relu}, "arith_0", kRecordingB));
  REQUIRE(ir::verify(both).ok());
  REQUIRE(both.delegates.size() == 2);
  CHECK(both.delegates[0].backend_id == kRecordingA);
  CHECK(both.delegates[0].tag == "trig_0");
  CHECK(both.delegates[1].backend_id == kRecordingB);
  CHECK(both.delegates[1].compile_specs ==
        std::vector<CompileSpec>{CompileSpec::from_string("who", kRecordingB)});
  const ir::Graph& g = both.graph;
  REQUIRE(g.nodes().size() == 3);
  CHECK(g.nodes()[0].delegate == 0);
  CHECK(g.nodes()[1].delegate == 1);
  CHECK(g.nodes()[2].op == EdgeOp::Exp);
  CHECK(g.nodes()[1].inputs.at(0) == g.nodes()[0].outputs.at(0));
  CHECK(g.value(g.nodes()[1].inputs.at(1)).name == "w");  // untagged constant: a delegate input
  CHECK(g.nodes()[2].inputs.at(0) == g.nodes()[1].outputs.at(0));
  REQUIRE(recordings(kRecordingB).size() == 1);
  CHECK(recordings(kRecordingB)[0].node_ops == std::vector<std::string>{"mul", "relu"});
  CHECK(recordings(kRecordingB)[0].input_names.size() == 2);
}

TEST_CASE("the whole-program overload lowers every node and constant into one call_delegate node",
          "[backend]") {
  setup();
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {2});
  const auto y = b.input("y", DType::Float32, {2});
  const auto w = b.constant_f32("w", {2}, {1.f, 2.f});
  const auto s = b.op(EdgeOp::Add, {b.op(EdgeOp::Mul, {x, w}), y});
  b.output(b.op(EdgeOp::Relu, {s}), "out");
  b.output(s, "sum");
  const std::vector<CompileSpec> specs = {CompileSpec::from_string("mode", "fast")};

  const ir::ExportedProgram lowered = to_backend(kRecordingA, b.build(), specs);
  REQUIRE(ir::verify(lowered).ok());
  REQUIRE(lowered.graph.nodes().size() == 1);
  const ir::Node& call = lowered.graph.nodes()[0];
  REQUIRE(call.is_delegate_call());
  CHECK(call.meta.onnx_name == "recording_a_whole");
  CHECK(call.inputs == lowered.graph.inputs());
  // Outputs in the order the partition computes them: sum, then out.
  CHECK(call.outputs == std::vector<ir::ValueId>{lowered.graph.outputs()[1], lowered.graph.outputs()[0]});
  REQUIRE(lowered.delegates.size() == 1);
  CHECK(lowered.delegates[0].tag == "recording_a_whole");
  CHECK(lowered.delegates[0].compile_specs == specs);
  const testing::RecordedPartition& rec = recordings(kRecordingA).at(0);
  CHECK(rec.node_ops == std::vector<std::string>{"mul", "add", "relu"});
  CHECK(rec.input_names == std::vector<std::string>{"x", "y"});
  CHECK(rec.output_names == std::vector<std::string>{"sum", "out"});
  CHECK(rec.constant_names == std::vector<std::string>{"w"});
  CHECK(rec.compile_specs == specs);
  for (const ir::Value& v : lowered.graph.values()) CHECK_FALSE(v.is_constant());
}

TEST_CASE("call_delegate gets one new debug handle and the module keeps the original subgraph", "[backend]") {
  setup();
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {3});
  b.output(b.op(EdgeOp::Exp, {b.op(EdgeOp::Abs, {b.op(EdgeOp::Neg, {x})})}), "out");  // handles 1, 2, 3
  const ir::ExportedProgram program = b.build();
  const ir::ExportedProgram lowered = to_backend(program, tag_nodes(program, {1, 2}, "a_0"));

  const ir::Graph& g = lowered.graph;
  REQUIRE(g.nodes().size() == 2);
  const ir::Node& call = g.nodes()[1];
  REQUIRE(call.is_delegate_call());
  CHECK(call.meta.debug_handles == std::vector<int32_t>{4});
  CHECK(call.meta.onnx_name == "a_0");
  CHECK(call.meta.onnx_op_type == "call_delegate");
  CHECK(call.meta.delegation_tag.empty());
  REQUIRE(lowered.debug_handles.count(4) == 1);
  CHECK(lowered.debug_handles.at(4).onnx_name == "call_delegate a_0");
  CHECK(lowered.debug_handles.at(4).onnx_op_type == "call_delegate");
  CHECK(lowered.debug_handles.count(2) == 1);  // the originals stay for the debug map

  const ir::LoweredBackendModule& m = lowered.delegates.at(0);
  CHECK(m.processed_bytes == testing::recording_bytes(*recordings(kRecordingA).at(0).program));
  CHECK(std::get<IntDelegateDebugMap>(m.debug_handle_map) == IntDelegateDebugMap{{0, {2}}, {1, {3}}});
  REQUIRE(m.original_program);
  const ir::ExportedProgram& sub = *m.original_program;
  REQUIRE(ir::verify(sub).ok());
  CHECK(sub.source_path == program.source_path);
  REQUIRE(sub.graph.nodes().size() == 2);
  CHECK(sub.graph.nodes()[0].op == EdgeOp::Abs);
  CHECK(sub.graph.nodes()[0].meta.onnx_name == "abs_2");
  CHECK(sub.graph.nodes()[1].meta.debug_handles == std::vector<int32_t>{3});
  CHECK(sub.graph.nodes()[1].meta.delegation_tag.empty());
  CHECK(sub.debug_handles.size() == 2);
  CHECK(sub.debug_handles.count(1) == 0);
  CHECK(sub.graph.value(sub.graph.outputs().at(0)).name == "out");
}

TEST_CASE("to_backend rejects a partitioner that changed the graph", "[backend]") {
  setup();
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {3});
  b.output(b.op(EdgeOp::Relu, {b.op(EdgeOp::Neg, {x})}));
  const ir::ExportedProgram program = b.build();
  PartitionResult r = tag_nodes(program, {0, 1}, "a_0");
  r.tagged_exported_program.graph.node(1).inputs = {x};
  const std::string msg = lower_error(program, r);
  CHECK_THAT(msg, Catch::Contains("changed the graph"));
  CHECK_THAT(msg, Catch::Contains("'relu_2' (relu)"));

  PartitionResult op_changed = tag_nodes(program, {0}, "a_0");
  op_changed.tagged_exported_program.graph.node(0).op = EdgeOp::Abs;
  CHECK_THAT(lower_error(program, op_changed),
             Catch::Contains("node 'neg_1' (neg) changed op from neg to abs"));
}

TEST_CASE("to_backend rejects a tagged graph input or graph output value", "[backend]") {
  setup();
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {2});
  const auto w = b.constant_f32("w", {2}, {1.f, 2.f});
  b.output(b.op(EdgeOp::Add, {x, w}));
  b.output(w, "w_out");
  const ir::ExportedProgram program = b.build();
  PartitionResult r = tag_nodes(program, {0}, "a_0");
  r.tagged_exported_program.graph.value(x).delegation_tag = "a_0";
  const std::string msg = lower_error(program, r);
  CHECK_THAT(msg, Catch::Contains("graph input 'x'"));
  CHECK_THAT(msg, Catch::Contains("'a_0'"));

  PartitionResult out = tag_nodes(program, {0}, "a_0");
  out.tagged_exported_program.graph.value(w).delegation_tag = "a_0";
  CHECK_THAT(lower_error(program, out), Catch::Contains("constant 'w_out' is a graph output"));
}

TEST_CASE("to_backend rejects a tag without a DelegationSpec and names its nodes", "[backend]") {
  setup();
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {2});
  b.output(b.op(EdgeOp::Relu, {b.op(EdgeOp::Neg, {x})}));
  const ir::ExportedProgram program = b.build();
  PartitionResult r = tag_nodes(program, {0}, "a_0");
  r.tagged_exported_program.graph.node(1).meta.delegation_tag = "lost_0";
  const std::string msg = lower_error(program, r);
  CHECK_THAT(msg, Catch::Contains("tag 'lost_0'"));
  CHECK_THAT(msg, Catch::Contains("'relu_2' (relu)"));
  CHECK_THAT(msg, Catch::Contains("no DelegationSpec"));
}

TEST_CASE("to_backend rejects an unknown backend id and lists the registered ones", "[backend]") {
  setup();
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {2});
  b.output(b.op(EdgeOp::Relu, {x}));
  const ir::ExportedProgram program = b.build();
  const std::string msg = lower_error(program, tag_nodes(program, {0}, "nope_0", "nope"));
  CHECK_THAT(msg, Catch::Contains("backend 'nope'"));
  CHECK_THAT(msg, Catch::Contains("tag 'nope_0'"));
  CHECK_THAT(msg, Catch::Contains(kRecordingA));
  CHECK_THROWS_WITH(to_backend("nope", program, {}), Catch::Contains("'nope'"));
}

TEST_CASE("to_backend names the path that leaves a non-convex tag and re-enters it", "[backend]") {
  setup();
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {2});
  const auto m = b.op(EdgeOp::Mul, {x, x});    // mul_1
  const auto n = b.op(EdgeOp::Neg, {m});       // neg_2, untagged
  b.output(b.op(EdgeOp::Add, {m, n}), "out");  // add_3
  const ir::ExportedProgram program = b.build();
  const std::string msg = lower_error(program, tag_nodes(program, {0, 2}, "demo_0"));
  CHECK_THAT(msg, Catch::Contains("tag 'demo_0' is not convex: path 'mul_1' (mul) \u2192 'neg_2' (neg) "
                                  "[untagged] \u2192 'add_3' (add) leaves and re-enters it"));
}

TEST_CASE("to_backend rejects a tagged call_delegate node", "[backend]") {
  setup();
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {2});
  b.output(b.op(EdgeOp::Relu, {b.op(EdgeOp::Neg, {x})}));
  const ir::ExportedProgram program = b.build();
  const ir::ExportedProgram lowered = to_backend(program, tag_nodes(program, {0}, "a_0"));
  const ir::NodeId call = delegate_calls(lowered.graph).at(0);
  const std::string msg = lower_error(lowered, tag_nodes(lowered, {call, 1}, "b_0", kRecordingB));
  CHECK_THAT(msg, Catch::Contains("call_delegate node 'a_0' (call_delegate)"));
  CHECK_THAT(msg, Catch::Contains("'b_0'"));
}

TEST_CASE("to_backend rejects two partitions that are convex alone but together form a cycle", "[backend]") {
  setup();
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {2});
  const auto a1 = b.op(EdgeOp::Neg, {x});    // neg_1   A
  const auto b1 = b.op(EdgeOp::Abs, {x});    // abs_2   B
  const auto a2 = b.op(EdgeOp::Exp, {b1});   // exp_3   A
  const auto b2 = b.op(EdgeOp::Relu, {a1});  // relu_4  B
  b.output(a2, "a2");
  b.output(b2, "b2");
  const ir::ExportedProgram program = b.build();
  PartitionResult r = tag_nodes(program, {0, 2}, "a_0");
  add_tag(r, {1, 3}, "b_0", kRecordingB);
  const std::string msg = lower_error(program, r);
  CHECK_THAT(msg, Catch::Contains("tag 'b_0' is not convex once partition 'a_0' is lowered"));
  CHECK_THAT(msg, Catch::Contains("'abs_2' (abs) \u2192 'a_0' (call_delegate) [partition 'a_0', lowered to "
                                  "'recording_a'] \u2192 'relu_4' (relu)"));
  CHECK_THAT(msg, Catch::Contains("cycle"));
}

class ThrowingBackend : public BackendDetails {
 public:
  PreprocessResult preprocess(const ir::ExportedProgram&, std::span<const CompileSpec>) const override {
    throw CompileError("cannot handle neg");
  }
};

TEST_CASE("a backend's preprocess error names the tag and the backend", "[backend]") {
  setup();
  static std::once_flag once;
  std::call_once(once, [] { register_backend_details("throwing", std::make_unique<ThrowingBackend>()); });
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {2});
  b.output(b.op(EdgeOp::Neg, {x}));
  const ir::ExportedProgram program = b.build();
  const std::string msg = lower_error(program, tag_nodes(program, {0}, "t_0", "throwing"));
  CHECK_THAT(msg, Catch::Contains("backend 'throwing'"));
  CHECK_THAT(msg, Catch::Contains("partition 't_0'"));
  CHECK_THAT(msg, Catch::Contains("cannot handle neg"));
}

}  // namespace
}  // namespace etc
