// propose_partitions / partition_by_capability: convex, connected, maximal
// partitions; earlier tags and call_delegate nodes respected; a reason for
// every node left out. Hand-made graphs pin the behaviour, random DAGs check
// the guarantees for many seeds.
#include "compiler/backend/capability_partitioner.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <random>
#include <set>

#include "compiler/common/compile_error.h"
#include "tests/support/graph_builder.h"

using namespace etc;
using Catch::Matchers::Contains;
using etc::testing::GraphBuilder;

namespace {

using Partitions = std::vector<std::vector<ir::NodeId>>;

NodeSupport ops_supported(std::set<EdgeOp> ops) {
  return [ops](const ir::Graph&, const ir::Node& n) {
    return ops.count(n.op) ? Support::yes() : Support::no(std::string("no ") + edge_op_name(n.op));
  };
}

ir::NodeId node_of(const ir::ExportedProgram& p, ir::ValueId v) { return p.graph.value(v).producer; }

// The graph contracted so that each partition and each earlier tag is one
// group; every other live node is a group of its own.
struct Contracted {
  std::vector<int> group;  // by node id; -1 for dead nodes
  int count = 0;
  std::vector<std::set<int>> succ;
};

Contracted contract(const ir::Graph& g, const Partitions& partitions) {
  Contracted c;
  c.group.assign(g.nodes().size(), -1);
  for (const auto& part : partitions) {
    for (ir::NodeId n : part) c.group[n] = c.count;
    ++c.count;
  }
  std::map<std::string, int> tag_group;
  for (const ir::Node& n : g.nodes()) {
    if (n.dead || c.group[n.id] >= 0) continue;
    if (!n.meta.delegation_tag.empty()) {
      auto [it, added] = tag_group.emplace(n.meta.delegation_tag, c.count);
      if (added) ++c.count;
      c.group[n.id] = it->second;
    } else {
      c.group[n.id] = c.count++;
    }
  }
  c.succ.resize(c.count);
  for (const ir::Node& n : g.nodes()) {
    if (n.dead) continue;
    for (ir::ValueId in : n.inputs) {
      if (in == ir::kNoValue) continue;
      const ir::NodeId p = g.value(in).producer;
      if (p >= 0 && c.group[p] != c.group[n.id]) c.succ[c.group[p]].insert(c.group[n.id]);
    }
  }
  return c;
}

bool acyclic(const Contracted& c) {
  std::vector<int> indegree(c.count, 0);
  for (const auto& s : c.succ)
    for (int t : s) ++indegree[t];
  std::vector<int> ready;
  for (int i = 0; i < c.count; ++i)
    if (indegree[i] == 0) ready.push_back(i);
  int done = 0;
  while (!ready.empty()) {
    const int g = ready.back();
    ready.pop_back();
    ++done;
    for (int t : c.succ[g])
      if (--indegree[t] == 0) ready.push_back(t);
  }
  return done == c.count;
}

// Whether `to` is reachable from `from` through some third group.
bool detour(const Contracted& c, int from, int to) {
  std::vector<bool> seen(c.count, false);
  std::vector<int> queue;
  for (int t : c.succ[from])
    if (t != to) queue.push_back(t), seen[t] = true;
  for (size_t i = 0; i < queue.size(); ++i)
    for (int t : c.succ[queue[i]]) {
      if (t == to) return true;
      if (!seen[t]) seen[t] = true, queue.push_back(t);
    }
  return false;
}

// Node-level: no node outside `part` is both reachable from it and reaches it.
bool convex(const ir::Graph& g, const std::vector<ir::NodeId>& part) {
  const auto users = g.users();
  std::set<ir::NodeId> inside(part.begin(), part.end());
  std::vector<bool> from(g.nodes().size(), false), to(g.nodes().size(), false);
  std::vector<ir::NodeId> queue;
  for (ir::NodeId n : part)
    for (ir::ValueId out : g.node(n).outputs)
      for (ir::NodeId u : users[out])
        if (!inside.count(u) && !from[u]) from[u] = true, queue.push_back(u);
  for (size_t i = 0; i < queue.size(); ++i)
    for (ir::ValueId out : g.node(queue[i]).outputs)
      for (ir::NodeId u : users[out])
        if (!inside.count(u) && !from[u]) from[u] = true, queue.push_back(u);
  queue.clear();
  auto push_producers = [&](ir::NodeId n) {
    for (ir::ValueId in : g.node(n).inputs) {
      if (in == ir::kNoValue) continue;
      const ir::NodeId p = g.value(in).producer;
      if (p >= 0 && !inside.count(p) && !to[p]) to[p] = true, queue.push_back(p);
    }
  };
  for (ir::NodeId n : part) push_producers(n);
  for (size_t i = 0; i < queue.size(); ++i) push_producers(queue[i]);
  for (size_t n = 0; n < from.size(); ++n)
    if (from[n] && to[n]) return false;
  return true;
}

bool weakly_connected(const ir::Graph& g, const std::vector<ir::NodeId>& part) {
  std::set<ir::NodeId> inside(part.begin(), part.end()), reached{part[0]};
  std::vector<ir::NodeId> queue{part[0]};
  const auto users = g.users();
  auto reach = [&](ir::NodeId n) {
    if (inside.count(n) && reached.insert(n).second) queue.push_back(n);
  };
  for (size_t i = 0; i < queue.size(); ++i) {
    const ir::Node& n = g.node(queue[i]);
    for (ir::ValueId in : n.inputs)
      if (in != ir::kNoValue && g.value(in).producer >= 0) reach(g.value(in).producer);
    for (ir::ValueId out : n.outputs)
      for (ir::NodeId u : users[out]) reach(u);
  }
  return reached.size() == inside.size();
}

// Every guarantee that does not depend on the options.
void check_guarantees(const ir::Graph& g, const ProposedPartitions& result, const NodeSupport& is_supported) {
  std::set<ir::NodeId> placed;
  ir::NodeId previous_first = -1;
  for (const auto& part : result.partitions) {
    REQUIRE(!part.empty());
    CHECK(std::is_sorted(part.begin(), part.end()));  // builder graphs are in id order
    CHECK(part[0] > previous_first);
    previous_first = part[0];
    for (ir::NodeId n : part) {
      CHECK(placed.insert(n).second);
      const ir::Node& node = g.node(n);
      CHECK(!node.dead);
      CHECK(!node.is_delegate_call());
      CHECK(node.meta.delegation_tag.empty());
      CHECK(is_supported(g, node).supported);
      CHECK(result.rejection_reasons.count(n) == 0);
    }
    CHECK(convex(g, part));
    CHECK(weakly_connected(g, part));
  }
  for (const ir::Node& n : g.nodes()) {
    if (n.dead || placed.count(n.id)) continue;
    const bool pre_tagged = !n.meta.delegation_tag.empty() && !n.is_delegate_call();
    CHECK(result.rejection_reasons.count(n.id) == (pre_tagged ? 0u : 1u));
    if (!pre_tagged && result.rejection_reasons.count(n.id))
      CHECK(!result.rejection_reasons.at(n.id).empty());
  }
  CHECK(acyclic(contract(g, result.partitions)));
}

// Merging any two partitions joined by an edge would create a cycle.
void check_maximal(const ir::Graph& g, const ProposedPartitions& result) {
  const Contracted c = contract(g, result.partitions);
  const int n = static_cast<int>(result.partitions.size());
  for (int a = 0; a < n; ++a)
    for (int b : c.succ[a])
      if (b < n) CHECK(detour(c, a, b));
}

}  // namespace

