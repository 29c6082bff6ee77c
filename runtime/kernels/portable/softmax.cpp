// softmax and log_softmax over one axis, or (flatten=1, the ONNX semantics
// before opset 13) over all dims from the axis on.
#include <cmath>
#include <string>

#include "runtime/kernels/kernel.h"
#include "runtime/kernels/portable/dispatch.h"

namespace etc {
namespace {

// The input as [outer, n, inner]; the normalization runs along n.
struct SoftmaxShape {
  int64_t outer = 1, n = 1, inner = 1;
};

template <bool kLog>
class SoftmaxKernel final : public Kernel {
 public:
  SoftmaxKernel(DType dtype, SoftmaxShape s) : dtype_(dtype), s_(s) {}

  // Column max and sum (in double, for both dtypes) when the axis is not innermost.
  size_t scratch_bytes() const override {
    return s_.inner == 1 ? 0 : static_cast<size_t>(2 * s_.inner) * sizeof(double);
  }

  Status run(const KernelArgs& args) override {
    return dispatch_float(dtype_, [&]<typename T>() {
      const T* x = args.inputs[0]->data_as<const T>();
      T* y = args.outputs[0]->data_as<T>();
      const int64_t block = s_.n * s_.inner;
      for (int64_t o = 0; o < s_.outer; ++o) {
        if (s_.inner == 1) {
          row<T>(x + o * block, y + o * block);
        } else {
          double* scratch = static_cast<double*>(args.scratch);
          columns<T>(x + o * block, y + o * block, scratch, scratch + s_.inner);
        }
      }
      return Status::Ok();
    });
  }

 private:
  // One contiguous row; the max is subtracted so exp never overflows.
  template <typename T>
  void row(const T* x, T* y) const {
    const int64_t n = s_.n;
    T m = x[0];
    for (int64_t k = 1; k < n; ++k) m = x[k] > m ? x[k] : m;
    double sum = 0;  // in double: a long row's float running sum drifts
    for (int64_t k = 0; k < n; ++k) {
      const T e = std::exp(x[k] - m);
      sum += e;
      if constexpr (!kLog) y[k] = e;
    }
    if constexpr (kLog) {
      // (x - max) - log(sum), not x - (max + log(sum)): the latter loses the
      // small log term against a large max.
      const T lse = static_cast<T>(std::log(sum));
      for (int64_t k = 0; k < n; ++k) y[k] = (x[k] - m) - lse;
    } else {
      const T inv = static_cast<T>(1.0 / sum);
      for (int64_t k = 0; k < n; ++k) y[k] *= inv;
    }
  }

  // inner columns of stride inner at once, so every pass reads contiguous rows.
  template <typename T>
  void columns(const T* x, T* y, double* max, double* sum) const {
    const int64_t n = s_.n, inner = s_.inner;
    for (int64_t i = 0; i < inner; ++i) {
      max[i] = x[i];
      sum[i] = 0;
    }
    for (int64_t k = 1; k < n; ++k)
      for (int64_t i = 0; i < inner; ++i) max[i] = x[k * inner + i] > max[i] ? x[k * inner + i] : max[i];
    for (int64_t k = 0; k < n; ++k) {
      for (int64_t i = 0; i < inner; ++i) {
        const T e = std::exp(x[k * inner + i] - static_cast<T>(max[i]));
        sum[i] += e;
        if constexpr (!kLog) y[k * inner + i] = e;
      }
    }
    if constexpr (kLog) {
      for (int64_t i = 0; i < inner; ++i) sum[i] = std::log(sum[i]);
      for (int64_t k = 0; k < n; ++k)
        for (int64_t i = 0; i < inner; ++i)
          y[k * inner + i] = static_cast<T>((x[k * inner + i] - max[i]) - sum[i]);
    } else {
      for (int64_t i = 0; i < inner; ++i) sum[i] = 1.0 / sum[i];
      for (int64_t k = 0; k < n; ++k)
        for (int64_t i = 0; i < inner; ++i) y[k * inner + i] *= static_cast<T>(sum[i]);
    }
  }

  DType dtype_;
  SoftmaxShape s_;
};

Result<SoftmaxShape> softmax_shape(const AttrList& attrs, const Shape& s) {
  ETC_ASSIGN_OR_RETURN(int64_t axis, attrs.get_int("axis"));
  ETC_ASSIGN_OR_RETURN(int64_t flatten, attrs.get_int("flatten", 0));
  ETC_CHECK_OR_FAIL(axis >= 0 && axis < s.rank(), Error::InvalidProgram, "axis ", std::to_string(axis),
                    " out of range for rank ", std::to_string(s.rank()));
  SoftmaxShape r;
  for (int d = 0; d < s.rank(); ++d) {
    if (d < axis)
      r.outer *= s[d];
    else if (d == axis || flatten != 0)
      r.n *= s[d];
    else
      r.inner *= s[d];
  }
  if (r.n == 0) r.outer = 0;  // nothing to normalize
  return r;
}

Status infer_softmax(const AttrList& attrs, Span<const TensorSpec> in, Span<TensorSpec> out) {
  const DType t = in[0].dtype;
  ETC_CHECK_OR_FAIL(t == DType::Float32 || t == DType::Float64, Error::InvalidType,
                    "expects float32 or float64, got ", dtype_name(t));
  ETC_TRY(softmax_shape(attrs, in[0].shape));
  out[0] = in[0];
  return Status::Ok();
}

template <bool kLog>
Result<std::unique_ptr<Kernel>> create_softmax(const AttrList& attrs, Span<const TensorSpec> in,
                                               Span<const TensorSpec>) {
  ETC_ASSIGN_OR_RETURN(SoftmaxShape s, softmax_shape(attrs, in[0].shape));
  return std::unique_ptr<Kernel>(std::make_unique<SoftmaxKernel<kLog>>(in[0].dtype, s));
}

}  // namespace

const OpDef* softmax_op_def(EdgeOp op) {
  static const OpDef kDefs[] = {
      OpDef{EdgeOp::Softmax, 1, 1, 1, 1, infer_softmax, create_softmax<false>},
      OpDef{EdgeOp::LogSoftmax, 1, 1, 1, 1, infer_softmax, create_softmax<true>},
  };
  for (const OpDef& d : kDefs)
    if (d.op == op) return &d;
  return nullptr;
}

}  // namespace etc
