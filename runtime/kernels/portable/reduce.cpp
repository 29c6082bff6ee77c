// Reductions over a set of axes (reduce_*). The axes are an attribute, or an
// int64 input read at run time: the output shape is then the "shape"
// attribute, and each run checks the axes give it. arg_max / arg_min, the
// rest of the family, live in reduce_arg.cpp.
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/kernels/kernel.h"
#include "runtime/kernels/portable/dispatch.h"
#include "runtime/kernels/portable/reduce_arg.h"
#include "runtime/kernels/portable/wrapping.h"

namespace etc {
namespace {

// ---- reduce_* ----

// The input seen as alternating runs of kept and reduced dims (adjacent dims of
// the same kind merged, size-1 dims dropped). Walking it in row-major order
// with an output offset that only moves on kept dims reads the input once,
// contiguously, whichever axes are reduced.
struct ReducePlan {
  int rank = 1;
  std::array<int64_t, kMaxRank> dims{};
  std::array<int64_t, kMaxRank> out_strides{};  // 0 on reduced runs
  int64_t in_numel = 0;
  int64_t out_numel = 0;
  int64_t count = 1;  // input elements folded into each output element
};

using AxisMask = std::array<bool, kMaxRank>;

AxisMask axis_mask(const std::vector<int64_t>& axes) {
  AxisMask m{};
  for (int64_t a : axes) m[static_cast<size_t>(a)] = true;
  return m;
}

// The output shape of reducing `reduced` dims of `in`.
Shape reduced_shape(const Shape& in, const AxisMask& reduced, bool keepdims) {
  Shape o;
  for (int d = 0; d < in.rank(); ++d) {
    if (!reduced[static_cast<size_t>(d)])
      o.push_back(in[d]);
    else if (keepdims)
      o.push_back(1);
  }
  return o;
}

ReducePlan make_reduce_plan(const Shape& in, const AxisMask& reduced_dim) {
  std::array<bool, kMaxRank> reduced_run{};
  ReducePlan p;
  p.rank = 0;
  for (int d = 0; d < in.rank(); ++d) {
    if (reduced_dim[d]) p.count *= in[d];
    if (in[d] == 1) continue;
    if (p.rank > 0 && reduced_run[p.rank - 1] == reduced_dim[d]) {
      p.dims[p.rank - 1] *= in[d];
    } else {
      reduced_run[p.rank] = reduced_dim[d];
      p.dims[p.rank++] = in[d];
    }
  }
  if (p.rank == 0) {
    p.rank = 1;
    p.dims[0] = 1;
  }
  int64_t acc = 1;
  for (int d = p.rank - 1; d >= 0; --d) {
    p.out_strides[d] = reduced_run[d] ? 0 : acc;
    if (!reduced_run[d]) acc *= p.dims[d];
  }
  p.in_numel = in.numel();
  p.out_numel = acc;
  return p;
}

// y[out(i)] = fold(y[out(i)], map(x[i])) for every input element i.
template <typename T, typename Acc, typename Map, typename Fold>
void reduce_walk(const ReducePlan& p, const T* x, Acc* y, Map map, Fold fold) {
  const int r = p.rank;
  const int64_t n = p.dims[r - 1];
  if (p.in_numel == 0 || n == 0) return;
  const bool inner_reduced = p.out_strides[r - 1] == 0;
  std::array<int64_t, kMaxRank> counter{};
  int64_t base = 0;
  for (int64_t o = 0; o < p.in_numel; o += n) {
    const T* xr = x + o;
    if (inner_reduced) {
      Acc a = y[base];
      for (int64_t j = 0; j < n; ++j) a = fold(a, map(xr[j]));
      y[base] = a;
    } else {
      Acc* yr = y + base;
      for (int64_t j = 0; j < n; ++j) yr[j] = fold(yr[j], map(xr[j]));
    }
    for (int d = r - 2; d >= 0; --d) {
      base += p.out_strides[d];
      if (++counter[d] < p.dims[d]) break;
      base -= p.out_strides[d] * p.dims[d];
      counter[d] = 0;
    }
  }
}

// Max and min propagate NaN, as numpy and ONNX Runtime do.
template <typename T>
T max_fold(T acc, T v) {
  return (acc != acc || v <= acc) ? acc : v;  // NOLINT(misc-redundant-expression)
}
template <typename T>
T min_fold(T acc, T v) {
  return (acc != acc || v >= acc) ? acc : v;  // NOLINT(misc-redundant-expression)
}

// Run-time axes: the input shape, the static output shape they must give,
// and how an empty axes list reads.
struct RuntimeAxes {
  Shape in;
  Shape out;
  bool keepdims = true;
  bool noop_with_empty_axes = false;
};

// Axes read from an int64 tensor (negative ones count from the back), checked
// against the static output shape, as a plan. Does not allocate unless it fails.
Result<ReducePlan> runtime_plan(EdgeOp op, const RuntimeAxes& r, const Tensor& axes) {
  const int rank = r.in.rank();
  const int64_t* v = axes.data_as<const int64_t>();
  AxisMask reduced{};
  if (axes.numel() == 0 && !r.noop_with_empty_axes) reduced.fill(true);
  for (int64_t i = 0; i < axes.numel(); ++i) {
    const int64_t a = v[i] < 0 ? v[i] + rank : v[i];
    ETC_CHECK_OR_FAIL(a >= 0 && a < rank, Error::InvalidArgument, edge_op_name(op), ": axes entry ",
                      std::to_string(v[i]), " is out of range for rank ", std::to_string(rank));
    ETC_CHECK_OR_FAIL(!reduced[static_cast<size_t>(a)], Error::InvalidArgument, edge_op_name(op),
                      ": axes repeats axis ", std::to_string(a));
    reduced[static_cast<size_t>(a)] = true;
  }
  const Shape got = reduced_shape(r.in, reduced, r.keepdims);
  if (!(got == r.out)) {
    std::string list;
    for (int64_t i = 0; i < axes.numel(); ++i) list += (i ? ", " : "") + std::to_string(v[i]);
    return fail(Error::InvalidArgument, edge_op_name(op), ": axes [", list, "] give output shape ", got.str(),
                " on input ", r.in.str(), ", but the program was compiled for the declared output shape ",
                r.out.str());
  }
  return make_reduce_plan(r.in, reduced);
}

class ReduceKernel final : public Kernel {
 public:
  ReduceKernel(EdgeOp op, DType dtype, ReducePlan plan) : op_(op), dtype_(dtype), plan_(plan) {}
  ReduceKernel(EdgeOp op, DType dtype, const RuntimeAxes& axes)
      : op_(op), dtype_(dtype), runtime_axes_(true), axes_(axes) {}