TEST_CASE("a chain of supported nodes becomes one partition", "[backend][capability]") {
  GraphBuilder b;
  auto x = b.input("x", DType::Float32, {4});
  auto y = b.op(EdgeOp::Add, {b.op(EdgeOp::Relu, {b.op(EdgeOp::Relu, {x})}), x});
  b.output(y);
  const ir::ExportedProgram p = b.build();
  const NodeSupport support = ops_supported({EdgeOp::Relu, EdgeOp::Add});
  const ProposedPartitions result = propose_partitions(p.graph, support);
  CHECK(result.partitions == Partitions{{0, 1, 2}});
  CHECK(result.rejection_reasons.empty());
}

TEST_CASE("an unsupported middle node of a diamond splits it to stay convex", "[backend][capability]") {
  // a → b (unsupported) → d and a → c → d: {a, c, d} would leave and re-enter through b.
  GraphBuilder b;
  auto x = b.input("x", DType::Float32, {4});
  auto a = b.op(EdgeOp::Relu, {x});
  auto mid = b.op(EdgeOp::Sin, {a});
  auto c = b.op(EdgeOp::Relu, {a});
  auto d = b.op(EdgeOp::Add, {mid, c});
  b.output(d);
  const ir::ExportedProgram p = b.build();
  const NodeSupport support = ops_supported({EdgeOp::Relu, EdgeOp::Add});
  const ProposedPartitions result = propose_partitions(p.graph, support);
  check_guarantees(p.graph, result, support);
  CHECK(result.partitions == Partitions{{node_of(p, a), node_of(p, c)}, {node_of(p, d)}});
  CHECK(result.rejection_reasons == std::map<ir::NodeId, std::string>{{node_of(p, mid), "no sin"}});
}

