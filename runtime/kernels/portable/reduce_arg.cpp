// arg_max / arg_min over one axis (the other half of the 'reduce' family).
#include "runtime/kernels/portable/reduce_arg.h"

#include <cmath>
#include <string>
#include <type_traits>

#include "runtime/kernels/portable/dispatch.h"

namespace etc {
namespace {

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
  ETC_TRY(check_reduce_dtype(in[0].dtype));
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

}  // namespace

const OpDef* reduce_arg_op_def(EdgeOp op) {
  static const OpDef kDefs[] = {
      OpDef{EdgeOp::ArgMax, 1, 1, 1, 1, infer_arg, create_arg<EdgeOp::ArgMax>},
      OpDef{EdgeOp::ArgMin, 1, 1, 1, 1, infer_arg, create_arg<EdgeOp::ArgMin>},
  };
  for (const OpDef& d : kDefs)
    if (d.op == op) return &d;
  return nullptr;
}

}  // namespace etc
