#include "compiler/emit/flatten.h"

#include <algorithm>
#include <climits>
#include <deque>
#include <map>
#include <variant>

namespace etc::emit {
namespace {

// One graph waiting for its chain: its value ids in the flat table.
struct Pending {
  const ir::Graph* graph;
  std::vector<int32_t> ids;
  uint32_t chain;
  bool fallback = false;  // a delegate call's portable fallback (or inside one)
};

class Flattener {
 public:
  FlatPlan run(const ir::Graph& main) {
    Pending first{&main, assign_ids(main, {}), 0};
    plan_.chains.emplace_back();
    for (ir::ValueId v : main.inputs()) plan_.inputs.push_back(first.ids[v]);
    for (ir::ValueId v : main.outputs()) plan_.outputs.push_back(first.ids[v]);
    queue_.push_back(std::move(first));
    while (!queue_.empty()) {
      Pending p = std::move(queue_.front());
      queue_.pop_front();
      build_chain(p);
    }
    first_.assign(plan_.values.size(), INT32_MAX);
    last_.assign(plan_.values.size(), -1);
    int32_t step = 0;
    walk(main, ids_of_main_, step);
    // Inputs stay untouched for the whole run so a method can execute again
    // without the caller setting its inputs anew.
    for (int32_t v : plan_.inputs) first_[v] = -1, last_[v] = INT32_MAX;
    for (int32_t v : plan_.outputs) last_[v] = INT32_MAX;
    plan_.lifetimes.resize(plan_.values.size());
    plan_.in_fallback.resize(plan_.values.size(), false);
    for (size_t v = 0; v < plan_.values.size(); ++v) {
      if (plan_.values[v]->is_constant()) continue;  // size 0: placed at 0, never conflicts
      const int32_t first = first_[v] == INT32_MAX ? -1 : first_[v];
      plan_.lifetimes[v] = BufferRequest{plan_.values[v]->spec.nbytes(), first, std::max(last_[v], first)};
    }
    return std::move(plan_);
  }

 private:
  // Flat ids for a graph's values; `given` fixes some of them (body inputs
  // that are outer values).
  std::vector<int32_t> assign_ids(const ir::Graph& g,
                                  const std::vector<std::pair<ir::ValueId, int32_t>>& given) {
    std::vector<int32_t> ids(g.values().size(), -1);
    for (const auto& [v, id] : given) ids[v] = id;
    for (const ir::Value& v : g.values()) {
      if (ids[v.id] >= 0) continue;
      ids[v.id] = static_cast<int32_t>(plan_.values.size());
      plan_.values.push_back(&v);
    }
    return ids;
  }

  static std::vector<int32_t> map_ids(const std::vector<ir::ValueId>& ids, const std::vector<int32_t>& flat) {
    std::vector<int32_t> out;
    for (ir::ValueId v : ids) out.push_back(v == ir::kNoValue ? -1 : flat[v]);
    return out;
  }

  void build_chain(const Pending& p) {
    if (p.chain == 0) ids_of_main_ = p.ids;
    std::vector<FlatInstruction> instructions;
    for (const ir::Node& n : p.graph->nodes()) {
      FlatInstruction ins{&n, map_ids(n.inputs, p.ids), map_ids(n.outputs, p.ids), {}};
      for (size_t b = 0; b < n.subgraphs.size(); ++b) {
        const ir::Graph& body = *n.subgraphs[b];
        // Body inputs read in place: an If branch's all; a loop body's
        // captured values (after iteration, condition and carried values).
        // (Loop inputs and body inputs line up from the captured values on.)
        // A delegate call's body (its portable fallback) reads the call's inputs.
        const size_t own = !n.is_delegate_call() && n.op == EdgeOp::Loop ? 2 + loop_carried(n) : 0;
        std::vector<std::pair<ir::ValueId, int32_t>> given;
        for (size_t k = own; k < body.inputs().size(); ++k)
          given.emplace_back(body.inputs()[k],
                             ins.inputs[!n.is_delegate_call() && n.op == EdgeOp::If ? k + 1 : k]);
        const size_t known = plan_.values.size();
        std::vector<int32_t> ids = assign_ids(body, given);
        const bool fallback = p.fallback || n.is_delegate_call();
        plan_.in_fallback.resize(plan_.values.size(), false);
        for (size_t v = known; v < plan_.values.size(); ++v) plan_.in_fallback[v] = fallback;
        const auto chain = static_cast<uint32_t>(plan_.chains.size());
        plan_.chains.emplace_back();
        for (size_t k = 0; k < own; ++k) plan_.chains[chain].inputs.push_back(ids[body.inputs()[k]]);
        plan_.chains[chain].outputs = map_ids(body.outputs(), ids);
        body_ids_[{&n, b}] = ids;
        ins.chains.push_back(chain);
        queue_.push_back(Pending{&body, std::move(ids), chain, fallback});
      }
      instructions.push_back(std::move(ins));
    }
    plan_.chains[p.chain].instructions = std::move(instructions);
  }

  void use(int32_t v, int32_t step) {
    if (v >= 0) last_[v] = std::max(last_[v], step);
  }
  void define(int32_t v, int32_t step) {
    if (v >= 0) first_[v] = std::min(first_[v], step);
  }

  // Steps in execution order; a control-flow node spans its bodies.
  void walk(const ir::Graph& g, const std::vector<int32_t>& ids, int32_t& step) {
    for (const ir::Node& n : g.nodes()) {
      const int32_t start = step++;
      std::vector<const std::vector<int32_t>*> bodies;
      for (size_t b = 0; b < n.subgraphs.size(); ++b) {
        const std::vector<int32_t>& body_ids = body_ids_.at({&n, b});
        walk(*n.subgraphs[b], body_ids, step);
        bodies.push_back(&body_ids);
      }
      const int32_t end = n.subgraphs.empty() ? start : step++;
      for (ir::ValueId v : n.inputs)
        if (v != ir::kNoValue) use(ids[v], end);
      for (ir::ValueId v : n.outputs) define(ids[v], start), use(ids[v], end);
      for (size_t b = 0; b < n.subgraphs.size(); ++b) {
        for (ir::ValueId v : n.subgraphs[b]->inputs())
          define((*bodies[b])[v], start), use((*bodies[b])[v], end);
        for (ir::ValueId v : n.subgraphs[b]->outputs()) use((*bodies[b])[v], end);
      }
    }
  }

  FlatPlan plan_;
  std::deque<Pending> queue_;
  std::vector<int32_t> ids_of_main_;
  std::map<std::pair<const ir::Node*, size_t>, std::vector<int32_t>> body_ids_;
  std::vector<int32_t> first_, last_;
};

}  // namespace

size_t loop_carried(const ir::Node& n) {
  const ir::AttrValue* a = n.attrs.find("carried");
  const int64_t* v = a ? std::get_if<int64_t>(a) : nullptr;
  return v ? static_cast<size_t>(*v) : 0;
}

size_t FlatPlan::num_instructions() const {
  size_t n = 0;
  for (const FlatChain& c : chains) n += c.instructions.size();
  return n;
}

FlatPlan flatten(const ir::Graph& main) { return Flattener().run(main); }

}  // namespace etc::emit