TEST_CASE("an unsupported node between supported runs gives two partitions", "[backend][capability]") {
  GraphBuilder b;
  auto x = b.input("x", DType::Float32, {4});
  auto r = b.op(EdgeOp::Relu, {b.op(EdgeOp::Relu, {x})});
  auto s = b.op(EdgeOp::Sin, {r});
  auto y = b.op(EdgeOp::Add, {b.op(EdgeOp::Relu, {s}), x});
  b.output(y);
  const ir::ExportedProgram p = b.build();
  const NodeSupport support = ops_supported({EdgeOp::Relu, EdgeOp::Add});
  const ProposedPartitions result = propose_partitions(p.graph, support);
  check_guarantees(p.graph, result, support);
  check_maximal(p.graph, result);
  CHECK(result.partitions == Partitions{{0, 1}, {3, 4}});
  CHECK(result.rejection_reasons.at(2) == "no sin");
}

TEST_CASE("small partitions are dropped with a reason", "[backend][capability]") {
  // relu → sin → relu → relu → relu: partitions of 1 and 3 nodes.
  GraphBuilder b;
  auto x = b.input("x", DType::Float32, {4});
  auto s = b.op(EdgeOp::Sin, {b.op(EdgeOp::Relu, {x})});
  b.output(b.op(EdgeOp::Relu, {b.op(EdgeOp::Relu, {b.op(EdgeOp::Relu, {s})})}));
  const ir::ExportedProgram p = b.build();
  const NodeSupport support = ops_supported({EdgeOp::Relu});

  CHECK(propose_partitions(p.graph, support).partitions == Partitions{{0}, {2, 3, 4}});

  CapabilityOptions min2;
  min2.min_partition_size = 2;
  ProposedPartitions result = propose_partitions(p.graph, support, min2);
  check_guarantees(p.graph, result, support);
  CHECK(result.partitions == Partitions{{2, 3, 4}});
  CHECK_THAT(result.rejection_reasons.at(0), Contains("1 node") && Contains("minimum partition size of 2"));

  CapabilityOptions no_single;
  no_single.allow_single_node_partitions = false;
  result = propose_partitions(p.graph, support, no_single);
  CHECK(result.partitions == Partitions{{2, 3, 4}});
  CHECK_THAT(result.rejection_reasons.at(0), Contains("single-node partitions are not allowed"));

  CapabilityOptions min4;
  min4.min_partition_size = 4;
  result = propose_partitions(p.graph, support, min4);
  check_guarantees(p.graph, result, support);
  CHECK(result.partitions.empty());
  CHECK(result.rejection_reasons.size() == 5);
  CHECK_THAT(result.rejection_reasons.at(3), Contains("3 nodes"));
}

TEST_CASE("nodes tagged earlier are kept out, never asked about and given no reason",
          "[backend][capability]") {
  GraphBuilder b;
  auto x = b.input("x", DType::Float32, {4});
  auto r1 = b.op(EdgeOp::Relu, {x});
  auto r2 = b.op(EdgeOp::Relu, {r1});
  b.output(b.op(EdgeOp::Relu, {b.op(EdgeOp::Relu, {r2})}));
  ir::ExportedProgram p = b.build();
  p.graph.node(node_of(p, r2)).meta.delegation_tag = "other_0";
  std::vector<int> asked(p.graph.nodes().size(), 0);
  const NodeSupport support = [&](const ir::Graph& g, const ir::Node& n) {
    ++asked[n.id];
    return Support::yes();
  };
  const ProposedPartitions result = propose_partitions(p.graph, support);
  CHECK(result.partitions == Partitions{{0}, {2, 3}});
  CHECK(result.rejection_reasons.empty());
  CHECK(asked == std::vector<int>{1, 0, 1, 1});
}

