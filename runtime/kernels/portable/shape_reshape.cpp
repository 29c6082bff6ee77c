// Reshape: reinterprets the row-major bytes. The target shape is an
// attribute; when the model computes the ONNX argument (Reshape's shape,
// Squeeze's or Unsqueeze's axes) at run time, it is input 1 and run() checks,
// with the ONNX rules, that it gives the declared target shape.
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/kernels/portable/shape_args.h"
#include "runtime/kernels/portable/shape_ops.h"

namespace etc::shape_ops {
namespace {

enum class ReshapeArg { Shape, SqueezeAxes, UnsqueezeAxes };

const char* arg_name(ReshapeArg kind) {
  switch (kind) {
    case ReshapeArg::Shape: return "shape";
    case ReshapeArg::SqueezeAxes: return "squeeze axes";
    case ReshapeArg::UnsqueezeAxes: return "unsqueeze axes";
  }
  return "argument";
}

// ONNX Reshape: 0 copies the input dim (unless allowzero), one -1 is inferred.
// Returns the reason the shape is invalid, or null.
const char* reshape_target(const IntArg& a, const Shape& in, bool allow_zero, Shape* out) {
  if (a.n > kMaxRank) return "has more than 8 dims";
  int infer = -1;
  int64_t known = 1;
  for (int i = 0; i < a.n; ++i) {
    int64_t d = a[i];
    if (d == 0 && !allow_zero) {
      if (i >= in.rank()) return "copies a dim the input does not have";
      d = in[i];
    } else if (d == -1) {
      if (infer >= 0) return "has more than one -1";
      infer = i;
    } else if (d < 0) {
      return "has a negative dim";
    }
    out->push_back(d);
    if (d != -1 && __builtin_mul_overflow(known, d, &known)) return "has more elements than int64 can count";
  }
  if (infer >= 0) {
    if (known == 0 || in.numel() % known != 0) return "leaves the -1 dim undefined";
    (*out)[infer] = in.numel() / known;
  }
  int64_t count = 0;
  if (!out->checked_numel(&count)) return "has more elements than int64 can count";
  return count == in.numel() ? nullptr : "does not keep the element count";
}

// ONNX Squeeze (no axes: every 1) and Unsqueeze (axes index the output).
const char* squeeze_target(const IntArg& a, const Shape& in, Shape* out) {
  bool drop[kMaxRank] = {};
  for (int d = 0; d < in.rank(); ++d) drop[d] = a.n == 0 && in[d] == 1;
  for (int i = 0; i < a.n; ++i) {
    const int64_t d = a[i] < 0 ? a[i] + in.rank() : a[i];
    if (d < 0 || d >= in.rank()) return "holds an axis out of range";
    if (in[static_cast<int>(d)] != 1) return "names a dim that is not 1";
    drop[d] = true;
  }
  for (int d = 0; d < in.rank(); ++d)
    if (!drop[d]) out->push_back(in[d]);
  return nullptr;
}

const char* unsqueeze_target(const IntArg& a, const Shape& in, Shape* out) {
  const int rank = in.rank() + a.n;
  if (rank > kMaxRank) return "makes the rank more than 8";
  bool inserted[kMaxRank] = {};
  for (int i = 0; i < a.n; ++i) {
    const int64_t d = a[i] < 0 ? a[i] + rank : a[i];
    if (d < 0 || d >= rank) return "holds an axis out of range";
    if (inserted[d]) return "repeats an axis";
    inserted[d] = true;
  }
  for (int d = 0, k = 0; d < rank; ++d) out->push_back(inserted[d] ? 1 : in[k++]);
  return nullptr;
}

class ReshapeKernel final : public Kernel {
 public:
  ReshapeKernel(bool checked, ReshapeArg kind, bool allow_zero, const Shape& out)
      : checked_(checked), kind_(kind), allow_zero_(allow_zero), out_(out) {}

  Status run(const KernelArgs& args) override {
    const Tensor& in = *args.inputs[0];
    Tensor& out = *args.outputs[0];
    if (checked_) ETC_TRY(check(*args.inputs[1], in.shape()));
    if (in.data != out.data && out.nbytes() > 0) std::memcpy(out.data, in.data, out.nbytes());
    return Status::Ok();
  }

