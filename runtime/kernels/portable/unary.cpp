// Elementwise ops with one input (activations, math functions, cast).
#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>

#include "runtime/kernels/kernel.h"
#include "runtime/kernels/portable/dispatch.h"

namespace etc {
namespace {

struct UnaryParams {
  float alpha = 0.0f;
  float beta = 0.0f;
  float gamma = 0.0f;
  float min = 0.0f;
  float max = 0.0f;
  bool tanh_approximation = false;  // gelu
};

// x * Φ(x), or its tanh approximation (ONNX Gelu, approximate="tanh").
template <typename T>
T gelu(T v, bool tanh_approximation) {
  if (tanh_approximation) {
    const T k = T(0.7978845608028654);  // sqrt(2 / pi)
    return T(0.5) * v * (T(1) + std::tanh(k * (v + T(0.044715) * v * v * v)));
  }
  return T(0.5) * v * (T(1) + std::erf(v * T(0.7071067811865476)));
}

// A float bound converted to an integer type, clamped to the type's range
// (an out-of-range float-to-int conversion is undefined behaviour).
template <typename T>
T saturate(float v) {
  const double d = v;
  if (d <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
  if (d >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(d);
}

// Round half to even, as ONNX Round requires.
template <typename T>
T round_half_even(T x) {
  return std::nearbyint(x);  // default rounding mode is to-nearest-even
}

template <typename T, typename F>
void map(const Tensor& in, Tensor& out, F f) {
  const T* x = in.data_as<const T>();
  T* y = out.data_as<T>();
  const int64_t n = in.numel();
  for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
}

class UnaryKernel final : public Kernel {
 public:
  UnaryKernel(EdgeOp op, DType dtype, UnaryParams p) : op_(op), dtype_(dtype), p_(p) {}

  Status run(const KernelArgs& args) override {
    const Tensor& in = *args.inputs[0];
    Tensor& out = *args.outputs[0];
    if (op_ == EdgeOp::Not) {
      map<bool>(in, out, [](bool v) { return !v; });
      return Status::Ok();
    }
    if (dtype_ == DType::Float32) return run_float<float>(in, out);
    if (dtype_ == DType::Float64) return run_float<double>(in, out);
    return dispatch_arith(dtype_, [&]<typename T>() { return run_integer<T>(in, out); });
  }

 private:
  template <typename T>
  Status run_integer(const Tensor& in, Tensor& out) {
    switch (op_) {
      case EdgeOp::Neg: map<T>(in, out, [](T v) { return static_cast<T>(-v); }); break;
      case EdgeOp::Abs: map<T>(in, out, [](T v) { return static_cast<T>(v < 0 ? -v : v); }); break;
      case EdgeOp::Sign: map<T>(in, out, [](T v) { return static_cast<T>((v > 0) - (v < 0)); }); break;
      case EdgeOp::Relu: map<T>(in, out, [](T v) { return v > 0 ? v : T(0); }); break;
      case EdgeOp::Clip: {
        const T lo = saturate<T>(p_.min), hi = saturate<T>(p_.max);
        map<T>(in, out, [lo, hi](T v) { return v < lo ? lo : (v > hi ? hi : v); });
        break;
      }
      default: return fail(Error::InvalidType, edge_op_name(op_), " does not take ", dtype_name(dtype_));
    }
    return Status::Ok();
  }

  template <typename T>
  Status run_float(const Tensor& in, Tensor& out) {
    const T a = static_cast<T>(p_.alpha), b = static_cast<T>(p_.beta), g = static_cast<T>(p_.gamma);
    switch (op_) {
      case EdgeOp::Neg: map<T>(in, out, [](T v) { return -v; }); break;
      case EdgeOp::Abs: map<T>(in, out, [](T v) { return std::fabs(v); }); break;
      case EdgeOp::Sqrt: map<T>(in, out, [](T v) { return std::sqrt(v); }); break;
      case EdgeOp::Exp: map<T>(in, out, [](T v) { return std::exp(v); }); break;
      case EdgeOp::Log: map<T>(in, out, [](T v) { return std::log(v); }); break;
      case EdgeOp::Reciprocal: map<T>(in, out, [](T v) { return T(1) / v; }); break;
      case EdgeOp::Floor: map<T>(in, out, [](T v) { return std::floor(v); }); break;
      case EdgeOp::Ceil: map<T>(in, out, [](T v) { return std::ceil(v); }); break;
      case EdgeOp::Round: map<T>(in, out, [](T v) { return round_half_even(v); }); break;
      case EdgeOp::Sign: map<T>(in, out, [](T v) { return static_cast<T>((v > 0) - (v < 0)); }); break;
      case EdgeOp::Relu: map<T>(in, out, [](T v) { return v > 0 ? v : T(0); }); break;
      case EdgeOp::Sigmoid:
        map<T>(in, out, [](T v) {
          // Split by sign so exp never overflows.
          if (v >= 0) return T(1) / (T(1) + std::exp(-v));
          const T e = std::exp(v);
          return e / (T(1) + e);
        });
        break;
      case EdgeOp::Tanh: map<T>(in, out, [](T v) { return std::tanh(v); }); break;
      case EdgeOp::Erf: map<T>(in, out, [](T v) { return std::erf(v); }); break;
      case EdgeOp::Gelu: {
        const bool t = p_.tanh_approximation;
        map<T>(in, out, [t](T v) { return gelu(v, t); });
        break;
      }
      case EdgeOp::Softplus:
        map<T>(in, out, [](T v) { return v > 0 ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v)); });
        break;
      case EdgeOp::Softsign: map<T>(in, out, [](T v) { return v / (T(1) + std::fabs(v)); }); break;
      case EdgeOp::Sin: map<T>(in, out, [](T v) { return std::sin(v); }); break;
      case EdgeOp::Cos: map<T>(in, out, [](T v) { return std::cos(v); }); break;
      case EdgeOp::Tan: map<T>(in, out, [](T v) { return std::tan(v); }); break;
      case EdgeOp::Asin: map<T>(in, out, [](T v) { return std::asin(v); }); break;
      case EdgeOp::Acos: map<T>(in, out, [](T v) { return std::acos(v); }); break;
      case EdgeOp::Atan: map<T>(in, out, [](T v) { return std::atan(v); }); break;
      case EdgeOp::Sinh: map<T>(in, out, [](T v) { return std::sinh(v); }); break;
      case EdgeOp::Cosh: map<T>(in, out, [](T v) { return std::cosh(v); }); break;
      case EdgeOp::Asinh: map<T>(in, out, [](T v) { return std::asinh(v); }); break;
      case EdgeOp::Acosh: map<T>(in, out, [](T v) { return std::acosh(v); }); break;
      case EdgeOp::Atanh: map<T>(in, out, [](T v) { return std::atanh(v); }); break;
      case EdgeOp::LeakyRelu: map<T>(in, out, [a](T v) { return v >= 0 ? v : a * v; }); break;
      case EdgeOp::Elu: map<T>(in, out, [a](T v) { return v >= 0 ? v : a * (std::exp(v) - T(1)); }); break;
      case EdgeOp::Selu:
        map<T>(in, out, [a, g](T v) { return v > 0 ? g * v : g * (a * std::exp(v) - a); });
        break;
      case EdgeOp::HardSigmoid:
        map<T>(in, out, [a, b](T v) { return std::fmax(T(0), std::fmin(T(1), a * v + b)); });
        break;
      case EdgeOp::HardSwish:
        map<T>(in, out, [](T v) { return v * std::fmax(T(0), std::fmin(T(1), v / T(6) + T(0.5))); });
        break;
      case EdgeOp::Clip: {
        const T lo = static_cast<T>(p_.min), hi = static_cast<T>(p_.max);
        map<T>(in, out, [lo, hi](T v) { return v < lo ? lo : (v > hi ? hi : v); });
        break;
      }
      default: return fail(Error::Internal, "not a unary op");
    }
    return Status::Ok();
  }

  EdgeOp op_;
  DType dtype_;
  UnaryParams p_;
};

// Integer dtypes are accepted only by ops that are exact on integers.
bool takes_integers(EdgeOp op) {
  return op == EdgeOp::Neg || op == EdgeOp::Abs || op == EdgeOp::Sign || op == EdgeOp::Relu ||
         op == EdgeOp::Clip;
}

Status infer_unary(EdgeOp op, Span<const TensorSpec> in, Span<TensorSpec> out) {
  const DType t = in[0].dtype;
  if (op == EdgeOp::Not) {
    ETC_CHECK_OR_FAIL(t == DType::Bool, Error::InvalidType, "expects bool, got ", dtype_name(t));
  } else if (t != DType::Float32 && t != DType::Float64) {
    ETC_CHECK_OR_FAIL(takes_integers(op) && t != DType::Bool, Error::InvalidType, "does not take ",
                      dtype_name(t));
  }
  out[0] = in[0];
  return Status::Ok();
}

template <EdgeOp kOp>
Status infer_op(const AttrList&, Span<const TensorSpec> in, Span<TensorSpec> out) {
  return infer_unary(kOp, in, out);
}

template <EdgeOp kOp>
Result<std::unique_ptr<Kernel>> create_op(const AttrList& attrs, Span<const TensorSpec> in,
                                          Span<const TensorSpec>) {
  UnaryParams p;
  switch (kOp) {
    case EdgeOp::LeakyRelu: {
      ETC_ASSIGN_OR_RETURN(p.alpha, attrs.get_float("alpha", 0.01f));
      break;
    }
    case EdgeOp::Elu: {
      ETC_ASSIGN_OR_RETURN(p.alpha, attrs.get_float("alpha", 1.0f));
      break;
    }
    case EdgeOp::Gelu: {
      ETC_ASSIGN_OR_RETURN(std::string_view approximate, attrs.get_string("approximate", "none"));
      ETC_CHECK_OR_FAIL(approximate == "none" || approximate == "tanh", Error::InvalidProgram,
                        "gelu approximate must be none or tanh, got ", std::string(approximate));
      p.tanh_approximation = approximate == "tanh";
      break;
    }
    case EdgeOp::Selu: {
      ETC_ASSIGN_OR_RETURN(p.alpha, attrs.get_float("alpha", 1.67326319217681884765625f));
      ETC_ASSIGN_OR_RETURN(p.gamma, attrs.get_float("gamma", 1.05070102214813232421875f));
      break;
    }
    case EdgeOp::HardSigmoid: {
      ETC_ASSIGN_OR_RETURN(p.alpha, attrs.get_float("alpha", 0.2f));
      ETC_ASSIGN_OR_RETURN(p.beta, attrs.get_float("beta", 0.5f));
      break;
    }
    case EdgeOp::Clip: {
      ETC_ASSIGN_OR_RETURN(p.min, attrs.get_float("min", -INFINITY));
      ETC_ASSIGN_OR_RETURN(p.max, attrs.get_float("max", INFINITY));
      break;
    }
    default: break;
  }
  return std::unique_ptr<Kernel>(std::make_unique<UnaryKernel>(kOp, in[0].dtype, p));
}

// ---- cast ----

class CastKernel final : public Kernel {
 public:
  CastKernel(DType from, DType to) : from_(from), to_(to) {}
  Status run(const KernelArgs& args) override {
    const Tensor& in = *args.inputs[0];
    Tensor& out = *args.outputs[0];
    const int64_t n = in.numel();
    return dispatch_all(from_, [&]<typename S>() {
      return dispatch_all(to_, [&]<typename D>() {
        const S* x = in.data_as<const S>();
        D* y = out.data_as<D>();
        for (int64_t i = 0; i < n; ++i) {
          if constexpr (std::is_same_v<D, bool>) {
            y[i] = x[i] != S(0);
          } else if constexpr (std::is_floating_point_v<S> && std::is_integral_v<D>) {
            // Out-of-range float→int is undefined in C++; saturate instead.
            const double v = std::isnan(static_cast<double>(x[i])) ? 0.0 : static_cast<double>(x[i]);
            const double lo = static_cast<double>(std::numeric_limits<D>::lowest());
            const double hi = static_cast<double>(std::numeric_limits<D>::max());
            y[i] = v <= lo ? std::numeric_limits<D>::lowest()
                           : (v >= hi ? std::numeric_limits<D>::max() : static_cast<D>(v));
          } else {
            y[i] = static_cast<D>(x[i]);
          }
        }
        return Status::Ok();
      });
    });
  }

