// Interpreter of a parsed demo program: plain loops over float32 elements.
#include <cmath>
#include <string>

#include "runtime/backends/demo/demo_format.h"
#include "runtime/backends/demo/demo_program.h"

namespace etc::demo {
namespace {

float* resolve(DemoProgram& program, const DemoOperand& o, Span<EValue*> args) {
  switch (o.kind) {
    case DemoOperandKind::Input: return args[o.index]->to_tensor().data_as<float>();
    case DemoOperandKind::Output:
      return args[program.input_numel.size() + o.index]->to_tensor().data_as<float>();
    case DemoOperandKind::Constant:
    case DemoOperandKind::Buffer: break;
  }
  return program.storage.data() + o.offset;
}

// dst may be one of the sources (same element, same index): each element is
// read before it is written.
void run(DemoOp op, size_t n, float* d, const float* a, const float* b, const float* c) {
  switch (op) {
    case DemoOp::Add:
      for (size_t i = 0; i < n; ++i) d[i] = a[i] + b[i];
      break;
    case DemoOp::Sub:
      for (size_t i = 0; i < n; ++i) d[i] = a[i] - b[i];
      break;
    case DemoOp::Mul:
      for (size_t i = 0; i < n; ++i) d[i] = a[i] * b[i];
      break;
    case DemoOp::Sin:
      for (size_t i = 0; i < n; ++i) d[i] = std::sin(a[i]);
      break;
    case DemoOp::Cos:
      for (size_t i = 0; i < n; ++i) d[i] = std::cos(a[i]);
      break;
    case DemoOp::Relu:
      // Same as the portable kernel, NaN included (it becomes 0).
      for (size_t i = 0; i < n; ++i) d[i] = a[i] > 0 ? a[i] : 0.0f;
      break;
    case DemoOp::MulAdd:
      // Rounded twice, like the mul and add it replaces.
      for (size_t i = 0; i < n; ++i) {
        const float product = a[i] * b[i];
        d[i] = product + c[i];
      }
      break;
  }
}

std::string arg_name(const DemoProgram& program, size_t i) {
  const size_t num_inputs = program.input_numel.size();
  return i < num_inputs ? "in" + std::to_string(i) : "out" + std::to_string(i - num_inputs);
}

}  // namespace

Status check_demo_args(const DemoProgram& program, Span<EValue*> args) {
  const size_t num_inputs = program.input_numel.size();
  const size_t num_outputs = program.output_numel.size();
  if (args.size() != num_inputs + num_outputs)
    return fail(Error::InvalidArgument, "demo: the delegate takes ", std::to_string(num_inputs),
                " inputs and ", std::to_string(num_outputs), " outputs, got ", std::to_string(args.size()),
                " arguments");
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == nullptr || !args[i]->is_tensor())
      return fail(Error::InvalidArgument, "demo: argument ", arg_name(program, i), " is not a tensor");
    const Tensor& t = args[i]->to_tensor();
    if (t.dtype() != DType::Float32)
      return fail(Error::InvalidType, "demo: argument ", arg_name(program, i), " is ", dtype_name(t.dtype()),
                  "; the demo backend computes float32 only");
    const int64_t want = i < num_inputs ? program.input_numel[i] : program.output_numel[i - num_inputs];
    if (t.numel() != want)
      return fail(Error::InvalidShape, "demo: argument ", arg_name(program, i), " has ",
                  std::to_string(t.numel()), " elements, the demo program declares ", std::to_string(want));
    if (t.data == nullptr && want > 0)
      return fail(Error::InvalidArgument, "demo: argument ", arg_name(program, i), " has no data");
  }
  return Status::Ok();
}

void run_demo_program(DemoProgram& program, Span<EValue*> args, EventTracer* tracer) {
  const bool log_outputs = event_tracer_logs_intermediate_outputs(tracer);
  for (const DemoInstruction& ins : program.instructions) {
    const bool profiled = tracer != nullptr && !ins.debug_name.empty();
    EventTracerEntry event;
    if (profiled)
      event = event_tracer_start_profiling_delegate(tracer, ins.debug_name, kUnsetDelegateDebugIntId);
    const float* src[3] = {nullptr, nullptr, nullptr};
    for (uint8_t s = 0; s < ins.num_sources; ++s) src[s] = resolve(program, ins.src[s], args);
    float* dst = resolve(program, ins.dst, args);
    run(ins.op, ins.numel, dst, src[0], src[1], src[2]);
    if (!profiled) continue;
    uint8_t metadata[kDemoMetadataBytes];
    for (size_t b = 0; b < kDemoMetadataBytes; ++b)
      metadata[b] = static_cast<uint8_t>(uint64_t{ins.numel} >> (8 * b));
    event_tracer_end_profiling_delegate(tracer, event, metadata, sizeof(metadata));
    if (log_outputs) {
      Tensor result{TensorSpec{DType::Float32, Shape{static_cast<int64_t>(ins.numel)}}, dst};
      event_tracer_log_output_delegate(tracer, ins.debug_name, kUnsetDelegateDebugIntId, result);
    }
  }
}

}  // namespace etc::demo