  Status run(const KernelArgs& args) override {
    if (runtime_axes_) {
      ETC_ASSIGN_OR_RETURN(plan_, runtime_plan(op_, axes_, *args.inputs[1]));
    }
    if (dtype_ == DType::Float32 && sums()) {
      run_float_sum(args.inputs[0]->data_as<const float>(), args.outputs[0]->data_as<float>(),
                    static_cast<double*>(args.scratch));
      return Status::Ok();
    }
    return dispatch_arith(dtype_, [&]<typename T>() {
      run_typed<T>(args.inputs[0]->data_as<const T>(), args.outputs[0]->data_as<T>());
      return Status::Ok();
    });
  }

  // float32 sums accumulate in double: a float running total over 25,600
  // values near 200 drifts by 1e-5 relative (a global pool), this one by
  // ~1e-16 before the final rounding.
  size_t scratch_bytes() const override {
    if (dtype_ != DType::Float32 || !sums()) return 0;
    const int64_t n = runtime_axes_ ? axes_.out.numel() : plan_.out_numel;
    return static_cast<size_t>(n) * sizeof(double);
  }

 private:
  bool sums() const {
    return op_ == EdgeOp::ReduceSum || op_ == EdgeOp::ReduceMean || op_ == EdgeOp::ReduceSumSquare ||
           op_ == EdgeOp::ReduceL2;
  }

