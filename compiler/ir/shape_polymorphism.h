#pragma once
// Whether one program serves a range of input sizes. Two compiles of a
// model at different input shapes are the same program when their graphs
// differ only in value shapes: the same nodes and ops, reading and writing
// the same values, with the same attributes and constant bytes. Then every
// shape in the program follows from the input shapes through the ops' shape
// functions, which the runtime re-runs when an input changes size. Where a
// compile folded the input's size into an attribute or a constant (a Reshape
// target computed from Shape, say), the two differ there.
//
// A global pool's kernel_shape and a resize's sizes hold the compiled size,
// but their `global` / `sizes_from_scales` attributes make the kernel follow
// the input: they are not a difference. Two differences are made to follow
// the input in `a`: a reshape whose target differs in one dim gets
// `infer_dim` there (that dim takes what the others leave, as the true
// target's does), and a slice whose ends differ only where each equals its
// input's size gets those dims in `ends_to_end`.

#include <optional>
#include <string>

#include "compiler/ir/graph.h"

namespace etc::ir {

// Empty when a and b are (or, after the rewrites above, `a` is) the same
// program up to shapes; else the first difference, naming the node ("node 'Reshape_3' (Reshape): attribute
// shape is [1, 120, 20] at one size and [1, 120, 80] at the other").
std::string make_shape_polymorphic(Graph& a, const Graph& b);

}  // namespace etc::ir
