#include "compiler/passes/evaluate.h"

#include <memory>

#include "runtime/core/aligned_buffer.h"
#include "runtime/kernels/kernel.h"

namespace etc::passes {

Result<std::vector<ir::ConstantData>> evaluate(const ir::Graph& graph, EdgeOp op,
                                               const std::vector<ir::ValueId>& inputs, const ir::Attrs& attrs,
                                               const std::vector<TensorSpec>& output_specs) {
  const OpDef* def = find_op_def(op);
  if (!def) return fail(Error::NotSupported, "no portable kernel for ", edge_op_name(op));
  std::vector<Tensor> in(inputs.size());
  std::vector<TensorSpec> in_specs(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i] == ir::kNoValue) continue;
    const ir::Value& v = graph.value(inputs[i]);
    if (!v.is_constant()) return fail(Error::InvalidArgument, "input is not constant");
    in[i].spec = v.spec;
    in[i].data = const_cast<uint8_t*>(v.constant->data());
    in_specs[i] = v.spec;
  }
  const std::vector<AttrView> views = attrs.views();
  const AttrList attr_list(views);
  ETC_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel, def->create(attr_list, in_specs, output_specs));

  std::vector<std::shared_ptr<std::vector<uint8_t>>> buffers;
  std::vector<Tensor> out(output_specs.size());
  for (size_t i = 0; i < output_specs.size(); ++i) {
    buffers.push_back(std::make_shared<std::vector<uint8_t>>(output_specs[i].nbytes()));
    out[i].spec = output_specs[i];
    out[i].data = buffers.back()->data();
  }
  std::vector<const Tensor*> in_ptrs;
  for (const Tensor& t : in) in_ptrs.push_back(&t);
  std::vector<Tensor*> out_ptrs;
  for (Tensor& t : out) out_ptrs.push_back(&t);
  AlignedBuffer scratch;
  if (kernel->scratch_bytes() > 0) {
    scratch = AlignedBuffer::allocate(kernel->scratch_bytes());
    if (!scratch)
      return fail(Error::MemoryAllocationFailed, "cannot allocate ", std::to_string(kernel->scratch_bytes()),
                  " bytes of kernel scratch");
  }
  ETC_TRY(kernel->run(KernelArgs{in_ptrs, out_ptrs, scratch.data()}));
  std::vector<ir::ConstantData> result(buffers.begin(), buffers.end());
  return result;
}

}  // namespace etc::passes