  void run_float_sum(const float* x, float* y, double* acc) {
    fill<double>(acc, 0.0);
    const auto add = [](double a, double v) { return a + v; };
    if (op_ == EdgeOp::ReduceSumSquare || op_ == EdgeOp::ReduceL2)
      reduce_walk<float, double>(
          plan_, x, acc, [](float v) { return double(v) * double(v); }, add);
    else
      reduce_walk<float, double>(
          plan_, x, acc, [](float v) { return double(v); }, add);
    const double scale =
        op_ == EdgeOp::ReduceMean && plan_.count > 0 ? 1.0 / static_cast<double>(plan_.count) : 1.0;
    for (int64_t i = 0; i < plan_.out_numel; ++i)
      y[i] = static_cast<float>(op_ == EdgeOp::ReduceL2 ? std::sqrt(acc[i]) : acc[i] * scale);
  }

  template <typename T>
  void fill(T* y, T v) {
    for (int64_t i = 0; i < plan_.out_numel; ++i) y[i] = v;
  }

  template <typename T>
  void run_typed(const T* x, T* y) {
    using Lim = std::numeric_limits<T>;
    const auto same = [](T v) { return v; };
    const auto square = [](T v) { return wrap_mul(v, v); };
    const auto add = [](T a, T v) { return wrap_add(a, v); };
    switch (op_) {
      case EdgeOp::ReduceMax:
        fill<T>(y, Lim::has_infinity ? -Lim::infinity() : Lim::lowest());
        reduce_walk<T>(plan_, x, y, same, max_fold<T>);
        return;
      case EdgeOp::ReduceMin:
        fill<T>(y, Lim::has_infinity ? Lim::infinity() : Lim::max());
        reduce_walk<T>(plan_, x, y, same, min_fold<T>);
        return;
      case EdgeOp::ReduceProd:
        fill<T>(y, T(1));
        reduce_walk<T>(plan_, x, y, same, [](T a, T v) { return wrap_mul(a, v); });
        return;
      case EdgeOp::ReduceSumSquare:
      case EdgeOp::ReduceL2:
        fill<T>(y, T(0));
        reduce_walk<T>(plan_, x, y, square, add);
        break;
      default:  // sum, mean
        fill<T>(y, T(0));
        reduce_walk<T>(plan_, x, y, same, add);
        break;
    }
    if (op_ == EdgeOp::ReduceL2) {
      for (int64_t i = 0; i < plan_.out_numel; ++i)
        y[i] = static_cast<T>(std::sqrt(static_cast<double>(y[i])));
    } else if (op_ == EdgeOp::ReduceMean) {
      if constexpr (std::is_floating_point_v<T>) {
        const T inv = T(1) / static_cast<T>(plan_.count);
        for (int64_t i = 0; i < plan_.out_numel; ++i) y[i] *= inv;
      } else {
        if (plan_.count == 0) return;  // integer mean of nothing: leave 0
        for (int64_t i = 0; i < plan_.out_numel; ++i) y[i] = static_cast<T>(y[i] / plan_.count);
      }
    }
  }

