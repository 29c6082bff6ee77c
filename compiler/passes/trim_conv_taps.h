#pragma once
// Drops the kernel taps of a Conv that read only padding, for every output
// pixel: a dilated convolution on a map no larger than its dilation (the
// atrous branches of DeepLab's ASPP at dilations 12 to 36 on a 16x16 map),
// or a window larger than the map. Per spatial dim, the taps before the
// first and after the last that some output reads inside the input go, with
// as much of the padding; the output shape does not change:
//   conv(x, w [M, C/g, K...], pads, dilations)
//     ->  conv(x, w[:, :, first..last, ...], pads - removed taps * dilation)
// Constant float32 weights only; a trim that would leave a negative pad is
// not made.
//
// Numerics: the same sums without their zero terms (the dropped taps
// multiplied padding); a kernel may add the rest in another order, so the
// last bits can differ.

#include <cstddef>

#include "compiler/ir/graph.h"

namespace etc::passes {

// Returns the number of convolutions trimmed.
size_t trim_conv_taps(ir::Graph& graph);

}  // namespace etc::passes