TEST_CASE("an earlier tag counts for convexity even when it is not connected", "[backend][capability]") {
  // Tag T = {t1, t2}: a → t1 and t2 → c, so a and c together would form a cycle with T.
  GraphBuilder b;
  auto x = b.input("x", DType::Float32, {4});
  auto y = b.input("y", DType::Float32, {4});
  auto a = b.op(EdgeOp::Relu, {x});
  auto t1 = b.op(EdgeOp::Sin, {a});
  auto t2 = b.op(EdgeOp::Sin, {y});
  auto c = b.op(EdgeOp::Add, {a, t2});
  b.output(t1);
  b.output(c);
  ir::ExportedProgram p = b.build();
  p.graph.node(node_of(p, t1)).meta.delegation_tag = "trig_0";
  p.graph.node(node_of(p, t2)).meta.delegation_tag = "trig_0";
  const NodeSupport support = ops_supported({EdgeOp::Relu, EdgeOp::Add});
  const ProposedPartitions result = propose_partitions(p.graph, support);
  check_guarantees(p.graph, result, support);
  CHECK(result.partitions == Partitions{{node_of(p, a)}, {node_of(p, c)}});
}

TEST_CASE("two convex partitions that would form a cycle together are not made", "[backend][capability]") {
  // Earlier tag T = {a, d, e} (a → e ← d) and new nodes b → c with a → c and
  // b → d: each of T and {b, c} is convex, but together they form a cycle.
  GraphBuilder bld;
  auto x = bld.input("x", DType::Float32, {4});
  auto y = bld.input("y", DType::Float32, {4});
  auto a = bld.op(EdgeOp::Relu, {x});
  auto b = bld.op(EdgeOp::Relu, {y});
  auto d = bld.op(EdgeOp::Sin, {b});
  auto e = bld.op(EdgeOp::Add, {a, d});
  auto c = bld.op(EdgeOp::Add, {b, a});
  bld.output(e);
  bld.output(c);
  ir::ExportedProgram p = bld.build();
  for (ir::ValueId v : {a, d, e}) p.graph.node(node_of(p, v)).meta.delegation_tag = "early_0";
  CHECK(convex(p.graph, {node_of(p, b), node_of(p, c)}));
  const NodeSupport support = ops_supported({EdgeOp::Relu, EdgeOp::Add});
  const ProposedPartitions result = propose_partitions(p.graph, support);
  check_guarantees(p.graph, result, support);
  CHECK(result.partitions == Partitions{{node_of(p, b)}, {node_of(p, c)}});
}

TEST_CASE("earlier tags that already form a cycle are reported", "[backend][capability]") {
  GraphBuilder b;
  auto x = b.input("x", DType::Float32, {4});
  auto r1 = b.op(EdgeOp::Relu, {x});
  auto r2 = b.op(EdgeOp::Sin, {r1});
  auto r3 = b.op(EdgeOp::Relu, {r2});
  b.output(r3);
  ir::ExportedProgram p = b.build();
  p.graph.node(node_of(p, r1)).meta.delegation_tag = "bad_0";
  p.graph.node(node_of(p, r3)).meta.delegation_tag = "bad_0";
  CHECK_THROWS_WITH(propose_partitions(p.graph, ops_supported({EdgeOp::Sin})),
                    Contains("'bad_0' → node 'sin_2' (sin) → 'bad_0'"));
}

TEST_CASE("call_delegate nodes are opaque and never included", "[backend][capability]") {
  GraphBuilder b;
  auto x = b.input("x", DType::Float32, {4});
  auto r1 = b.op(EdgeOp::Relu, {x});
  auto r2 = b.op(EdgeOp::Relu, {r1});
  b.output(b.op(EdgeOp::Relu, {r2}));
  ir::ExportedProgram p = b.build();
  p.graph.node(node_of(p, r2)).delegate = 0;
  const NodeSupport support = ops_supported({EdgeOp::Relu});
  const ProposedPartitions result = propose_partitions(p.graph, support);
  CHECK(result.partitions == Partitions{{0}, {2}});
  CHECK_THAT(result.rejection_reasons.at(1), Contains("already lowered to a delegate"));
}

