// Portable kernels of the 'pool' family: max_pool (float32, float64, int8,
// uint8; optional int64 indices output) and avg_pool (float32, float64) over
// 1 to 3 spatial dims. The valid taps of every output position are computed
// per dim at init, so the inner loops carry no bounds checks.
#include <string>
#include <vector>

#include "runtime/kernels/kernel.h"
#include "runtime/kernels/portable/conv_geometry.h"
#include "runtime/kernels/portable/pool_window.h"

namespace etc {
namespace {

Status pool_params(EdgeOp op, const AttrList& attrs, Span<const TensorSpec> in, size_t num_outputs,
                   PoolParams* p) {
  const TensorSpec& x = in[0];
  const bool is_max = op == EdgeOp::MaxPool;
  const bool dtype_ok = x.dtype == DType::Float32 || x.dtype == DType::Float64 ||
                        (is_max && (x.dtype == DType::Int8 || x.dtype == DType::UInt8));
  ETC_CHECK_OR_FAIL(dtype_ok, Error::InvalidType, "does not support dtype ", dtype_name(x.dtype),
                    is_max ? " (float32, float64, int8, uint8 are)" : " (float32, float64 are)");
  ETC_CHECK_OR_FAIL(num_outputs == 1 || is_max, Error::InvalidProgram, "only max_pool has indices");
  ETC_TRY(read_window_attrs(attrs, x.shape, false, &p->g));
  ETC_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, attrs.get_ints("kernel_shape"));
  // A global pool's window is the whole input, whatever kernel_shape says
  // (it holds the compiled size): the program then runs at any input size.
  ETC_ASSIGN_OR_RETURN(int64_t global, attrs.get_int("global", 0));
  if (global != 0) kernel.assign(x.shape.begin() + 2, x.shape.end());
  ETC_CHECK_OR_FAIL(kernel.size() == static_cast<size_t>(p->g.rank), Error::InvalidProgram,
                    "kernel_shape has ", std::to_string(kernel.size()), " values for input ", x.shape.str());
  if (Status s = set_window_kernel(kernel, &p->g); !s.ok())
    return fail(s.error(), "kernel_shape: ", s.message());
  ETC_ASSIGN_OR_RETURN(int64_t ceil_mode, attrs.get_int("ceil_mode", 0));
  ETC_ASSIGN_OR_RETURN(int64_t include_pad, attrs.get_int("count_include_pad", 0));
  ETC_ASSIGN_OR_RETURN(int64_t storage_order, attrs.get_int("storage_order", 0));
  p->count_include_pad = include_pad != 0;
  p->column_major_indices = storage_order != 0;
  p->with_indices = num_outputs == 2;
  p->batch = x.shape[0];
  p->channels = x.shape[1];
  WindowGeometry& g = p->g;
  for (int i = 0; i < kMaxSpatialRank; ++i) {
    // Windows must see at least one input element.
    ETC_CHECK_OR_FAIL(g.pad_begin[i] < g.span(i) && g.pad_end[i] < g.span(i), Error::InvalidArgument,
                      "pads must be smaller than the kernel extent");
    const int64_t room = g.in[i] + g.pad_begin[i] + g.pad_end[i] - g.span(i);
    ETC_CHECK_OR_FAIL(room >= 0, Error::InvalidArgument, "kernel is larger than the padded input ",
                      x.shape.str());
    g.out[i] = (ceil_mode ? (room + g.stride[i] - 1) / g.stride[i] : room / g.stride[i]) + 1;
    // With ceil_mode, the last window must start inside the input or the begin padding.
    if (ceil_mode && (g.out[i] - 1) * g.stride[i] >= g.in[i] + g.pad_begin[i]) --g.out[i];
  }
  return Status::Ok();
}

template <EdgeOp kOp>
Status infer_pool(const AttrList& attrs, Span<const TensorSpec> in, Span<TensorSpec> out) {
  PoolParams p;
  ETC_TRY(pool_params(kOp, attrs, in, out.size(), &p));
  const Shape shape = window_output_shape(p.g, p.batch, p.channels);
  out[0] = TensorSpec{in[0].dtype, shape};
  if (out.size() == 2) out[1] = TensorSpec{DType::Int64, shape};
  return Status::Ok();
}

template <EdgeOp kOp>
Result<std::unique_ptr<Kernel>> create_pool(const AttrList& attrs, Span<const TensorSpec> in,
                                            Span<const TensorSpec> out) {
  PoolParams p;
  ETC_TRY(pool_params(kOp, attrs, in, out.size(), &p));
  if constexpr (kOp == EdgeOp::MaxPool) {
    return make_max_pool_kernel(in[0].dtype, p);
  } else {
    return make_avg_pool_kernel(in[0].dtype, p);
  }
}

}  // namespace

const OpDef* pool_op_def(EdgeOp op) {
  static const OpDef kDefs[] = {
      {EdgeOp::MaxPool, 1, 1, 1, 2, infer_pool<EdgeOp::MaxPool>, create_pool<EdgeOp::MaxPool>},
      {EdgeOp::AvgPool, 1, 1, 1, 1, infer_pool<EdgeOp::AvgPool>, create_pool<EdgeOp::AvgPool>},
  };
  for (const OpDef& d : kDefs)
    if (d.op == op) return &d;
  return nullptr;
}

}  // namespace etc