 private:
  DType from_, to_;
};

Status infer_cast(const AttrList& attrs, Span<const TensorSpec> in, Span<TensorSpec> out) {
  ETC_ASSIGN_OR_RETURN(int64_t to, attrs.get_int("to"));
  const DType t = static_cast<DType>(to);
  ETC_CHECK_OR_FAIL(to > 0 && to < 256 && dtype_valid(t), Error::InvalidProgram, "invalid target dtype ",
                    std::to_string(to));
  out[0] = TensorSpec{t, in[0].shape};
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> create_cast(const AttrList&, Span<const TensorSpec> in,
                                            Span<const TensorSpec> out) {
  return std::unique_ptr<Kernel>(std::make_unique<CastKernel>(in[0].dtype, out[0].dtype));
}

template <EdgeOp kOp>
constexpr OpDef unary_def() {
  return OpDef{kOp, 1, 1, 1, 1, infer_op<kOp>, create_op<kOp>};
}

}  // namespace

const OpDef* unary_op_def(EdgeOp op) {
  static const OpDef kDefs[] = {
      unary_def<EdgeOp::Neg>(),         unary_def<EdgeOp::Abs>(),
      unary_def<EdgeOp::Sqrt>(),        unary_def<EdgeOp::Exp>(),
      unary_def<EdgeOp::Log>(),         unary_def<EdgeOp::Reciprocal>(),
      unary_def<EdgeOp::Floor>(),       unary_def<EdgeOp::Ceil>(),
      unary_def<EdgeOp::Round>(),       unary_def<EdgeOp::Sign>(),
      unary_def<EdgeOp::Relu>(),        unary_def<EdgeOp::Sigmoid>(),
      unary_def<EdgeOp::Tanh>(),        unary_def<EdgeOp::Erf>(),
      unary_def<EdgeOp::Gelu>(),        unary_def<EdgeOp::Softplus>(),
      unary_def<EdgeOp::Softsign>(),    unary_def<EdgeOp::Sin>(),
      unary_def<EdgeOp::Cos>(),         unary_def<EdgeOp::Tan>(),
      unary_def<EdgeOp::Asin>(),        unary_def<EdgeOp::Acos>(),
      unary_def<EdgeOp::Atan>(),        unary_def<EdgeOp::Sinh>(),
      unary_def<EdgeOp::Cosh>(),        unary_def<EdgeOp::Asinh>(),
      unary_def<EdgeOp::Acosh>(),       unary_def<EdgeOp::Atanh>(),
      unary_def<EdgeOp::Not>(),         unary_def<EdgeOp::LeakyRelu>(),
      unary_def<EdgeOp::Elu>(),         unary_def<EdgeOp::Selu>(),
      unary_def<EdgeOp::HardSigmoid>(), unary_def<EdgeOp::HardSwish>(),
      unary_def<EdgeOp::Clip>(),        OpDef{EdgeOp::Cast, 1, 1, 1, 1, infer_cast, create_cast},
  };
  for (const OpDef& d : kDefs)
    if (d.op == op) return &d;
  return nullptr;
}

}  // namespace etc