TEST_CASE("a predicate's 'no' without a reason still gives one; dead nodes are ignored",
          "[backend][capability]") {
  GraphBuilder b;
  auto x = b.input("x", DType::Float32, {4});
  auto r1 = b.op(EdgeOp::Relu, {x});
  b.op(EdgeOp::Sin, {r1});
  b.output(b.op(EdgeOp::Exp, {r1}));
  ir::ExportedProgram p = b.build();
  p.graph.node(1).dead = true;
  const ProposedPartitions result = propose_partitions(p.graph, [](const ir::Graph&, const ir::Node& n) {
    return Support{n.op == EdgeOp::Relu, {}};
  });
  CHECK(result.partitions == Partitions{{0}});
  CHECK(result.rejection_reasons == std::map<ir::NodeId, std::string>{{2, "not supported by this backend"}});
}

TEST_CASE("a long chain is one partition", "[backend][capability]") {
  GraphBuilder b;
  auto v = b.input("x", DType::Float32, {1});
  for (int i = 0; i < 20000; ++i) v = b.op(i % 2 ? EdgeOp::Relu : EdgeOp::Neg, {v});
  b.output(v);
  const ir::ExportedProgram p = b.build();
  const ProposedPartitions result =
      propose_partitions(p.graph, [](const ir::Graph&, const ir::Node&) { return Support::yes(); });
  REQUIRE(result.partitions.size() == 1);
  CHECK(result.partitions[0].size() == 20000);
}

namespace {

// A random DAG over float [4] values: unary and binary ops reading mostly
// recent values, some intermediate values also graph outputs.
ir::ExportedProgram random_dag(std::mt19937& rng, int num_nodes) {
  GraphBuilder b;
  std::vector<ir::ValueId> values{b.input("x", DType::Float32, {4}), b.input("y", DType::Float32, {4})};
  const EdgeOp unary[] = {EdgeOp::Relu, EdgeOp::Sin, EdgeOp::Neg, EdgeOp::Exp};
  const EdgeOp binary[] = {EdgeOp::Add, EdgeOp::Mul};
  auto pick = [&]() {
    const size_t n = values.size();
    if (rng() % 10 < 7) return values[n - 1 - rng() % std::min<size_t>(n, 5)];
    return values[rng() % n];
  };
  for (int i = 0; i < num_nodes; ++i) {
    if (rng() % 2)
      values.push_back(b.op(binary[rng() % 2], {pick(), pick()}));
    else
      values.push_back(b.op(unary[rng() % 4], {pick()}));
    if (rng() % 10 == 0) b.output(values.back());
  }
  b.output(values.back());
  return b.build();
}

NodeSupport random_support(std::mt19937& rng, size_t num_nodes, unsigned percent) {
  auto yes = std::make_shared<std::vector<bool>>();
  for (size_t i = 0; i < num_nodes; ++i) yes->push_back(rng() % 100 < percent);
  return [yes](const ir::Graph&, const ir::Node& n) {
    return (*yes)[n.id] ? Support::yes() : Support::no("random no");
  };
}

}  // namespace

TEST_CASE("random DAGs: partitions are convex, connected, maximal and acyclic with earlier tags",
          "[backend][capability]") {
  for (unsigned seed = 0; seed < 400; ++seed) {
    INFO("seed " << seed);
    std::mt19937 rng(seed);
    ir::ExportedProgram program = random_dag(rng, 1 + static_cast<int>(rng() % 40));
    const size_t n = program.graph.nodes().size();
    if (seed % 2) {  // an earlier partitioner of another backend ran first
      program =
          partition_by_capability(program, random_support(rng, n, 30), "early", DelegationSpec{"early", {}})
              .tagged_exported_program;
    }
    if (seed % 3 == 0) {  // and an earlier to_backend left a call_delegate node
      const ir::NodeId d = static_cast<ir::NodeId>(rng() % n);
      if (program.graph.node(d).meta.delegation_tag.empty()) program.graph.node(d).delegate = 0;
    }
    const NodeSupport support = random_support(rng, n, 70);
    const ProposedPartitions result = propose_partitions(program.graph, support);
    check_guarantees(program.graph, result, support);
    check_maximal(program.graph, result);
    for (const ir::Node& node : program.graph.nodes())  // with default options every supported node is placed
      if (node.meta.delegation_tag.empty() && !node.is_delegate_call() &&
          support(program.graph, node).supported)
        CHECK(result.rejection_reasons.count(node.id) == 0);

    CapabilityOptions options;
    options.min_partition_size = 1 + seed % 4;
    options.allow_single_node_partitions = seed % 5 != 0;
    const ProposedPartitions filtered = propose_partitions(program.graph, support, options);
    check_guarantees(program.graph, filtered, support);
    for (const auto& part : filtered.partitions) {
      CHECK(part.size() >= options.min_partition_size);
      CHECK((part.size() > 1 || options.allow_single_node_partitions));
    }
  }
}

