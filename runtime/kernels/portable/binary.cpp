// Elementwise binary ops (and where) with numpy broadcasting.
#include <cmath>
#include <type_traits>

#include "runtime/kernels/kernel.h"
#include "runtime/kernels/portable/broadcast.h"
#include "runtime/kernels/portable/dispatch.h"
#include "runtime/kernels/portable/wrapping.h"

namespace etc {
namespace {

bool is_comparison(EdgeOp op) {
  return op == EdgeOp::Equal || op == EdgeOp::Less || op == EdgeOp::Greater || op == EdgeOp::LessOrEqual ||
         op == EdgeOp::GreaterOrEqual;
}
bool is_logical(EdgeOp op) { return op == EdgeOp::And || op == EdgeOp::Or || op == EdgeOp::Xor; }

// Integer division as numpy and ONNX Runtime compute it: INT_MIN / -1 is
// INT_MIN (a trap in C++), INT_MIN % -1 is 0, and x / 0, x % 0 are 0.
template <typename T>
T div_op(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<T>)
      if (b == -1) return wrap_sub(T(0), a);
    return static_cast<T>(a / b);
  } else {
    return a / b;
  }
}

template <typename T>
T mod_op(T a, T b, bool fmod_mode) {
  if constexpr (std::is_floating_point_v<T>) {
    T r = std::fmod(a, b);
    if (!fmod_mode && r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  } else {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<T>)
      if (b == -1) return 0;
    T r = static_cast<T>(a % b);
    if (!fmod_mode && r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
    return r;
  }
}

template <typename T>
T pow_op(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(std::pow(static_cast<double>(a), static_cast<double>(b)));
  } else {
    return std::pow(a, b);
  }
}

class BinaryKernel final : public Kernel {
 public:
  BinaryKernel(EdgeOp op, DType dtype, DType exponent_dtype, bool fmod_mode, BroadcastPlan<2> plan)
      : op_(op), dtype_(dtype), exponent_dtype_(exponent_dtype), fmod_(fmod_mode), plan_(plan) {}

  Status run(const KernelArgs& args) override {
    const Tensor& a = *args.inputs[0];
    const Tensor& b = *args.inputs[1];
    Tensor& out = *args.outputs[0];
    if (is_logical(op_)) return run_logical(a, b, out);
    if (op_ == EdgeOp::Pow && exponent_dtype_ != dtype_) return run_mixed_pow(a, b, out);
    return dispatch_arith(dtype_, [&]<typename T>() { return run_typed<T>(a, b, out); });
  }

 private:
  template <typename T, typename R, typename F>
  void apply(const Tensor& a, const Tensor& b, Tensor& out, F f) {
    const T* pa = a.data_as<const T>();
    const T* pb = b.data_as<const T>();
    R* po = out.data_as<R>();
    for_each_broadcast<2>(
        plan_, [&](int64_t i, const std::array<int64_t, 2>& idx) { po[i] = f(pa[idx[0]], pb[idx[1]]); });
  }

