#pragma once
// The demo backend's blob: a small, readable text program shared by its two
// halves (preprocessors/demo writes it, runtime/backends/demo reads it).
//
//   etc-demo-program 2                  version line
//   input in0 6                         delegate input 0 has 6 float32 elements
//   input in1 6
//   output out0 6                       delegate output 0
//   const c0 6 0.5 1 -2 3 0 1           constant moved into the delegate
//   buffer t0 6                         intermediate
//   mul_add out0 in0 in1 c0 #mul+add    out0 = in0 * in1 + c0, identifier "mul+add"
//   relu t0 out0 #relu1
//
// Operands: in<i> (delegate input i), out<i> (delegate output i), c<i>
// (constants, values printed with %.9g), t<i> (intermediates). Every operand
// of one instruction has the same element count (no broadcasting).
// Instructions: add, sub, mul (dst a b); sin, cos, relu (dst a);
// mul_add (dst a b c: a * b + c). `#<id>` (visible ASCII, no spaces) is the
// instruction's string delegate debug identifier, a key of the delegate's
// debug handle map.
//
// Profiling: one event per instruction with an identifier, whose metadata is
// kDemoMetadataBytes bytes, the instruction's element count as a
// little-endian uint64. With intermediate outputs on, each such instruction
// logs its result as a 1-D float32 tensor.
//
// Compile spec kMaxInputElementsKey (decimal text): init fails when an input
// has more elements.

#include <cstddef>

namespace etc::demo {

inline constexpr char kDemoBackendId[] = "demo";
inline constexpr char kDemoMagic[] = "etc-demo-program";
inline constexpr int kDemoVersion = 2;
inline constexpr size_t kDemoMetadataBytes = 8;
inline constexpr char kMaxInputElementsKey[] = "max_input_elements";

}  // namespace etc::demo
