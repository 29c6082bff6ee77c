#pragma once
// A graph and its control-flow bodies as one plan: one value table and
// chains of instructions (runtime/schema/program.fbs, Chain).
//
//   values    every value of every graph once, with one id space. An If
//             branch's inputs are the If's outer values themselves, and so
//             are a loop body's captured inputs: bodies read them in place.
//   chains    chain 0 is the main graph; each body gets a chain after the
//             one that calls it (breadth first), so calls only go forward.
//   lifetimes each value's first and last step in execution order, where a
//             control-flow node spans its bodies: the values it reads live
//             to its end, its outputs and its bodies' inputs and outputs
//             from its start to its end (a loop rewrites them every
//             iteration, a branch's outputs are copied out at the end).

#include <cstdint>
#include <vector>

#include "compiler/emit/memory_planner.h"
#include "compiler/ir/graph.h"

namespace etc::emit {

struct FlatInstruction {
  const ir::Node* node = nullptr;
  std::vector<int32_t> inputs;  // value ids in the flat table (-1: absent)
  std::vector<int32_t> outputs;
  std::vector<uint32_t> chains;  // control flow: the chains of its bodies
};

struct FlatChain {
  std::vector<FlatInstruction> instructions;
  std::vector<int32_t> inputs;   // set by the caller (a loop body's own inputs)
  std::vector<int32_t> outputs;  // read by the caller
};

struct FlatPlan {
  std::vector<const ir::Value*> values;  // by flat id
  std::vector<FlatChain> chains;
  std::vector<int32_t> inputs, outputs;  // the main graph's
  std::vector<BufferRequest> lifetimes;  // by flat id; constants have size 0
  // By flat id: a value of a delegate call's portable fallback (a body of a
  // call_delegate node), which the arena holds apart (program_writer).
  std::vector<bool> in_fallback;
  size_t num_instructions() const;
};

FlatPlan flatten(const ir::Graph& main);

// The `carried` attribute of a loop node (0 when absent).
size_t loop_carried(const ir::Node& n);

// Every node of a graph and of its bodies, depth first.
template <typename F>
void for_each_node(const ir::Graph& g, F&& f) {
  for (const ir::Node& n : g.nodes()) {
    f(n);
    for (const auto& body : n.subgraphs) for_each_node(*body, f);
  }
}

}  // namespace etc::emit