TEST_CASE("partition_by_capability tags partitions, their constants and gives reasons",
          "[backend][capability]") {
  GraphBuilder b;
  auto x = b.input("x", DType::Float32, {2});
  auto w = b.constant_f32("w", {2}, {1.0f, 2.0f});
  auto s = b.op(EdgeOp::Sin, {b.op(EdgeOp::Add, {x, w})});
  b.output(b.op(EdgeOp::Relu, {s}));
  const ir::ExportedProgram original = b.build();
  const DelegationSpec spec{"demo", {CompileSpec::from_string("k", "v")}};
  const PartitionResult result =
      partition_by_capability(original, ops_supported({EdgeOp::Add, EdgeOp::Relu}), "demo", spec);
  const ir::Graph& g = result.tagged_exported_program.graph;
  CHECK(g.node(0).meta.delegation_tag == "demo_0");
  CHECK(g.node(1).meta.delegation_tag.empty());
  CHECK(g.node(2).meta.delegation_tag == "demo_1");
  CHECK(g.value(w).delegation_tag == "demo_0");
  CHECK(result.partition_tags == std::map<std::string, DelegationSpec>{{"demo_0", spec}, {"demo_1", spec}});
  CHECK(result.rejection_reasons == std::map<ir::NodeId, std::string>{{1, "no sin"}});
  // The input program is left as it was.
  for (const ir::Node& n : original.graph.nodes()) CHECK(n.meta.delegation_tag.empty());
  CHECK(original.graph.value(w).delegation_tag.empty());
}

TEST_CASE("partitioners run in sequence never reuse a tag", "[backend][capability]") {
  GraphBuilder b;
  auto x = b.input("x", DType::Float32, {4});
  auto r = b.op(EdgeOp::Relu, {b.op(EdgeOp::Sin, {b.op(EdgeOp::Relu, {x})})});
  b.output(b.op(EdgeOp::Sin, {r}));
  ir::ExportedProgram program = b.build();
  const PartitionResult first =
      partition_by_capability(program, ops_supported({EdgeOp::Relu}), "demo", {"demo", {}});
  CHECK(first.partition_tags.size() == 2);  // demo_0, demo_1
  const PartitionResult second = partition_by_capability(first.tagged_exported_program,
                                                         ops_supported({EdgeOp::Sin}), "demo", {"demo", {}});
  const ir::Graph& g = second.tagged_exported_program.graph;
  CHECK(g.node(0).meta.delegation_tag == "demo_0");
  CHECK(g.node(1).meta.delegation_tag == "demo_2");
  CHECK(g.node(2).meta.delegation_tag == "demo_1");
  CHECK(g.node(3).meta.delegation_tag == "demo_3");
  CHECK(second.partition_tags.size() == 2);
  CHECK(second.partition_tags.count("demo_2") == 1);
  CHECK(second.rejection_reasons.empty());  // earlier tags get no reason

  // Tags of lowered delegates count as used too.
  program.delegates.push_back(ir::LoweredBackendModule{});
  program.delegates.back().tag = "demo_0";
  const PartitionResult after_lowering =
      partition_by_capability(program, ops_supported({EdgeOp::Relu}), "demo", {"demo", {}});
  CHECK(after_lowering.tagged_exported_program.graph.node(0).meta.delegation_tag == "demo_1");
  CHECK(after_lowering.tagged_exported_program.graph.node(2).meta.delegation_tag == "demo_2");
}

TEST_CASE("partition_by_capability refuses an empty tag prefix", "[backend][capability]") {
  GraphBuilder b;
  b.output(b.op(EdgeOp::Relu, {b.input("x", DType::Float32, {4})}));
  CHECK_THROWS_AS(partition_by_capability(b.build(), ops_supported({EdgeOp::Relu}), "", {"demo", {}}),
                  CompileError);
}
