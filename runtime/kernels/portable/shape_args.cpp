#include "runtime/kernels/portable/shape_args.h"

#include <vector>

#include "runtime/kernels/portable/shape_ops.h"

namespace etc::shape_ops {

Status check_int_arg(const TensorSpec& spec, const char* what, bool scalar) {
  ETC_CHECK_OR_FAIL(spec.dtype == DType::Int32 || spec.dtype == DType::Int64, Error::InvalidType, what,
                    " must be int32 or int64, got ", dtype_name(spec.dtype));
  if (scalar) {
    ETC_CHECK_OR_FAIL(spec.shape.rank() <= 1 && spec.shape.numel() == 1, Error::InvalidShape, what,
                      " must hold one element, got shape ", spec.shape.str());
  } else {
    ETC_CHECK_OR_FAIL(spec.shape.rank() == 1, Error::InvalidShape, what, " must be 1-D, got shape ",
                      spec.shape.str());
  }
  return Status::Ok();
}

Status read_int_arg(const Tensor& t, const char* op, const char* what, IntArg* out) {
  const int64_t n = t.numel();
  ETC_CHECK_OR_FAIL(n <= kMaxArgLen, Error::InvalidArgument, op, ": run-time ", what, " has ",
                    std::to_string(n), " entries, more than the ", std::to_string(kMaxArgLen), " allowed");
  out->n = static_cast<int>(n);
  for (int64_t i = 0; i < n; ++i) out->v[static_cast<size_t>(i)] = int_at(t, i);
  return Status::Ok();
}

std::string arg_str(const Tensor& t) {
  std::string s = "[";
  for (int64_t i = 0; i < t.numel(); ++i) s += (i ? ", " : "") + std::to_string(int_at(t, i));
  return s + "]";
}

Failure arg_mismatch(const char* op, const char* what, const Tensor& arg, const std::string& reason,
                     const Shape& declared) {
  return fail(Error::InvalidArgument, op, ": run-time ", what, " ", arg_str(arg), " ", reason,
              "; the declared output shape is ", declared.str());
}

Status output_from_shape_attr(const AttrList& attrs, Span<const TensorSpec> in, Span<TensorSpec> out) {
  ETC_ASSIGN_OR_RETURN(std::vector<int64_t> dims, attrs.get_ints("shape"));
  ETC_TRY(check_dims(dims, "shape"));
  ETC_CHECK_OR_FAIL(static_cast<int>(dims.size()) == in[0].shape.rank(), Error::InvalidShape,
                    "shape has rank ", std::to_string(dims.size()), " for an input of rank ",
                    std::to_string(in[0].shape.rank()));
  out[0] = TensorSpec{in[0].dtype, Shape{Span<const int64_t>(dims)}};
  return Status::Ok();
}

}  // namespace etc::shape_ops
