#include <string>

#include "runtime/kernels/kernel.h"

namespace etc {

// Each family file provides `const OpDef* <family>_op_def(EdgeOp)`.
#define ETC_EDGE_OP(E, N, F) const OpDef* F##_op_def(EdgeOp op);
#include "runtime/kernels/edge_ops.def"
#undef ETC_EDGE_OP

// Control flow has no kernel; the executor runs it.
const OpDef* control_op_def(EdgeOp) { return nullptr; }

const char* edge_op_name(EdgeOp op) {
  switch (op) {
#define ETC_EDGE_OP(E, N, F) \
  case EdgeOp::E:            \
    return N;
#include "runtime/kernels/edge_ops.def"
#undef ETC_EDGE_OP
  }
  return "unknown";
}

std::optional<EdgeOp> edge_op_from_name(std::string_view name) {
#define ETC_EDGE_OP(E, N, F) \
  if (name == N) return EdgeOp::E;
#include "runtime/kernels/edge_ops.def"
#undef ETC_EDGE_OP
  return std::nullopt;
}

const OpDef* find_op_def(EdgeOp op) {
  switch (op) {
#define ETC_EDGE_OP(E, N, F) \
  case EdgeOp::E:            \
    return F##_op_def(op);
#include "runtime/kernels/edge_ops.def"
#undef ETC_EDGE_OP
  }
  return nullptr;
}

Status infer_outputs(const OpDef& def, const AttrList& attrs, Span<const TensorSpec> inputs,
                     Span<TensorSpec> outputs) {
  const char* name = edge_op_name(def.op);
  const int n_in = static_cast<int>(inputs.size());
  const int n_out = static_cast<int>(outputs.size());
  if (n_in < def.min_inputs || n_in > def.max_inputs)
    return fail(Error::InvalidProgram, name, ": takes ", std::to_string(def.min_inputs), "..",
                std::to_string(def.max_inputs), " inputs, got ", std::to_string(n_in));
  if (n_out < def.min_outputs || n_out > def.max_outputs)
    return fail(Error::InvalidProgram, name, ": produces ", std::to_string(def.min_outputs), "..",
                std::to_string(def.max_outputs), " outputs, got ", std::to_string(n_out));
  for (int i = 0; i < def.min_inputs; ++i)
    if (!dtype_valid(inputs[i].dtype))
      return fail(Error::InvalidProgram, name, ": required input ", std::to_string(i), " is missing");
  Status s = def.infer(attrs, inputs, outputs);
  if (!s.ok()) return fail(s.error(), name, ": ", s.message());
  for (int i = 0; i < n_out; ++i) {
    int64_t count = 0;
    if (dtype_valid(outputs[i].dtype) && !outputs[i].shape.checked_numel(&count))
      return fail(Error::InvalidShape, name, ": output ", std::to_string(i), " shape ",
                  outputs[i].shape.str(), " has more elements than int64 can count");
  }
  return Status::Ok();
}

}  // namespace etc
