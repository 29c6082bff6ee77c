// Slice whose ONNX starts, ends, axes and steps (inputs 1..4) are read at run
// time: run() resolves them with the ONNX rules (negative values count from
// the end, bounds clamp, negative steps walk backwards), checks the result has
// the declared output shape, and copies along a plan built on the stack.
#include <algorithm>
#include <string>
#include <vector>

#include "runtime/kernels/portable/shape_args.h"
#include "runtime/kernels/portable/shape_ops.h"
#include "runtime/kernels/portable/slice_bounds.h"

namespace etc::shape_ops {
namespace {

// One sliced dim after clamping: the first element and the step.
struct SliceDims {
  std::array<int64_t, kMaxRank> start{};
  std::array<int64_t, kMaxRank> step{};
  Shape shape;
};

int64_t slice_len(int64_t start, int64_t end, int64_t step) {
  if (step > 0) return end > start ? (end - start + step - 1) / step : 0;
  return start > end ? (start - end - step - 1) / -step : 0;
}

// Resolves the arguments against input shape `in`; returns why they are invalid, or null.
const char* resolve(const IntArg& starts, const IntArg& ends, const IntArg& axes, const IntArg& steps,
                    const Shape& in, SliceDims* r) {
  const int n = starts.n;
  if (ends.n != n || axes.n != n || steps.n != n) return "have different lengths";
  r->shape = in;
  for (int d = 0; d < in.rank(); ++d) r->step[d] = 1;
  bool seen[kMaxRank] = {};
  for (int k = 0; k < n; ++k) {
    const int64_t axis = axes[k] < 0 ? axes[k] + in.rank() : axes[k];
    if (axis < 0 || axis >= in.rank()) return "hold an axis out of range";
    const int d = static_cast<int>(axis);
    if (seen[d]) return "slice an axis twice";
    seen[d] = true;
    const int64_t dim = in[d];
    if (steps[k] == 0) return "hold a step of 0";
    const SliceBounds b = resolve_slice_bounds(dim, starts[k], ends[k], steps[k]);
    r->start[d] = b.start;
    r->step[d] = b.step;
    r->shape[d] = slice_len(b.start, b.end, b.step);
  }
  return nullptr;
}

class SliceArgsKernel final : public Kernel {
 public:
  SliceArgsKernel(const Shape& in, const Shape& out, size_t elem_size)
      : in_(in), out_(out), es_(elem_size), in_strides_(strides_of(in)) {}

  Status run(const KernelArgs& args) override {
    IntArg starts, ends, axes, steps;
    ETC_TRY(read_int_arg(*args.inputs[1], "slice", "starts", &starts));
    ETC_TRY(read_int_arg(*args.inputs[2], "slice", "ends", &ends));
    axes.n = steps.n = starts.n;
    for (int k = 0; k < starts.n; ++k) {
      axes.v[k] = k;
      steps.v[k] = 1;
    }
    if (has_arg(args, 3)) ETC_TRY(read_int_arg(*args.inputs[3], "slice", "axes", &axes));
    if (has_arg(args, 4)) ETC_TRY(read_int_arg(*args.inputs[4], "slice", "steps", &steps));
    SliceDims r;
    const char* why = resolve(starts, ends, axes, steps, in_, &r);
    if (why) return mismatch(args, std::string(why) + " for input " + in_.str());
    if (!(r.shape == out_)) return mismatch(args, "give " + r.shape.str());
    std::array<int64_t, kMaxRank> strides{};
    int64_t base = 0;
    for (int d = 0; d < in_.rank(); ++d) {
      strides[d] = in_strides_[d] * r.step[d];
      base += r.start[d] * in_strides_[d];
    }
    const CopyPlan plan =
        make_copy_plan(out_.dims(), Span<const int64_t>(strides.data(), out_.rank()), base, es_);
    run_copy(plan, args.inputs[0]->data, args.outputs[0]->data);
    return Status::Ok();
  }

 private:
  Status mismatch(const KernelArgs& args, const std::string& reason) const {
    std::string given = "starts " + arg_str(*args.inputs[1]) + ", ends " + arg_str(*args.inputs[2]);
    if (has_arg(args, 3)) given += ", axes " + arg_str(*args.inputs[3]);
    if (has_arg(args, 4)) given += ", steps " + arg_str(*args.inputs[4]);
    return fail(Error::InvalidArgument, "slice: run-time ", given, " ", reason,
                "; the declared output shape is ", out_.str());
  }

  Shape in_, out_;
  size_t es_;
  std::array<int64_t, kMaxRank> in_strides_;
};

}  // namespace

Status infer_slice_args(const AttrList& attrs, Span<const TensorSpec> in, Span<TensorSpec> out) {
  ETC_CHECK_OR_FAIL(has_arg(in, 1) && has_arg(in, 2), Error::InvalidArgument,
                    "run-time starts and ends (inputs 1 and 2) must both be given");
  const char* names[] = {"", "starts", "ends", "axes", "steps"};
  for (size_t i = 1; i < in.size(); ++i)
    if (has_arg(in, i)) ETC_TRY(check_int_arg(in[i], names[i]));
  return output_from_shape_attr(attrs, in, out);
}

Result<std::unique_ptr<Kernel>> create_slice_args(const AttrList&, Span<const TensorSpec> in,
                                                  Span<const TensorSpec> out) {
  return std::unique_ptr<Kernel>(
      std::make_unique<SliceArgsKernel>(in[0].shape, out[0].shape, dtype_size(in[0].dtype)));
}

}  // namespace etc::shape_ops
