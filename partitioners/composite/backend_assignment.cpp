#include "partitioners/composite/backend_assignment.h"

#include <algorithm>
#include <set>

#include "compiler/backend/capability_partitioner.h"
#include "compiler/ir/flops.h"

namespace etc {
namespace {

// Partitions and costs plans of one program. What a cost depends on is
// computed once; partitioning works on one scratch copy of the graph,
// whose tags are reset for each plan.
class Planner {
 public:
  Planner(const ir::ExportedProgram& program, const BackendChoices& choices)
      : program_(program), choices_(choices), scratch_(program.graph) {
    const ir::Graph& g = program.graph;
    work_.assign(g.nodes().size(), 0.0);
    for (const ir::Node& n : g.nodes()) {
      if (n.dead) continue;
      int64_t elements = 0;
      for (ir::ValueId v : n.outputs) elements += g.value(v).spec.shape.numel();
      work_[static_cast<size_t>(n.id)] =
          static_cast<double>(std::max(ir::estimate_flops(program, n), elements)) / kFlopsPerSecond;
    }
    readers_ = g.users();
    boundary_.assign(g.values().size(), 0.0);
    for (const ir::Value& v : g.values())
      boundary_[static_cast<size_t>(v.id)] =
          static_cast<double>(v.spec.nbytes()) / kBoundaryBytesPerSecond + kBoundarySeconds;
    is_output_.assign(g.values().size(), false);
    for (ir::ValueId v : g.outputs()) is_output_[static_cast<size_t>(v)] = true;
  }

  // The partition of each node under `plan` (-1: portable), as the
  // composite will form them: each backend in order, convex with the
  // earlier ones (and with tags the program already had).
  std::vector<int> partitions(const std::vector<int>& plan) {
    for (const ir::Node& n : program_.graph.nodes())
      scratch_.node(n.id).meta.delegation_tag = n.meta.delegation_tag;
    std::vector<int> id(scratch_.nodes().size(), -1);
    int next = 0;
    for (size_t b = 0; b < choices_.takes.size(); ++b) {
      const auto planned = [&](const ir::Graph&, const ir::Node& n) {
        return plan[static_cast<size_t>(n.id)] == static_cast<int>(b) ? Support::yes() : Support::no("");
      };
      for (const std::vector<ir::NodeId>& part : propose_partitions(scratch_, planned).partitions) {
        for (ir::NodeId n : part) {
          id[static_cast<size_t>(n)] = next;
          scratch_.node(n).meta.delegation_tag = "~" + std::to_string(next);
        }
        ++next;
      }
    }
    return id;
  }

  // The cost of `plan` whose partitions are `part`.
  double cost(const std::vector<int>& plan, const std::vector<int>& part) const {
    const ir::Graph& g = program_.graph;
    double sum = 0.0;
    for (const ir::Node& n : g.nodes()) {
      if (n.dead) continue;
      const auto i = static_cast<size_t>(n.id);
      // A planned node left out of every partition runs on portable kernels.
      sum += work_[i] * (part[i] < 0 ? 10.0 : choices_.cost[static_cast<size_t>(plan[i])][i]);
    }
    for (const ir::Value& v : g.values()) {
      if (v.is_constant()) continue;
      const int from = v.producer >= 0 ? part[static_cast<size_t>(v.producer)] : -1;
      std::set<int> to;
      for (ir::NodeId r : readers_[static_cast<size_t>(v.id)]) to.insert(part[static_cast<size_t>(r)]);
      if (is_output_[static_cast<size_t>(v.id)]) to.insert(-1);
      to.erase(from);
      sum += static_cast<double>(to.size()) * boundary_[static_cast<size_t>(v.id)];
    }
    return sum;
  }

  double cost(const std::vector<int>& plan) { return cost(plan, partitions(plan)); }

  // Steps 2-3 from `plan`: whole-partition moves while one lowers the
  // cost; `current` receives the final plan's cost.
  std::vector<int> improve(std::vector<int> plan, double& current) {
    for (;;) {
      const std::vector<int> part = partitions(plan);
      current = cost(plan, part);
      std::vector<std::vector<ir::NodeId>> members;
      for (const ir::Node& n : program_.graph.nodes()) {
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
        for (size_t b = 0; b < choices_.takes.size(); ++b) {
          if (static_cast<int>(b) == from || !std::all_of(nodes.begin(), nodes.end(), [&](ir::NodeId n) {
                return choices_.takes[b][static_cast<size_t>(n)];
              }))
            continue;
          std::vector<int> moved = plan;
          for (ir::NodeId n : nodes) moved[static_cast<size_t>(n)] = static_cast<int>(b);
          const double c = cost(moved);
          if (c < best * (1.0 - 1e-9)) {
            best = c;
            best_plan = std::move(moved);
          }
        }
      }
      if (best_plan.empty()) return plan;
      plan = std::move(best_plan);
    }
  }

 private:
  const ir::ExportedProgram& program_;
  const BackendChoices& choices_;
  ir::Graph scratch_;
  std::vector<double> work_;                      // by node: FLOPs / rate
  std::vector<double> boundary_;                  // by value: one crossing's cost
  std::vector<std::vector<ir::NodeId>> readers_;  // by value
  std::vector<bool> is_output_;                   // by value
};

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

double plan_cost(const ir::ExportedProgram& program, const BackendChoices& choices,
                 const std::vector<int>& plan) {
  return Planner(program, choices).cost(plan);
}

std::vector<int> assign_backends(const ir::ExportedProgram& program, const BackendChoices& choices) {
  Planner planner(program, choices);
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
    std::vector<int> plan = planner.improve(first_taker(program.graph, choices, order), cost);
    if (best_plan.empty() || cost < best * (1.0 - 1e-9)) {
      best = cost;
      best_plan = std::move(plan);
    }
  }
  return best_plan;
}

}  // namespace etc
