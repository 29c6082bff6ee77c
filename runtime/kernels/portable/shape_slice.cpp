// Slice, expand and tile: each output is a strided view of the input, copied
// with one CopyPlan (shape_copy.h).
#include <string>
#include <vector>

#include "runtime/kernels/portable/shape_ops.h"

namespace etc::shape_ops {
namespace {

struct SliceAttrs {
  std::vector<int64_t> starts, ends, steps;
};

Result<SliceAttrs> slice_attrs(const AttrList& attrs, int rank) {
  SliceAttrs a;
  ETC_ASSIGN_OR_RETURN(a.starts, attrs.get_ints("starts"));
  ETC_ASSIGN_OR_RETURN(a.ends, attrs.get_ints("ends"));
  ETC_ASSIGN_OR_RETURN(a.steps, attrs.get_ints("steps"));
  const size_t r = static_cast<size_t>(rank);
  ETC_CHECK_OR_FAIL(a.starts.size() == r && a.ends.size() == r && a.steps.size() == r, Error::InvalidArgument,
                    "starts, ends and steps need one entry per dim (rank ", std::to_string(rank), ")");
  return a;
}

// Elements taken along one dim, 0 when the range is empty.
int64_t slice_count(int64_t start, int64_t end, int64_t step) {
  if (step > 0) return end > start ? (end - start + step - 1) / step : 0;
  return start > end ? (start - end - step - 1) / -step : 0;
}

}  // namespace

Status infer_slice(const AttrList& attrs, Span<const TensorSpec> in, Span<TensorSpec> out) {
  const Shape& s = in[0].shape;
  ETC_ASSIGN_OR_RETURN(SliceAttrs a, slice_attrs(attrs, s.rank()));
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
  const Shape& s = in[0].shape;
  ETC_ASSIGN_OR_RETURN(SliceAttrs a, slice_attrs(attrs, s.rank()));
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
  return make_copy_kernel(make_copy_plan(o.dims(), strides, 0, dtype_size(in[0].dtype)));
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
  out[0] = TensorSpec{in[0].dtype, shape};
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> create_tile(const AttrList& attrs, Span<const TensorSpec> in,
                                            Span<const TensorSpec>) {
  ETC_ASSIGN_OR_RETURN(std::vector<int64_t> repeats, attrs.get_ints("repeats"));
  const Shape& s = in[0].shape;
  const auto in_strides = strides_of(s);
  // Output dim d viewed as (repeat, d): the repeat index does not move the input.
  std::vector<int64_t> dims, strides;
  for (int d = 0; d < s.rank(); ++d) {
    dims.insert(dims.end(), {repeats[d], s[d]});
    strides.insert(strides.end(), {0, in_strides[d]});
  }
  return make_copy_kernel(make_copy_plan(dims, strides, 0, dtype_size(in[0].dtype)));
}

}  // namespace etc::shape_ops
