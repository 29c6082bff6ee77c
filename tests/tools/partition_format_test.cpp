#include "tools/etc/partition_format.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "compiler/backend/partition_report.h"
#include "partitioners/demo/demo_partitioner.h"
#include "tests/support/graph_builder.h"
#include "tools/etc/backend_flags.h"

namespace etc {
namespace {

using testing::GraphBuilder;

// x → mul(x, x) → tanh → sin → out; the tanh splits two demo partitions.
PartitionResult split_program() {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {2, 4});
  const auto m = b.op(EdgeOp::Mul, {x, x});
  const auto t = b.op(EdgeOp::Tanh, {m});
  b.output(b.op(EdgeOp::Sin, {t}), "out");
  return demo::DemoPartitioner().partition(b.build());
}

TEST_CASE("partition report places every node and counts coverage", "[cli][partition]") {
  const PartitionReport r = make_partition_report(split_program(), {"demo"});
  REQUIRE(r.nodes.size() == 3);
  CHECK(r.nodes[0].tag == "demo_0");
  CHECK(r.nodes[1].tag.empty());
  CHECK(r.nodes[1].reason.find("has no 'tanh'") != std::string::npos);
  CHECK(r.nodes[2].tag == "demo_1");
  REQUIRE(r.partitions.size() == 2);
  CHECK(r.partitions[0].inputs == std::vector<std::string>{"x"});
  CHECK(r.partitions[1].outputs == std::vector<std::string>{"out"});
  CHECK(r.delegated_nodes == 2);
  CHECK(r.node_coverage() == Approx(2.0 / 3.0));
  CHECK(r.total_flops == 24);  // one per output element
  CHECK(r.flops_coverage() == Approx(16.0 / 24.0));
}

TEST_CASE("partition JSON follows the documented schema", "[cli][partition]") {
  const auto j =
      nlohmann::json::parse(cli::format_partition_json(make_partition_report(split_program(), {"demo"})));
  CHECK(j["schema_version"] == 1);
  CHECK(j["backends"] == nlohmann::json::array({"demo"}));
  CHECK(j["nodes"][1]["backend"].is_null());
  CHECK(j["nodes"][0]["partition"] == "demo_0");
  CHECK(j["partitions"][1]["nodes"] == nlohmann::json::array({2}));
  CHECK(j["summary"]["partitions"] == 2);
  CHECK(j["summary"]["delegated_nodes"] == 2);
}

TEST_CASE("partition DOT draws partitions as clusters with ONNX names", "[cli][partition]") {
  const PartitionResult result = split_program();
  const std::string dot = cli::format_partition_dot(make_partition_report(result, {"demo"}),
                                                    result.tagged_exported_program.graph);
  CHECK(dot.rfind("digraph partitions {", 0) == 0);
  CHECK(dot.find("subgraph cluster_0") != std::string::npos);
  CHECK(dot.find("subgraph cluster_1") != std::string::npos);
  CHECK(dot.find("label=\"mul_1\\nmul\"") != std::string::npos);
  CHECK(dot.find("n0 -> n1;") != std::string::npos);
}

TEST_CASE("CI gates say which threshold was missed", "[cli][partition]") {
  const PartitionReport r = make_partition_report(split_program(), {"demo"});
  cli::BackendFlags flags;
  CHECK(cli::check_gates(flags, r).empty());
  flags.require_coverage = 50;
  CHECK(cli::check_gates(flags, r).empty());
  flags.require_coverage = 70;
  CHECK(cli::check_gates(flags, r).find(
            "66.7% of nodes delegated (2 of 3), --require-coverage needs 70.0%") != std::string::npos);
  flags.require_coverage = -1;
  flags.max_partitions = 1;
  CHECK(cli::check_gates(flags, r) == "2 partitions, --max-partitions allows 1");
}

}  // namespace
}  // namespace etc
