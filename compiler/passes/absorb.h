#pragma once
// What fusing passes do once they have decided: `producer` takes over the
// output value and the debug handles of `absorbed` (its only reader), and
// `absorbed` is marked dead. The producer's own former output is left with
// no producer, for dead-code elimination to drop.

#include "compiler/ir/graph.h"

namespace etc::passes {

inline void absorb_node(ir::Graph& g, ir::Node& producer, ir::Node& absorbed) {
  producer.meta.debug_handles.insert(producer.meta.debug_handles.end(), absorbed.meta.debug_handles.begin(),
                                     absorbed.meta.debug_handles.end());
  const ir::ValueId old_out = producer.outputs[0];
  producer.outputs[0] = absorbed.outputs[0];
  g.value(absorbed.outputs[0]).producer = producer.id;
  g.value(old_out).producer = -1;
  absorbed.dead = true;
}

}  // namespace etc::passes
