// A composite partitioner planning by cost: a backend's fragments between
// another backend's nodes go to that other backend when the boundaries cost
// more than they gain; a node one backend runs much faster stays with it
// when its boundaries are cheap; priority planning keeps first-taker order.
#include <catch2/catch.hpp>
#include <set>

#include "compiler/backend/capability_partitioner.h"
#include "partitioners/composite/backend_assignment.h"
#include "partitioners/composite/composite_partitioner.h"
#include "tests/support/graph_builder.h"

namespace etc {
namespace {

using testing::GraphBuilder;

// A capability partitioner taking the ops in `ops`, with `cost` as its
// relative cost for matmul (1 for everything else).
class OpsPartitioner : public Partitioner {
 public:
  OpsPartitioner(std::string name, std::set<EdgeOp> ops, double matmul_cost = 1.0)
      : name_(std::move(name)), ops_(std::move(ops)), matmul_cost_(matmul_cost) {}
  std::string name() const override { return name_; }
  PartitionResult partition(const ir::ExportedProgram& program) const override {
    const auto rule = [this](const ir::Graph&, const ir::Node& n) {
      return ops_.count(n.op) ? Support::yes() : Support::no("not mine");
    };
    return partition_by_capability(program, rule, name_, DelegationSpec{name_, {}});
  }
  double relative_cost(const ir::Graph&, const ir::Node& n) const override {
    return n.op == EdgeOp::MatMul ? matmul_cost_ : 1.0;
  }

 private:
  std::string name_;
  std::set<EdgeOp> ops_;
  double matmul_cost_;
};

std::vector<std::string> backends_of(const PartitionResult& r) {
  std::vector<std::string> out;
  for (const ir::Node& n : r.tagged_exported_program.graph.nodes()) {
    const std::string& tag = n.meta.delegation_tag;
    out.push_back(tag.empty() ? "" : r.partition_tags.at(tag).backend_id);
  }
  return out;
}

CompositePartitioner composite(double matmul_cost, CompositePartitioner::Planning planning) {
  std::vector<std::unique_ptr<Partitioner>> children;
  children.push_back(
      std::make_unique<OpsPartitioner>("fast", std::set<EdgeOp>{EdgeOp::MatMul, EdgeOp::Relu}, matmul_cost));
  children.push_back(std::make_unique<OpsPartitioner>(
      "wide", std::set<EdgeOp>{EdgeOp::MatMul, EdgeOp::Relu, EdgeOp::Tanh, EdgeOp::Add}));
  return CompositePartitioner(std::move(children), planning);
}

// relu -> tanh -> relu -> tanh -> matmul(w) on [rows, 64]: "fast" takes the
// relus and the matmul, "wide" everything.
ir::ExportedProgram chain(int64_t rows) {
  GraphBuilder b;
  auto x = b.input("x", DType::Float32, {rows, 64});
  x = b.op(EdgeOp::Tanh, {b.op(EdgeOp::Relu, {x})});
  x = b.op(EdgeOp::Tanh, {b.op(EdgeOp::Relu, {x})});
  const auto w = b.constant_f32("w", {64, 64}, std::vector<float>(64 * 64, 0.01f));
  b.output(b.op(EdgeOp::MatMul, {x, w}));
  return b.build();
}

TEST_CASE("cost planning gives fragments to the backend around them", "[partition][composite]") {
  const ir::ExportedProgram p = chain(8);
  const PartitionResult priority = composite(1.0, CompositePartitioner::Planning::kPriority).partition(p);
  CHECK(backends_of(priority) == std::vector<std::string>{"fast", "wide", "fast", "wide", "fast"});
  CHECK(priority.partition_tags.size() == 5);
  const PartitionResult cost = composite(1.0, CompositePartitioner::Planning::kCost).partition(p);
  CHECK(backends_of(cost) == std::vector<std::string>(5, "wide"));
  CHECK(cost.partition_tags.size() == 1);
}

TEST_CASE("cost planning keeps a node with the backend that runs it much faster", "[partition][composite]") {
  // A large matmul at a tenth of the cost outweighs one boundary.
  const ir::ExportedProgram p = chain(4096);
  const PartitionResult r = composite(0.1, CompositePartitioner::Planning::kCost).partition(p);
  CHECK(backends_of(r) == std::vector<std::string>{"wide", "wide", "wide", "wide", "fast"});
  CHECK(r.partition_tags.size() == 2);
}

TEST_CASE("a plan's cost counts the conversions at each partition boundary", "[partition][composite]") {
  const ir::ExportedProgram p = chain(8);
  BackendChoices choices;
  choices.takes = {{true, false, true, false, true}, {true, true, true, true, true}};
  choices.cost = {std::vector<double>(5, 1.0), std::vector<double>(5, 1.0)};
  const double split = plan_cost(p, choices, {0, 1, 0, 1, 0});
  const double whole = plan_cost(p, choices, {1, 1, 1, 1, 1});
  // Four more boundaries of a [8, 64] float tensor, each a delegate call.
  CHECK(split - whole == Approx(4 * (8 * 64 * 4 / kBoundaryBytesPerSecond + kBoundarySeconds)));
  CHECK(assign_backends(p, choices) == std::vector<int>{1, 1, 1, 1, 1});
}

}  // namespace
}  // namespace etc