  EdgeOp op_;
  DType dtype_;
  ReducePlan plan_;  // rebuilt on each run when the axes are an input
  bool runtime_axes_ = false;
  RuntimeAxes axes_;
};

// Reads and validates "axes": sorted, unique, in range. Empty axes reduce
// nothing (each element is reduced alone, so reduce_sum is a copy).
Result<std::vector<int64_t>> reduce_axes(const AttrList& attrs, int rank) {
  ETC_ASSIGN_OR_RETURN(std::vector<int64_t> axes, attrs.get_ints("axes"));
  for (size_t i = 0; i < axes.size(); ++i) {
    ETC_CHECK_OR_FAIL(axes[i] >= 0 && axes[i] < rank, Error::InvalidProgram, "axis ", std::to_string(axes[i]),
                      " out of range for rank ", std::to_string(rank));
    ETC_CHECK_OR_FAIL(i == 0 || axes[i] > axes[i - 1], Error::InvalidProgram,
                      "axes must be sorted and unique");
  }
  return axes;
}

// With an axes input the output shape is the "shape" attribute; it must be
// one that some axes could give.
Result<Shape> runtime_axes_shape(const AttrList& attrs, const TensorSpec& x, const TensorSpec& axes,
                                 bool keepdims) {
  ETC_CHECK_OR_FAIL(axes.dtype == DType::Int64 && axes.shape.rank() == 1, Error::InvalidType,
                    "axes input must be 1-D int64, got ", dtype_name(axes.dtype), " ", axes.shape.str());
  ETC_ASSIGN_OR_RETURN(std::vector<int64_t> dims, attrs.get_ints("shape"));
  ETC_CHECK_OR_FAIL(dims.size() <= static_cast<size_t>(x.shape.rank()), Error::InvalidProgram, "shape ",
                    "has more dims than the input ", x.shape.str());
  Shape o;
  for (int64_t d : dims) o.push_back(d);
  if (keepdims) {
    bool ok = o.rank() == x.shape.rank();
    for (int d = 0; ok && d < o.rank(); ++d) ok = o[d] == x.shape[d] || o[d] == 1;
    ETC_CHECK_OR_FAIL(ok, Error::InvalidProgram, "shape ", o.str(), " cannot come from reducing ",
                      x.shape.str(), " with keepdims");
  }
  return o;
}

bool has_axes_input(Span<const TensorSpec> in) { return in.size() > 1 && in[1].dtype != DType::Invalid; }

Status infer_reduce(const AttrList& attrs, Span<const TensorSpec> in, Span<TensorSpec> out) {
  ETC_TRY(check_reduce_dtype(in[0].dtype));
  const Shape& s = in[0].shape;
  ETC_ASSIGN_OR_RETURN(int64_t keepdims, attrs.get_int("keepdims", 1));
  if (has_axes_input(in)) {
    ETC_ASSIGN_OR_RETURN(Shape o, runtime_axes_shape(attrs, in[0], in[1], keepdims != 0));
    out[0] = TensorSpec{in[0].dtype, o};
    return Status::Ok();
  }
  ETC_ASSIGN_OR_RETURN(std::vector<int64_t> axes, reduce_axes(attrs, s.rank()));
  out[0] = TensorSpec{in[0].dtype, reduced_shape(s, axis_mask(axes), keepdims != 0)};
  return Status::Ok();
}

template <EdgeOp kOp>
Result<std::unique_ptr<Kernel>> create_reduce(const AttrList& attrs, Span<const TensorSpec> in,
                                              Span<const TensorSpec> out) {
  if (has_axes_input(in)) {
    RuntimeAxes r;
    r.in = in[0].shape;
    r.out = out[0].shape;
    ETC_ASSIGN_OR_RETURN(int64_t keepdims, attrs.get_int("keepdims", 1));
    ETC_ASSIGN_OR_RETURN(int64_t noop, attrs.get_int("noop_with_empty_axes", 0));
    r.keepdims = keepdims != 0;
    r.noop_with_empty_axes = noop != 0;
    return std::unique_ptr<Kernel>(std::make_unique<ReduceKernel>(kOp, in[0].dtype, r));
  }
  ETC_ASSIGN_OR_RETURN(std::vector<int64_t> axes, reduce_axes(attrs, in[0].shape.rank()));
  return std::unique_ptr<Kernel>(
      std::make_unique<ReduceKernel>(kOp, in[0].dtype, make_reduce_plan(in[0].shape, axis_mask(axes))));
}

template <EdgeOp kOp>
constexpr OpDef reduce_def() {
  return OpDef{kOp, 1, 2, 1, 1, infer_reduce, create_reduce<kOp>};
}

}  // namespace

const OpDef* reduce_op_def(EdgeOp op) {
  static const OpDef kDefs[] = {
      reduce_def<EdgeOp::ReduceMean>(),      reduce_def<EdgeOp::ReduceSum>(),
      reduce_def<EdgeOp::ReduceMax>(),       reduce_def<EdgeOp::ReduceMin>(),
      reduce_def<EdgeOp::ReduceProd>(),      reduce_def<EdgeOp::ReduceL2>(),
      reduce_def<EdgeOp::ReduceSumSquare>(),
  };
  for (const OpDef& d : kDefs)
    if (d.op == op) return &d;
  return reduce_arg_op_def(op);
}

}  // namespace etc
