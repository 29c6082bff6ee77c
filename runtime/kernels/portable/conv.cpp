// Portable kernels of the 'conv' family: conv and conv_transpose over 1 to 3
// spatial dims, float32 and float64. This file holds the shape functions and
// op defs; the kernels live in conv_forward.cpp and conv_transpose.cpp.
#include <string>
#include <vector>

#include "runtime/kernels/kernel.h"
#include "runtime/kernels/portable/conv_kernels.h"

namespace etc {
namespace {

// Checks dtypes and ranks common to both ops and reads group and geometry.
Status check_common(const AttrList& attrs, Span<const TensorSpec> in, bool transpose, ConvParams* p) {
  const TensorSpec& x = in[0];
  const TensorSpec& w = in[1];
  ETC_CHECK_OR_FAIL(x.dtype == DType::Float32 || x.dtype == DType::Float64, Error::InvalidType,
                    "supports float32 and float64, got ", dtype_name(x.dtype));
  ETC_CHECK_OR_FAIL(w.dtype == x.dtype, Error::InvalidType, "weight dtype ", dtype_name(w.dtype),
                    " differs from input dtype ", dtype_name(x.dtype));
  ETC_CHECK_OR_FAIL(w.shape.rank() == x.shape.rank(), Error::InvalidArgument, "weight shape ", w.shape.str(),
                    " does not match the rank of input shape ", x.shape.str());
  ETC_TRY(read_window_attrs(attrs, x.shape, transpose, &p->g));
  if (Status s = set_window_kernel(w.shape.dims(), &p->g); !s.ok())
    return fail(s.error(), "weight shape ", w.shape.str(), ": ", s.message());
  ETC_ASSIGN_OR_RETURN(p->group, attrs.get_int("group", 1));
  ETC_CHECK_OR_FAIL(p->group >= 1, Error::InvalidProgram, "group must be positive");
  p->batch = x.shape[0];
  p->in_channels = x.shape[1];
  ETC_CHECK_OR_FAIL(p->in_channels % p->group == 0, Error::InvalidArgument, "input channels ",
                    std::to_string(p->in_channels), " are not divisible by group ", std::to_string(p->group));
  return Status::Ok();
}

Status check_bias(Span<const TensorSpec> in, ConvParams* p) {
  p->has_bias = in.size() > 2 && in[2].dtype != DType::Invalid;
  if (!p->has_bias) return Status::Ok();
  ETC_CHECK_OR_FAIL(in[2].dtype == in[0].dtype, Error::InvalidType, "bias dtype ", dtype_name(in[2].dtype),
                    " differs from input dtype ", dtype_name(in[0].dtype));
  ETC_CHECK_OR_FAIL(in[2].shape.rank() == 1 && in[2].shape[0] == p->out_channels, Error::InvalidArgument,
                    "bias shape ", in[2].shape.str(), " must be [", std::to_string(p->out_channels), "]");
  return Status::Ok();
}

Status conv_params(const AttrList& attrs, Span<const TensorSpec> in, ConvParams* p) {
  ETC_TRY(check_common(attrs, in, false, p));
  const Shape& w = in[1].shape;
  p->out_channels = w[0];
  ETC_CHECK_OR_FAIL(w[1] * p->group == p->in_channels && p->out_channels % p->group == 0,
                    Error::InvalidArgument, "weight shape ", w.str(), " does not fit ",
                    std::to_string(p->in_channels), " input channels in ", std::to_string(p->group),
                    " groups");
  WindowGeometry& g = p->g;
  for (int i = 0; i < kMaxSpatialRank; ++i) {
    const int64_t padded = g.in[i] + g.pad_begin[i] + g.pad_end[i];
    ETC_CHECK_OR_FAIL(padded >= g.span(i), Error::InvalidArgument, "kernel ", w.str(),
                      " is larger than the padded input ", in[0].shape.str());
    g.out[i] = (padded - g.span(i)) / g.stride[i] + 1;
  }
  ETC_ASSIGN_OR_RETURN(p->clamp.lo, attrs.get_float("clamp_min", p->clamp.lo));
  ETC_ASSIGN_OR_RETURN(p->clamp.hi, attrs.get_float("clamp_max", p->clamp.hi));
  ETC_CHECK_OR_FAIL(p->clamp.lo <= p->clamp.hi, Error::InvalidProgram,
                    "clamp_min must not exceed clamp_max (and neither may be NaN)");
  return check_bias(in, p);
}

Status conv_transpose_params(const AttrList& attrs, Span<const TensorSpec> in, ConvParams* p) {
  ETC_TRY(check_common(attrs, in, true, p));
  const Shape& w = in[1].shape;
  ETC_CHECK_OR_FAIL(w[0] == p->in_channels, Error::InvalidArgument, "weight shape ", w.str(),
                    " does not fit ", std::to_string(p->in_channels), " input channels");
  p->out_channels = w[1] * p->group;
  WindowGeometry& g = p->g;
  ETC_ASSIGN_OR_RETURN(std::vector<int64_t> out_pad,
                       attrs.get_ints("output_padding", std::vector<int64_t>(g.rank, 0)));
  ETC_CHECK_OR_FAIL(out_pad.size() == static_cast<size_t>(g.rank), Error::InvalidProgram,
                    "attribute 'output_padding' must have ", std::to_string(g.rank), " values");
  for (int i = 0; i < kMaxSpatialRank; ++i) {
    const int j = i - (kMaxSpatialRank - g.rank);
    const int64_t extra = j >= 0 ? out_pad[j] : 0;
    ETC_CHECK_OR_FAIL(extra >= 0, Error::InvalidProgram, "output_padding must be non-negative");
    // Output padding extends the end like a negative end pad.
    g.pad_end[i] -= extra;
    g.out[i] = g.stride[i] * (g.in[i] - 1) + g.span(i) - g.pad_begin[i] - g.pad_end[i];
    ETC_CHECK_OR_FAIL(g.out[i] >= 1, Error::InvalidArgument, "pads leave an empty output for input ",
                      in[0].shape.str());
  }
  return check_bias(in, p);
}

template <bool kTranspose>
Status infer_conv(const AttrList& attrs, Span<const TensorSpec> in, Span<TensorSpec> out) {
  ConvParams p;
  ETC_TRY(kTranspose ? conv_transpose_params(attrs, in, &p) : conv_params(attrs, in, &p));
  out[0] = TensorSpec{in[0].dtype, window_output_shape(p.g, p.batch, p.out_channels)};
  return Status::Ok();
}

template <bool kTranspose>
Result<std::unique_ptr<Kernel>> create_conv(const AttrList& attrs, Span<const TensorSpec> in,
                                            Span<const TensorSpec>) {
  ConvParams p;
  ETC_TRY(kTranspose ? conv_transpose_params(attrs, in, &p) : conv_params(attrs, in, &p));
  return kTranspose ? make_conv_transpose_kernel(in[0].dtype, p) : make_conv_kernel(in[0].dtype, p);
}

}  // namespace

const OpDef* conv_op_def(EdgeOp op) {
  static const OpDef kDefs[] = {
      {EdgeOp::Conv, 2, 3, 1, 1, infer_conv<false>, create_conv<false>},
      {EdgeOp::ConvTranspose, 2, 3, 1, 1, infer_conv<true>, create_conv<true>},
  };
  for (const OpDef& d : kDefs)
    if (d.op == op) return &d;
  return nullptr;
}

}  // namespace etc
