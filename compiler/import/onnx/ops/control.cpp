// ONNX control flow. An If whose condition is a compile-time constant (a
// flag an exporter traced in, or one constant folding computed) lowers to
// the nodes of its taken branch, which read the enclosing graph's values by
// name; the other branch is dropped. A condition computed at run time, and
// Loop and Scan, are refused.

#include "compiler/import/onnx/lower_context.h"
#include "compiler/import/onnx/ops/register_all.h"

namespace etc::onnx_import {
namespace {

void lower_if(LowerContext& ctx) {
  if (!ctx.is_constant(ctx.input(0)))
    ctx.fail(
        "an If whose condition is computed at run time is not supported (only a compile-time constant "
        "condition, which selects its branch)");
  const bool taken = ctx.constant_int(0, "condition") != 0;
  const char* name = taken ? "then_branch" : "else_branch";
  const onnx::GraphProto* branch = ctx.attr_graph(name);
  if (branch == nullptr) ctx.fail(std::string("attribute ") + name + " is missing");
  if (branch->output_size() != ctx.num_outputs())
    ctx.fail(std::string(name) + " has " + std::to_string(branch->output_size()) + " output(s), the If " +
             std::to_string(ctx.num_outputs()));
  const std::vector<ir::ValueId> outputs = ctx.lower_subgraph(*branch);
  for (int i = 0; i < ctx.num_outputs(); ++i) ctx.set_output(i, outputs[static_cast<size_t>(i)]);
}

}  // namespace

void register_control_lowerings() { register_lowering("If", {lower_if}); }

}  // namespace etc::onnx_import
