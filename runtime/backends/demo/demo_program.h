#pragma once
// The demo backend's compiled form of a text program (demo_format.h): the
// parser checks everything once, so the interpreter runs without checks.
//
// Parse rules beyond demo_format.h, all checked with the line number named:
//  - line 1 is exactly `etc-demo-program <version>`;
//  - blank lines are ignored; tokens are separated by spaces or tabs;
//  - declarations are numbered densely in order (in0, in1, ...; c0, c1, ...)
//    and precede every use of what they declare;
//  - an instruction writes an output or a buffer, never an input or a
//    constant, and reads outputs and buffers only after they are written;
//  - every output is written by some instruction;
//  - `#<n>` (optional) is the last token of an instruction.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/evalue.h"
#include "runtime/core/result.h"
#include "runtime/core/span.h"
#include "runtime/devtools/event_tracer.h"

namespace etc::demo {

enum class DemoOp : uint8_t { Add, Sub, Mul, Sin, Cos, Relu, MulAdd };

enum class DemoOperandKind : uint8_t { Input, Output, Constant, Buffer };

// in<i>, out<i>: delegate argument i (outputs follow the inputs in args);
// c<i>, t<i>: `offset` elements into DemoProgram::storage.
struct DemoOperand {
  DemoOperandKind kind = DemoOperandKind::Input;
  uint32_t index = 0;
  size_t offset = 0;
};

struct DemoInstruction {
  DemoOp op = DemoOp::Add;
  uint8_t num_sources = 0;
  DemoOperand dst;
  DemoOperand src[3];
  size_t numel = 0;
  std::string debug_name;  // empty: the line had no `#<id>`
};

struct DemoProgram {
  std::vector<int64_t> input_numel;
  std::vector<int64_t> output_numel;
  // Constants, then buffers (intermediates), as float32 elements.
  std::vector<float> storage;
  std::vector<DemoInstruction> instructions;
};

// Largest element count of one operand, and of storage: a garbled count must
// not turn into a huge allocation.
inline constexpr int64_t kMaxDemoElements = int64_t{1} << 28;

// Errors: DelegateInvalidCompatibility when the text is not a demo program
// of kDemoVersion; InvalidProgram, naming the line, for any defect in it.
Result<std::unique_ptr<DemoProgram>> parse_demo_program(std::string_view text);

// Precondition: args are inputs then outputs, each a float32 tensor with the
// declared element count (check_demo_args). With a tracer, each instruction
// that has an identifier logs one profiling event (and its result, when the
// tracer asks for intermediate outputs).
void run_demo_program(DemoProgram& program, Span<EValue*> args, EventTracer* tracer);

// Cheap per-call checks of what the executor passes against the declarations.
Status check_demo_args(const DemoProgram& program, Span<EValue*> args);

}  // namespace etc::demo