 private:
  Status check(const Tensor& arg, const Shape& in) const {
    IntArg a;
    ETC_TRY(read_int_arg(arg, "reshape", arg_name(kind_), &a));
    Shape got;
    const char* why = kind_ == ReshapeArg::Shape         ? reshape_target(a, in, allow_zero_, &got)
                      : kind_ == ReshapeArg::SqueezeAxes ? squeeze_target(a, in, &got)
                                                         : unsqueeze_target(a, in, &got);
    if (why)
      return arg_mismatch("reshape", arg_name(kind_), arg, std::string(why) + " for input " + in.str(), out_);
    if (!(got == out_)) return arg_mismatch("reshape", arg_name(kind_), arg, "gives " + got.str(), out_);
    return Status::Ok();
  }

  bool checked_;
  ReshapeArg kind_;
  bool allow_zero_;
  Shape out_;
};

Result<ReshapeArg> reshape_arg(const AttrList& attrs) {
  ETC_ASSIGN_OR_RETURN(std::string_view arg, attrs.get_string("arg", "shape"));
  if (arg == "shape") return ReshapeArg::Shape;
  if (arg == "squeeze_axes") return ReshapeArg::SqueezeAxes;
  if (arg == "unsqueeze_axes") return ReshapeArg::UnsqueezeAxes;
  return fail(Error::InvalidArgument, "unknown arg '", std::string(arg),
              "' (expected shape, squeeze_axes or unsqueeze_axes)");
}

}  // namespace

Status infer_reshape(const AttrList& attrs, Span<const TensorSpec> in, Span<TensorSpec> out) {
  ETC_ASSIGN_OR_RETURN(std::vector<int64_t> dims, attrs.get_ints("shape"));
  // One dim that takes what the others leave, whatever shape holds there
  // (a program for a range of sizes).
  ETC_ASSIGN_OR_RETURN(int64_t infer_dim, attrs.get_int("infer_dim", -1));
  if (infer_dim >= 0) {
    ETC_CHECK_OR_FAIL(infer_dim < static_cast<int64_t>(dims.size()), Error::InvalidArgument, "infer_dim ",
                      std::to_string(infer_dim), " is not a dim of shape");
    int64_t others = 1;
    for (size_t d = 0; d < dims.size(); ++d)
      if (static_cast<int64_t>(d) != infer_dim && __builtin_mul_overflow(others, dims[d], &others))
        return fail(Error::InvalidShape, "shape has more elements than int64 can count");
    ETC_CHECK_OR_FAIL(others > 0 && in[0].shape.numel() % others == 0, Error::InvalidShape, "cannot reshape ",
                      in[0].shape.str(), " with the other dims of ", Shape{Span<const int64_t>(dims)}.str());
    dims[static_cast<size_t>(infer_dim)] = in[0].shape.numel() / others;
  }
  ETC_TRY(check_dims(dims, "shape"));
  const Shape shape{Span<const int64_t>(dims)};
  ETC_CHECK_OR_FAIL(shape.numel() == in[0].shape.numel(), Error::InvalidShape, "cannot reshape ",
                    in[0].shape.str(), " to ", shape.str());
  if (has_arg(in, 1)) {
    ETC_ASSIGN_OR_RETURN(ReshapeArg kind, reshape_arg(attrs));
    ETC_TRY(check_int_arg(in[1], arg_name(kind)));
  }
  out[0] = TensorSpec{in[0].dtype, shape};
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> create_reshape(const AttrList& attrs, Span<const TensorSpec> in,
                                               Span<const TensorSpec> out) {
  ETC_ASSIGN_OR_RETURN(ReshapeArg kind, reshape_arg(attrs));
  ETC_ASSIGN_OR_RETURN(int64_t allow_zero, attrs.get_int("allowzero", 0));
  return std::unique_ptr<Kernel>(
      std::make_unique<ReshapeKernel>(has_arg(in, 1), kind, allow_zero != 0, out[0].shape));
}

}  // namespace etc::shape_ops
