#pragma once
// The portable-kernel contract. Every edge op has one OpDef:
//   infer  — the op's shape and dtype function: checks the input specs and
//            attributes and computes the output specs. The compiler uses it to
//            type the IR; the runtime re-runs it at init to validate the program.
//   create — builds the kernel for validated specs (init time: may allocate).
// Kernel::prepare (optional, init time) sees the inputs that are constants of
// the program, so a kernel may pack weights once. Kernel::run executes with no
// allocation; tensors are bound at init and their data pointers stay fixed, so
// a kernel may precompute anything from specs.

#include <memory>
#include <string>

#include "runtime/core/result.h"
#include "runtime/core/span.h"
#include "runtime/core/tensor.h"
#include "runtime/kernels/attrs.h"
#include "runtime/kernels/edge_ops.h"

namespace etc {

class TaskPool;  // runtime/core/task_pool.h

// Absent optional inputs are Tensors whose present() is false.
struct KernelArgs {
  Span<const Tensor* const> inputs;
  Span<Tensor* const> outputs;
  // scratch_bytes() bytes, 64-byte aligned, shared by all kernels of a method.
  void* scratch = nullptr;
  // The method's threads, the calling one among them, for a kernel that
  // asked for them (Kernel::wants_threads); null: the calling thread alone.
  TaskPool* pool = nullptr;
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual Status run(const KernelArgs& args) = 0;
  // Called once at init, after create, when the runtime knows which inputs
  // are program constants: constants[i] is input i when it is one (its data
  // fixed for the kernel's lifetime), else null. A kernel that keeps state
  // derived from a constant must still run correctly when prepare is never
  // called (the compiler's constant folding does not call it).
  virtual Status prepare(Span<const Tensor* const> /*constants*/) { return Status::Ok(); }
  // Temporary memory run() needs; requested once at init.
  virtual size_t scratch_bytes() const { return 0; }
  // Whether run() has enough work per call to split over KernelArgs::pool;
  // asked after prepare. The method acquires a pool of
  // RuntimeOptions::num_threads threads (the one its delegates share) only
  // when some kernel asks.
  virtual bool wants_threads() const { return false; }
};

using InferFn = Status (*)(const AttrList& attrs, Span<const TensorSpec> inputs, Span<TensorSpec> outputs);
using CreateFn = Result<std::unique_ptr<Kernel>> (*)(const AttrList& attrs, Span<const TensorSpec> inputs,
                                                     Span<const TensorSpec> outputs);

struct OpDef {
  EdgeOp op;
  int min_inputs;
  int max_inputs;
  int min_outputs;
  int max_outputs;
  InferFn infer;
  CreateFn create;
};

// The OpDef of an op, or null when no portable kernel is built for it.
const OpDef* find_op_def(EdgeOp op);

// Fails with InvalidShape unless `shape` (of the input called `what`) has
// rank >= min_rank.
inline Status check_min_rank(const Shape& shape, int min_rank, const char* what) {
  ETC_CHECK_OR_FAIL(shape.rank() >= min_rank, Error::InvalidShape, what,
                    " must have rank >= ", std::to_string(min_rank), ", got ", shape.str());
  return Status::Ok();
}

// Checks arity, runs infer, and (when `expected` is given) compares the
// computed output specs with it. Messages name the op.
Status infer_outputs(const OpDef& def, const AttrList& attrs, Span<const TensorSpec> inputs,
                     Span<TensorSpec> outputs);

}  // namespace etc