  template <typename T>
  Status run_typed(const Tensor& a, const Tensor& b, Tensor& out) {
    switch (op_) {
      case EdgeOp::Add: apply<T, T>(a, b, out, [](T x, T y) { return wrap_add(x, y); }); break;
      case EdgeOp::Sub: apply<T, T>(a, b, out, [](T x, T y) { return wrap_sub(x, y); }); break;
      case EdgeOp::Mul: apply<T, T>(a, b, out, [](T x, T y) { return wrap_mul(x, y); }); break;
      case EdgeOp::Div: apply<T, T>(a, b, out, [](T x, T y) { return div_op(x, y); }); break;
      case EdgeOp::Pow: apply<T, T>(a, b, out, [](T x, T y) { return pow_op(x, y); }); break;
      case EdgeOp::Min:
        apply<T, T>(a, b, out, [](T x, T y) {
          if constexpr (std::is_floating_point_v<T>)
            if (std::isnan(x) || std::isnan(y)) return x + y;
          return y < x ? y : x;
        });
        break;
      case EdgeOp::Max:
        apply<T, T>(a, b, out, [](T x, T y) {
          if constexpr (std::is_floating_point_v<T>)
            if (std::isnan(x) || std::isnan(y)) return x + y;
          return y > x ? y : x;
        });
        break;
      case EdgeOp::Mod: {
        const bool f = fmod_;
        apply<T, T>(a, b, out, [f](T x, T y) { return mod_op(x, y, f); });
        break;
      }
      case EdgeOp::PRelu: apply<T, T>(a, b, out, [](T x, T s) { return x < 0 ? wrap_mul(x, s) : x; }); break;
      case EdgeOp::Equal: apply<T, bool>(a, b, out, [](T x, T y) { return x == y; }); break;
      case EdgeOp::Less: apply<T, bool>(a, b, out, [](T x, T y) { return x < y; }); break;
      case EdgeOp::Greater: apply<T, bool>(a, b, out, [](T x, T y) { return x > y; }); break;
      case EdgeOp::LessOrEqual: apply<T, bool>(a, b, out, [](T x, T y) { return x <= y; }); break;
      case EdgeOp::GreaterOrEqual: apply<T, bool>(a, b, out, [](T x, T y) { return x >= y; }); break;
      default: return fail(Error::Internal, "not a binary op");
    }
    return Status::Ok();
  }

  Status run_logical(const Tensor& a, const Tensor& b, Tensor& out) {
    switch (op_) {
      case EdgeOp::And: apply<bool, bool>(a, b, out, [](bool x, bool y) { return x && y; }); break;
      case EdgeOp::Or: apply<bool, bool>(a, b, out, [](bool x, bool y) { return x || y; }); break;
      default: apply<bool, bool>(a, b, out, [](bool x, bool y) { return x != y; }); break;
    }
    return Status::Ok();
  }

  // ONNX Pow allows the exponent to have another numeric type than the base.
  Status run_mixed_pow(const Tensor& a, const Tensor& b, Tensor& out) {
    return dispatch_arith(dtype_, [&]<typename T>() {
      return dispatch_arith(exponent_dtype_, [&]<typename E>() {
        const T* pa = a.data_as<const T>();
        const E* pb = b.data_as<const E>();
        T* po = out.data_as<T>();
        for_each_broadcast<2>(plan_, [&](int64_t i, const std::array<int64_t, 2>& idx) {
          po[i] = static_cast<T>(std::pow(static_cast<double>(pa[idx[0]]), static_cast<double>(pb[idx[1]])));
        });
        return Status::Ok();
      });
    });
  }

  EdgeOp op_;
  DType dtype_;
  DType exponent_dtype_;
  bool fmod_;
  BroadcastPlan<2> plan_;
};

class WhereKernel final : public Kernel {
 public:
  explicit WhereKernel(BroadcastPlan<3> plan) : plan_(plan) {}
  Status run(const KernelArgs& args) override {
    const bool* c = args.inputs[0]->data_as<const bool>();
    const Tensor& x = *args.inputs[1];
    const Tensor& y = *args.inputs[2];
    Tensor& out = *args.outputs[0];
    return dispatch_all(x.dtype(), [&]<typename T>() {
      const T* px = x.data_as<const T>();
      const T* py = y.data_as<const T>();
      T* po = out.data_as<T>();
      for_each_broadcast<3>(plan_, [&](int64_t i, const std::array<int64_t, 3>& idx) {
        po[i] = c[idx[0]] ? px[idx[1]] : py[idx[2]];
      });
      return Status::Ok();
    });
  }

 private:
  BroadcastPlan<3> plan_;
};

