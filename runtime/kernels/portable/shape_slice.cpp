// Slice, expand and tile: each output is a strided view of the input, copied
// with one CopyPlan (shape_copy.h). Slice with run-time starts/ends is in
// shape_slice_args.cpp; expand and tile with a run-time shape or repeats copy
// along the same plan after checking the argument gives the declared shape.
#include <algorithm>
#include <string>
#include <vector>

#include "runtime/kernels/portable/shape_args.h"
#include "runtime/kernels/portable/shape_ops.h"

namespace etc::shape_ops {
namespace {

struct SliceAttrs {
  std::vector<int64_t> starts, ends, steps;
};

Result<SliceAttrs> slice_attrs(const AttrList& attrs, const Shape& in) {
  const int rank = in.rank();
  SliceAttrs a;
  ETC_ASSIGN_OR_RETURN(a.starts, attrs.get_ints("starts"));
  ETC_ASSIGN_OR_RETURN(a.ends, attrs.get_ints("ends"));
  ETC_ASSIGN_OR_RETURN(a.steps, attrs.get_ints("steps"));
  const size_t r = static_cast<size_t>(rank);
  ETC_CHECK_OR_FAIL(a.starts.size() == r && a.ends.size() == r && a.steps.size() == r, Error::InvalidArgument,
                    "starts, ends and steps need one entry per dim (rank ", std::to_string(rank), ")");
  // Dims sliced to their end whatever their size (a program for a range of sizes).
  ETC_ASSIGN_OR_RETURN(std::vector<int64_t> to_end, attrs.get_ints("ends_to_end", {}));
  for (int64_t d : to_end) {
    ETC_CHECK_OR_FAIL(d >= 0 && d < rank && a.steps[static_cast<size_t>(d)] > 0, Error::InvalidArgument,
                      "ends_to_end names dim ", std::to_string(d), ", which is not a forward dim of rank ",
                      std::to_string(rank));
    a.ends[static_cast<size_t>(d)] = in[static_cast<int>(d)];
  }
  return a;
}

// Elements taken along one dim, 0 when the range is empty.
int64_t slice_count(int64_t start, int64_t end, int64_t step) {
  if (step > 0) return end > start ? (end - start + step - 1) / step : 0;
  return start > end ? (start - end - step - 1) / -step : 0;
}

// Checks input 1 against the shapes with `check`, then copies along a plan.
class CheckedCopyKernel final : public Kernel {
 public:
  using CheckFn = Status (*)(const Tensor& arg, const Shape& in, const Shape& out);
  CheckedCopyKernel(const CopyPlan& plan, CheckFn check, const Shape& in, const Shape& out)
      : plan_(plan), check_(check), in_(in), out_(out) {}
  Status run(const KernelArgs& args) override {
    ETC_TRY(check_(*args.inputs[1], in_, out_));
    run_copy(plan_, args.inputs[0]->data, args.outputs[0]->data);
    return Status::Ok();
  }

