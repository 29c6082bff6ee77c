#include "partitioners/demo/demo_partitioner.h"

#include <catch2/catch.hpp>

#include "partitioners/composite/composite_partitioner.h"
#include "tests/support/graph_builder.h"

namespace etc {
namespace {

using testing::GraphBuilder;

const ir::Node& node_of(const PartitionResult& r, ir::NodeId id) {
  return r.tagged_exported_program.graph.node(id);
}

TEST_CASE("demo partitioner tags its ops and gives a reason for the rest", "[demo][partition]") {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {2, 3});
  const auto bias = b.input("bias", DType::Float32, {3});
  const auto w = b.constant_f32("w", {2, 3}, {1, 2, 3, 4, 5, 6});
  const auto a = b.op(EdgeOp::Add, {x, w});     // node 0: demo, w moves in
  const auto s = b.op(EdgeOp::Sigmoid, {a});    // node 1: no sigmoid
  const auto c = b.op(EdgeOp::Add, {s, bias});  // node 2: broadcasting
  b.output(b.op(EdgeOp::Cast, {c}, ir::Attrs{{"to", static_cast<int64_t>(DType::Int32)}}));  // node 3
  const PartitionResult r = demo::DemoPartitioner().partition(b.build());

  CHECK(node_of(r, 0).meta.delegation_tag == "demo_0");
  CHECK(r.tagged_exported_program.graph.value(w).delegation_tag == "demo_0");
  REQUIRE(r.partition_tags.count("demo_0") == 1);
  CHECK(r.partition_tags.at("demo_0").backend_id == "demo");
  CHECK(r.partition_tags.size() == 1);
  CHECK(r.rejection_reasons.at(1) == "the demo backend has no 'sigmoid'");
  CHECK(r.rejection_reasons.at(2).find("does not broadcast") != std::string::npos);
  CHECK(r.rejection_reasons.at(3).find("no 'cast'") != std::string::npos);
  CHECK(r.rejection_reasons.count(0) == 0);
}

TEST_CASE("demo partitioner passes its compile specs to every tag", "[demo][partition]") {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {4});
  b.output(b.op(EdgeOp::Sin, {b.op(EdgeOp::Exp, {b.op(EdgeOp::Cos, {x})})}));
  const std::vector<CompileSpec> specs = {CompileSpec::from_string("max_input_elements", "8")};
  const PartitionResult r = demo::DemoPartitioner(specs).partition(b.build());
  REQUIRE(r.partition_tags.size() == 2);
  for (const auto& [tag, spec] : r.partition_tags) CHECK(spec.compile_specs == specs);
}

// Tags only sin, under backend "trig".
class SinPartitioner : public Partitioner {
 public:
  std::string name() const override { return "trig"; }
  PartitionResult partition(const ir::ExportedProgram& program) const override {
    auto sin_only = [](const ir::Graph&, const ir::Node& n) {
      return n.op == EdgeOp::Sin ? Support::yes() : Support::no("only sin");
    };
    return partition_by_capability(program, sin_only, "trig", DelegationSpec{"trig", {}});
  }
};

TEST_CASE("composite partitioner gives nodes to the first backend that takes them", "[demo][partition]") {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {4});
  const auto s = b.op(EdgeOp::Sin, {x});  // node 0: trig (first)
  const auto c = b.op(EdgeOp::Cos, {s});  // node 1: demo
  b.output(b.op(EdgeOp::Exp, {c}));       // node 2: nobody
  std::vector<std::unique_ptr<Partitioner>> children;
  children.push_back(std::make_unique<SinPartitioner>());
  children.push_back(std::make_unique<demo::DemoPartitioner>());
  const CompositePartitioner composite(std::move(children));
  CHECK(composite.name() == "trig+demo");
  const PartitionResult r = composite.partition(b.build());
  CHECK(node_of(r, 0).meta.delegation_tag == "trig_0");
  CHECK(node_of(r, 1).meta.delegation_tag == "demo_0");
  CHECK(node_of(r, 2).meta.delegation_tag.empty());
  CHECK(r.partition_tags.at("trig_0").backend_id == "trig");
  CHECK(r.partition_tags.at("demo_0").backend_id == "demo");
  CHECK(r.rejection_reasons.at(2) == "trig: only sin; demo: the demo backend has no 'exp'");
  CHECK(r.rejection_reasons.count(1) == 0);
}

}  // namespace
}  // namespace etc