template <EdgeOp kOp>
Status infer_binary(const AttrList&, Span<const TensorSpec> in, Span<TensorSpec> out) {
  const TensorSpec& a = in[0];
  const TensorSpec& b = in[1];
  if constexpr (kOp == EdgeOp::Where) {
    ETC_CHECK_OR_FAIL(a.dtype == DType::Bool, Error::InvalidType, "condition must be bool, got ",
                      dtype_name(a.dtype));
    ETC_CHECK_OR_FAIL(in[1].dtype == in[2].dtype, Error::InvalidType, "x and y dtypes differ (",
                      dtype_name(in[1].dtype), " vs ", dtype_name(in[2].dtype), ")");
    ETC_ASSIGN_OR_RETURN(Shape s, broadcast_shapes(a.shape, in[1].shape));
    ETC_ASSIGN_OR_RETURN(Shape s2, broadcast_shapes(s, in[2].shape));
    out[0] = TensorSpec{in[1].dtype, s2};
    return Status::Ok();
  } else {
    if (kOp == EdgeOp::Pow) {
      ETC_CHECK_OR_FAIL(a.dtype != DType::Bool && b.dtype != DType::Bool, Error::InvalidType,
                        "pow does not take bool");
    } else {
      ETC_CHECK_OR_FAIL(a.dtype == b.dtype, Error::InvalidType, "input dtypes differ (", dtype_name(a.dtype),
                        " vs ", dtype_name(b.dtype), ")");
    }
    if (is_logical(kOp)) {
      ETC_CHECK_OR_FAIL(a.dtype == DType::Bool, Error::InvalidType, "expects bool inputs, got ",
                        dtype_name(a.dtype));
    } else if (!is_comparison(kOp) || a.dtype == DType::Bool) {
      ETC_CHECK_OR_FAIL(a.dtype != DType::Bool || kOp == EdgeOp::Equal, Error::InvalidType,
                        "does not take bool inputs");
    }
    ETC_ASSIGN_OR_RETURN(Shape s, broadcast_shapes(a.shape, b.shape));
    const bool to_bool = is_comparison(kOp) || is_logical(kOp);
    out[0] = TensorSpec{to_bool ? DType::Bool : a.dtype, s};
    return Status::Ok();
  }
}

template <EdgeOp kOp>
Result<std::unique_ptr<Kernel>> create_binary(const AttrList& attrs, Span<const TensorSpec> in,
                                              Span<const TensorSpec> out) {
  if constexpr (kOp == EdgeOp::Where) {
    return std::unique_ptr<Kernel>(std::make_unique<WhereKernel>(
        make_broadcast_plan<3>(out[0].shape, {in[0].shape, in[1].shape, in[2].shape})));
  } else {
    ETC_ASSIGN_OR_RETURN(int64_t fmod_mode, attrs.get_int("fmod", 0));
    // Equal on bool compares bytes, which the uint8 path does exactly.
    const DType dtype = in[0].dtype == DType::Bool && !is_logical(kOp) ? DType::UInt8 : in[0].dtype;
    return std::unique_ptr<Kernel>(std::make_unique<BinaryKernel>(
        kOp, dtype, in[1].dtype == DType::Bool ? DType::UInt8 : in[1].dtype, fmod_mode != 0,
        make_broadcast_plan<2>(out[0].shape, {in[0].shape, in[1].shape})));
  }
}

template <EdgeOp kOp>
constexpr OpDef binary_def() {
  const int n = kOp == EdgeOp::Where ? 3 : 2;
  return OpDef{kOp, n, n, 1, 1, infer_binary<kOp>, create_binary<kOp>};
}

}  // namespace

const OpDef* binary_op_def(EdgeOp op) {
  static const OpDef kDefs[] = {
      binary_def<EdgeOp::Add>(),         binary_def<EdgeOp::Sub>(),
      binary_def<EdgeOp::Mul>(),         binary_def<EdgeOp::Div>(),
      binary_def<EdgeOp::Pow>(),         binary_def<EdgeOp::Min>(),
      binary_def<EdgeOp::Max>(),         binary_def<EdgeOp::Mod>(),
      binary_def<EdgeOp::PRelu>(),       binary_def<EdgeOp::Equal>(),
      binary_def<EdgeOp::Less>(),        binary_def<EdgeOp::Greater>(),
      binary_def<EdgeOp::LessOrEqual>(), binary_def<EdgeOp::GreaterOrEqual>(),
      binary_def<EdgeOp::And>(),         binary_def<EdgeOp::Or>(),
      binary_def<EdgeOp::Xor>(),         binary_def<EdgeOp::Where>(),
  };
  for (const OpDef& d : kDefs)
    if (d.op == op) return &d;
  return nullptr;
}

}  // namespace etc
