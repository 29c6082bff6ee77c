#include "partitioners/composite/backend_assignment.h"

#include <algorithm>
#include <set>

#include "compiler/backend/capability_partitioner.h"
#include "compiler/ir/flops.h"

namespace etc {
namespace {

// What the cost of a plan depends on, computed once.
struct CostInputs {
  std::vector<double> work;                      // by node: FLOPs / rate
  std::vector<double> boundary;                  // by value: one crossing's cost
  std::vector<std::vector<ir::NodeId>> readers;  // by value
  std::vector<bool> is_output;                   // by value
};

CostInputs cost_inputs(const ir::ExportedProgram& program) {
  const ir::Graph& g = program.graph;
  CostInputs in;
  in.work.assign(g.nodes().size(), 0.0);
  for (const ir::Node& n : g.nodes()) {
    if (n.dead) continue;
    int64_t elements = 0;
    for (ir::ValueId v : n.outputs) elements += g.value(v).spec.shape.numel();
    in.work[static_cast<size_t>(n.id)] =
        static_cast<double>(std::max(ir::estimate_flops(program, n), elements)) / kFlopsPerSecond;
  }
  in.readers = g.users();
  in.boundary.assign(g.values().size(), 0.0);
  for (const ir::Value& v : g.values())
    in.boundary[static_cast<size_t>(v.id)] =
        static_cast<double>(v.spec.nbytes()) / kBoundaryBytesPerSecond + kBoundarySeconds;
  in.is_output.assign(g.values().size(), false);
  for (ir::ValueId v : g.outputs()) in.is_output[static_cast<size_t>(v)] = true;
  return in;
}

// The partition of each node under `plan` (-1: portable), as the composite
// will form them: each backend in order, convex with the earlier ones.
std::vector<int> partition_ids(const ir::ExportedProgram& program, const BackendChoices& c,
                               const std::vector<int>& plan) {
  ir::Graph g = program.graph;
  std::vector<int> id(g.nodes().size(), -1);
  int next = 0;
  for (size_t b = 0; b < c.takes.size(); ++b) {
    const auto planned = [&](const ir::Graph&, const ir::Node& n) {
      return plan[static_cast<size_t>(n.id)] == static_cast<int>(b) ? Support::yes() : Support::no("");
    };
    for (const std::vector<ir::NodeId>& part : propose_partitions(g, planned).partitions) {
      for (ir::NodeId n : part) {
        id[static_cast<size_t>(n)] = next;
        g.node(n).meta.delegation_tag = "~" + std::to_string(next);
      }
      ++next;
    }
  }
  return id;
}

double cost_of(const ir::ExportedProgram& program, const BackendChoices& c, const CostInputs& in,
               const std::vector<int>& plan) {
  const ir::Graph& g = program.graph;
  const std::vector<int> part = partition_ids(program, c, plan);
  double sum = 0.0;
  for (const ir::Node& n : g.nodes()) {
    if (n.dead) continue;
    const auto i = static_cast<size_t>(n.id);
    // A planned node left out of every partition runs on portable kernels.
    sum += in.work[i] * (part[i] < 0 ? 10.0 : c.cost[static_cast<size_t>(plan[i])][i]);
  }
  for (const ir::Value& v : g.values()) {
    if (v.is_constant()) continue;
    const int from = v.producer >= 0 ? part[static_cast<size_t>(v.producer)] : -1;
    std::set<int> to;
    for (ir::NodeId r : in.readers[static_cast<size_t>(v.id)]) to.insert(part[static_cast<size_t>(r)]);
    if (in.is_output[static_cast<size_t>(v.id)]) to.insert(-1);
    to.erase(from);
    sum += static_cast<double>(to.size()) * in.boundary[static_cast<size_t>(v.id)];
  }
  return sum;
}

}  // namespace

double plan_cost(const ir::ExportedProgram& program, const BackendChoices& choices,
                 const std::vector<int>& plan) {
  return cost_of(program, choices, cost_inputs(program), plan);
}

namespace {

// Steps 2-3 from `plan`: whole-partition moves while one lowers the cost.
std::vector<int> improve(const ir::ExportedProgram& program, const BackendChoices& choices,
                         const CostInputs& in, std::vector<int> plan, double& current) {
  const ir::Graph& g = program.graph;
  current = cost_of(program, choices, in, plan);
  for (;;) {
    const std::vector<int> part = partition_ids(program, choices, plan);
    std::vector<std::vector<ir::NodeId>> members;
    for (const ir::Node& n : g.nodes()) {
      const int p = part[static_cast<size_t>(n.id)];
      if (p < 0) continue;
      if (members.size() <= static_cast<size_t>(p)) members.resize(static_cast<size_t>(p) + 1);
      members[static_cast<size_t>(p)].push_back(n.id);
    }
    double best = current;
    std::vector<int> best_plan;
    for (const std::vector<ir::NodeId>& nodes : members) {
      if (nodes.empty()) continue;
      const int from = plan[static_cast<size_t>(nodes.front())];
      for (size_t b = 0; b < choices.takes.size(); ++b) {
        if (static_cast<int>(b) == from || !std::all_of(nodes.begin(), nodes.end(), [&](ir::NodeId n) {
              return choices.takes[b][static_cast<size_t>(n)];
            }))
          continue;
        std::vector<int> moved = plan;
        for (ir::NodeId n : nodes) moved[static_cast<size_t>(n)] = static_cast<int>(b);
        const double cost = cost_of(program, choices, in, moved);
        if (cost < best * (1.0 - 1e-9)) {
          best = cost;
          best_plan = std::move(moved);
        }
      }
    }
    if (best_plan.empty()) return plan;
    plan = std::move(best_plan);
    current = best;
  }
}

// Each node to the first backend in `order` that takes it.
std::vector<int> first_taker(const ir::Graph& g, const BackendChoices& choices,
                             const std::vector<size_t>& order) {
  std::vector<int> plan(g.nodes().size(), -1);
  for (const ir::Node& n : g.nodes())
    for (size_t b : order)
      if (!n.dead && choices.takes[b][static_cast<size_t>(n.id)]) {
        plan[static_cast<size_t>(n.id)] = static_cast<int>(b);
        break;
      }
  return plan;
}

}  // namespace

std::vector<int> assign_backends(const ir::ExportedProgram& program, const BackendChoices& choices) {
  const CostInputs in = cost_inputs(program);
  // 1. Start from the priority plan, and from each backend put first (a
  // backend that takes nearly everything then is not stuck behind moves
  // that each cost more than they save alone); keep the cheapest result.
  std::vector<size_t> priority(choices.takes.size());
  for (size_t b = 0; b < priority.size(); ++b) priority[b] = b;
  std::vector<int> best_plan;
  double best = 0.0;
  for (size_t first = 0; first <= choices.takes.size(); ++first) {
    std::vector<size_t> order = priority;
    if (first < order.size())
      std::rotate(order.begin(), order.begin() + static_cast<long>(first),
                  order.begin() + static_cast<long>(first) + 1);
    double cost = 0.0;
    std::vector<int> plan = improve(program, choices, in, first_taker(program.graph, choices, order), cost);
    if (best_plan.empty() || cost < best * (1.0 - 1e-9)) {
      best = cost;
      best_plan = std::move(plan);
    }
  }
  return best_plan;
}

}  // namespace etc