 private:
  CopyPlan plan_;
  CheckFn check_;
  Shape in_, out_;
};

// ONNX Expand: the input broadcast with `shape` (either side may hold the 1).
Status check_expand_shape(const Tensor& arg, const Shape& in, const Shape& out) {
  IntArg a;
  ETC_TRY(read_int_arg(arg, "expand", "shape", &a));
  const int rank = std::max(a.n, in.rank());
  if (rank > kMaxRank) return arg_mismatch("expand", "shape", arg, "makes the rank more than 8", out);
  Shape got;
  for (int d = 0; d < rank; ++d) {
    const int64_t x = d + in.rank() >= rank ? in[d + in.rank() - rank] : 1;
    const int64_t y = d + a.n >= rank ? a[d + a.n - rank] : 1;
    if (y < 0) return arg_mismatch("expand", "shape", arg, "has a negative dim", out);
    if (x != y && x != 1 && y != 1)
      return arg_mismatch("expand", "shape", arg, "does not broadcast with input " + in.str(), out);
    got.push_back(x == 1 ? y : x);
  }
  if (!(got == out)) return arg_mismatch("expand", "shape", arg, "gives " + got.str(), out);
  return Status::Ok();
}

Status check_tile_repeats(const Tensor& arg, const Shape& in, const Shape& out) {
  bool same = arg.numel() == in.rank();
  for (int d = 0; same && d < in.rank(); ++d) {
    const int64_t r = int_at(arg, d);
    same = r >= 0 && in[d] * r == out[d];
  }
  if (same) return Status::Ok();
  return arg_mismatch("tile", "repeats", arg, "do not tile input " + in.str() + " to it", out);
}

Result<std::unique_ptr<Kernel>> make_kernel(const CopyPlan& plan, Span<const TensorSpec> in,
                                            CheckedCopyKernel::CheckFn check, const Shape& out) {
  if (!has_arg(in, 1)) return make_copy_kernel(plan);
  return std::unique_ptr<Kernel>(std::make_unique<CheckedCopyKernel>(plan, check, in[0].shape, out));
}

}  // namespace

Status infer_slice(const AttrList& attrs, Span<const TensorSpec> in, Span<TensorSpec> out) {
  if (in.size() > 1) return infer_slice_args(attrs, in, out);
  const Shape& s = in[0].shape;
  ETC_ASSIGN_OR_RETURN(SliceAttrs a, slice_attrs(attrs, s));
  Shape shape;
  for (int d = 0; d < s.rank(); ++d) {
    ETC_CHECK_OR_FAIL(a.steps[d] != 0, Error::InvalidArgument, "step of dim ", std::to_string(d), " is 0");
    // Clamped bounds lie in [-1, dim], which also keeps the arithmetic below exact.
    ETC_CHECK_OR_FAIL(a.starts[d] >= -1 && a.starts[d] <= s[d] && a.ends[d] >= -1 && a.ends[d] <= s[d],
                      Error::InvalidArgument, "start/end of dim ", std::to_string(d), " are not clamped");
    const int64_t n = slice_count(a.starts[d], a.ends[d], a.steps[d]);
    // Every element read must lie inside the dim: the importer clamps, this checks.
    const int64_t last = a.starts[d] + (n - 1) * a.steps[d];
    ETC_CHECK_OR_FAIL(n == 0 || (a.starts[d] >= 0 && a.starts[d] < s[d] && last >= 0 && last < s[d]),
                      Error::InvalidArgument, "slice of dim ", std::to_string(d), " (start ",
                      std::to_string(a.starts[d]), ", end ", std::to_string(a.ends[d]), ", step ",
                      std::to_string(a.steps[d]), ") leaves [0, ", std::to_string(s[d]), ")");
    shape.push_back(n);
  }
  out[0] = TensorSpec{in[0].dtype, shape};
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> create_slice(const AttrList& attrs, Span<const TensorSpec> in,
                                             Span<const TensorSpec> out) {
  if (in.size() > 1) return create_slice_args(attrs, in, out);
  const Shape& s = in[0].shape;
  ETC_ASSIGN_OR_RETURN(SliceAttrs a, slice_attrs(attrs, s));
  const auto in_strides = strides_of(s);
  std::vector<int64_t> strides(s.rank());
  int64_t base = 0;
  for (int d = 0; d < s.rank(); ++d) {
    strides[d] = in_strides[d] * a.steps[d];
    base += a.starts[d] * in_strides[d];
  }
  const Shape& o = out[0].shape;
  return make_copy_kernel(make_copy_plan(o.dims(), strides, base, dtype_size(in[0].dtype)));
}

Status infer_expand(const AttrList& attrs, Span<const TensorSpec> in, Span<TensorSpec> out) {
  ETC_ASSIGN_OR_RETURN(std::vector<int64_t> dims, attrs.get_ints("shape"));
  ETC_TRY(check_dims(dims, "shape"));
  const Shape shape{Span<const int64_t>(dims)};
  const Shape& s = in[0].shape;
  const int offset = shape.rank() - s.rank();
  bool ok = offset >= 0;
  for (int d = 0; ok && d < s.rank(); ++d) ok = s[d] == 1 || s[d] == shape[d + offset];
  ETC_CHECK_OR_FAIL(ok, Error::InvalidShape, "cannot expand ", s.str(), " to ", shape.str());
  if (has_arg(in, 1)) ETC_TRY(check_int_arg(in[1], "shape"));
  out[0] = TensorSpec{in[0].dtype, shape};
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> create_expand(const AttrList&, Span<const TensorSpec> in,
                                              Span<const TensorSpec> out) {
  const Shape& s = in[0].shape;
  const Shape& o = out[0].shape;
  const auto in_strides = strides_of(s);
  const int offset = o.rank() - s.rank();
  std::vector<int64_t> strides(o.rank(), 0);
  for (int d = 0; d < s.rank(); ++d) strides[d + offset] = s[d] == 1 ? 0 : in_strides[d];
  return make_kernel(make_copy_plan(o.dims(), strides, 0, dtype_size(in[0].dtype)), in, check_expand_shape,
                     o);
}

Status infer_tile(const AttrList& attrs, Span<const TensorSpec> in, Span<TensorSpec> out) {
  ETC_ASSIGN_OR_RETURN(std::vector<int64_t> repeats, attrs.get_ints("repeats"));
  const Shape& s = in[0].shape;
  ETC_CHECK_OR_FAIL(static_cast<int>(repeats.size()) == s.rank(), Error::InvalidArgument, "repeats has ",
                    std::to_string(repeats.size()), " entries for rank ", std::to_string(s.rank()));
  Shape shape;
  for (int d = 0; d < s.rank(); ++d) {
    ETC_CHECK_OR_FAIL(repeats[d] >= 0, Error::InvalidArgument, "negative repeat ",
                      std::to_string(repeats[d]));
    shape.push_back(s[d] * repeats[d]);
  }
  if (has_arg(in, 1)) ETC_TRY(check_int_arg(in[1], "repeats"));
  out[0] = TensorSpec{in[0].dtype, shape};
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> create_tile(const AttrList& attrs, Span<const TensorSpec> in,
                                            Span<const TensorSpec> out) {
  ETC_ASSIGN_OR_RETURN(std::vector<int64_t> repeats, attrs.get_ints("repeats"));
  const Shape& s = in[0].shape;
  const auto in_strides = strides_of(s);
  // Output dim d viewed as (repeat, d): the repeat index does not move the input.
  std::vector<int64_t> dims, strides;
  for (int d = 0; d < s.rank(); ++d) {
    dims.insert(dims.end(), {repeats[d], s[d]});
    strides.insert(strides.end(), {0, in_strides[d]});
  }
  return make_kernel(make_copy_plan(dims, strides, 0, dtype_size(in[0].dtype)), in, check_tile_repeats,
                     out[0].shape);
}

}  // namespace etc::shape_ops
