#pragma once
// Internal to the 'shape' kernel family: the infer and create functions of
// the ops implemented in shape_*.cpp, gathered into one OpDef table by
// shape_op_def() in shape.cpp, plus the kernel that runs a fixed CopyPlan.

#include <memory>

#include "runtime/kernels/kernel.h"
#include "runtime/kernels/portable/shape_copy.h"

namespace etc::shape_ops {

#define ETC_SHAPE_OP_FNS(name)                                                                    \
  Status infer_##name(const AttrList& attrs, Span<const TensorSpec> in, Span<TensorSpec> out);    \
  Result<std::unique_ptr<Kernel>> create_##name(const AttrList& attrs, Span<const TensorSpec> in, \
                                                Span<const TensorSpec> out);
ETC_SHAPE_OP_FNS(reshape)
ETC_SHAPE_OP_FNS(transpose)
ETC_SHAPE_OP_FNS(depth_to_space)
ETC_SHAPE_OP_FNS(space_to_depth)
ETC_SHAPE_OP_FNS(slice)
ETC_SHAPE_OP_FNS(slice_args)  // slice with run-time starts/ends (shape_slice_args.cpp)
ETC_SHAPE_OP_FNS(expand)
ETC_SHAPE_OP_FNS(tile)
ETC_SHAPE_OP_FNS(gather)
ETC_SHAPE_OP_FNS(pad)
ETC_SHAPE_OP_FNS(range)
#undef ETC_SHAPE_OP_FNS

// Copies input 0 to output 0 along a plan computed at init.
class CopyKernel final : public Kernel {
 public:
  explicit CopyKernel(const CopyPlan& plan) : plan_(plan) {}
  Status run(const KernelArgs& args) override {
    run_copy(plan_, args.inputs[0]->data, args.outputs[0]->data);
    return Status::Ok();
  }

 private:
  CopyPlan plan_;
};

inline Result<std::unique_ptr<Kernel>> make_copy_kernel(const CopyPlan& plan) {
  return std::unique_ptr<Kernel>(std::make_unique<CopyKernel>(plan));
}

// Fails unless `dims` has at most kMaxRank non-negative entries.
Status check_dims(Span<const int64_t> dims, const char* what);

}  // namespace etc::shape_ops
