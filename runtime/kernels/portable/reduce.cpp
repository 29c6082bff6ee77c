// Reductions over a set of axes (reduce_*) and arg_max / arg_min over one axis.
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/kernels/kernel.h"
#include "runtime/kernels/portable/dispatch.h"

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

ReducePlan make_reduce_plan(const Shape& in, const std::vector<int64_t>& axes) {
  std::array<bool, kMaxRank> reduced_dim{};
  for (int64_t a : axes) reduced_dim[a] = true;
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
template <typename T, typename Map, typename Fold>
void reduce_walk(const ReducePlan& p, const T* x, T* y, Map map, Fold fold) {
  const int r = p.rank;
  const int64_t n = p.dims[r - 1];
  if (p.in_numel == 0 || n == 0) return;
  const bool inner_reduced = p.out_strides[r - 1] == 0;
  std::array<int64_t, kMaxRank> counter{};
  int64_t base = 0;
  for (int64_t o = 0; o < p.in_numel; o += n) {
    const T* xr = x + o;
    if (inner_reduced) {
      T a = y[base];
      for (int64_t j = 0; j < n; ++j) a = fold(a, map(xr[j]));
      y[base] = a;
    } else {
      T* yr = y + base;
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

class ReduceKernel final : public Kernel {
 public:
  ReduceKernel(EdgeOp op, DType dtype, ReducePlan plan) : op_(op), dtype_(dtype), plan_(plan) {}

  Status run(const KernelArgs& args) override {
    return dispatch_arith(dtype_, [&]<typename T>() {
      run_typed<T>(args.inputs[0]->data_as<const T>(), args.outputs[0]->data_as<T>());
      return Status::Ok();
    });
  }

 private:
  template <typename T>
  void fill(T* y, T v) {
    for (int64_t i = 0; i < plan_.out_numel; ++i) y[i] = v;
  }

  template <typename T>
  void run_typed(const T* x, T* y) {
    using Lim = std::numeric_limits<T>;
    const auto same = [](T v) { return v; };
    const auto square = [](T v) { return static_cast<T>(v * v); };
    const auto add = [](T a, T v) { return static_cast<T>(a + v); };
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
        reduce_walk<T>(plan_, x, y, same, [](T a, T v) { return static_cast<T>(a * v); });
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
  ReducePlan plan_;
};

Status check_arith(DType t) {
  ETC_CHECK_OR_FAIL(t != DType::Bool && t != DType::Invalid, Error::InvalidType, "does not take ",
                    dtype_name(t));
  return Status::Ok();
}

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

Status infer_reduce(const AttrList& attrs, Span<const TensorSpec> in, Span<TensorSpec> out) {
  ETC_TRY(check_arith(in[0].dtype));
  const Shape& s = in[0].shape;
  ETC_ASSIGN_OR_RETURN(std::vector<int64_t> axes, reduce_axes(attrs, s.rank()));
  ETC_ASSIGN_OR_RETURN(int64_t keepdims, attrs.get_int("keepdims", 1));
  std::array<bool, kMaxRank> reduced{};
  for (int64_t a : axes) reduced[a] = true;
  Shape o;
  for (int d = 0; d < s.rank(); ++d) {
    if (!reduced[d])
      o.push_back(s[d]);
    else if (keepdims != 0)
      o.push_back(1);
  }
  out[0] = TensorSpec{in[0].dtype, o};
  return Status::Ok();
}

template <EdgeOp kOp>
Result<std::unique_ptr<Kernel>> create_reduce(const AttrList& attrs, Span<const TensorSpec> in,
                                              Span<const TensorSpec>) {
  ETC_ASSIGN_OR_RETURN(std::vector<int64_t> axes, reduce_axes(attrs, in[0].shape.rank()));
  return std::unique_ptr<Kernel>(
      std::make_unique<ReduceKernel>(kOp, in[0].dtype, make_reduce_plan(in[0].shape, axes)));
}

// ---- arg_max / arg_min ----

struct ArgParams {
  int64_t outer = 1, n = 1, inner = 1;
  bool last = false;  // select_last_index: ties go to the highest index
};

// True when v should replace the current best. NaN counts as the extreme
// value, as in numpy.
template <typename T, bool kMax>
bool better(T v, T best, bool last) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(best)) return last && std::isnan(v);
    if (std::isnan(v)) return true;
  }
  if (v == best) return last;
  return kMax ? v > best : v < best;
}

template <bool kMax>
class ArgKernel final : public Kernel {
 public:
  ArgKernel(DType dtype, ArgParams p) : dtype_(dtype), p_(p) {}

  Status run(const KernelArgs& args) override {
    return dispatch_arith(dtype_, [&]<typename T>() {
      run_typed<T>(args.inputs[0]->data_as<const T>(), args.outputs[0]->data_as<int64_t>());
      return Status::Ok();
    });
  }

 private:
  template <typename T>
  void run_typed(const T* x, int64_t* y) const {
    const int64_t n = p_.n, inner = p_.inner;
    for (int64_t o = 0; o < p_.outer; ++o, x += n * inner, y += inner) {
      if (inner == 1) {
        int64_t bi = 0;
        for (int64_t k = 1; k < n; ++k)
          if (better<T, kMax>(x[k], x[bi], p_.last)) bi = k;
        y[0] = bi;
        continue;
      }
      // Several columns at once: the best index so far lives in y.
      for (int64_t i = 0; i < inner; ++i) y[i] = 0;
      for (int64_t k = 1; k < n; ++k) {
        const T* xk = x + k * inner;
        for (int64_t i = 0; i < inner; ++i)
          if (better<T, kMax>(xk[i], x[y[i] * inner + i], p_.last)) y[i] = k;
      }
    }
  }

  DType dtype_;
  ArgParams p_;
};

Status infer_arg(const AttrList& attrs, Span<const TensorSpec> in, Span<TensorSpec> out) {
  ETC_TRY(check_arith(in[0].dtype));
  const Shape& s = in[0].shape;
  ETC_ASSIGN_OR_RETURN(int64_t axis, attrs.get_int("axis"));
  ETC_ASSIGN_OR_RETURN(int64_t keepdims, attrs.get_int("keepdims", 1));
  ETC_CHECK_OR_FAIL(axis >= 0 && axis < s.rank(), Error::InvalidProgram, "axis ", std::to_string(axis),
                    " out of range for rank ", std::to_string(s.rank()));
  ETC_CHECK_OR_FAIL(s[static_cast<int>(axis)] > 0, Error::InvalidShape, "axis ", std::to_string(axis),
                    " is empty in ", s.str());
  Shape o;
  for (int d = 0; d < s.rank(); ++d) {
    if (d != axis)
      o.push_back(s[d]);
    else if (keepdims != 0)
      o.push_back(1);
  }
  out[0] = TensorSpec{DType::Int64, o};
  return Status::Ok();
}

template <EdgeOp kOp>
Result<std::unique_ptr<Kernel>> create_arg(const AttrList& attrs, Span<const TensorSpec> in,
                                           Span<const TensorSpec>) {
  ETC_ASSIGN_OR_RETURN(int64_t axis, attrs.get_int("axis"));
  ETC_ASSIGN_OR_RETURN(int64_t last, attrs.get_int("select_last_index", 0));
  const Shape& s = in[0].shape;
  ArgParams p;
  for (int d = 0; d < s.rank(); ++d) {
    if (d < axis)
      p.outer *= s[d];
    else if (d == axis)
      p.n = s[d];
    else
      p.inner *= s[d];
  }
  p.last = last != 0;
  return std::unique_ptr<Kernel>(std::make_unique<ArgKernel<kOp == EdgeOp::ArgMax>>(in[0].dtype, p));
}

template <EdgeOp kOp>
constexpr OpDef reduce_def() {
  return OpDef{kOp, 1, 1, 1, 1, infer_reduce, create_reduce<kOp>};
}

}  // namespace

const OpDef* reduce_op_def(EdgeOp op) {
  static const OpDef kDefs[] = {
      reduce_def<EdgeOp::ReduceMean>(),
      reduce_def<EdgeOp::ReduceSum>(),
      reduce_def<EdgeOp::ReduceMax>(),
      reduce_def<EdgeOp::ReduceMin>(),
      reduce_def<EdgeOp::ReduceProd>(),
      reduce_def<EdgeOp::ReduceL2>(),
      reduce_def<EdgeOp::ReduceSumSquare>(),
      OpDef{EdgeOp::ArgMax, 1, 1, 1, 1, infer_arg, create_arg<EdgeOp::ArgMax>},
      OpDef{EdgeOp::ArgMin, 1, 1, 1, 1, infer_arg, create_arg<EdgeOp::ArgMin>},
  };
  for (const OpDef& d : kDefs)
    if (d.op == op) return &d;
  return nullptr;
}

}  // namespace etc
