// Normalization: batch_norm (inference), instance_norm and layer_norm.
// Statistics accumulate in double so float32 inputs with a large mean keep
// their precision.
#include <cmath>
#include <string>

#include "runtime/kernels/kernel.h"
#include "runtime/kernels/portable/dispatch.h"

namespace etc {
namespace {

Status check_float(DType t, const char* what) {
  ETC_CHECK_OR_FAIL(t == DType::Float32 || t == DType::Float64, Error::InvalidType, what,
                    " must be float32 or float64, got ", dtype_name(t));
  return Status::Ok();
}

// ---- batch_norm ----

// x seen as [n, c, s]; c is scale's length: x's dim 1, or (the pre-opset-9
// spatial=0 layout) every dim after the batch.
struct BatchNormShape {
  int64_t n = 1, c = 1, s = 1;
};

Result<BatchNormShape> batch_norm_shape(Span<const TensorSpec> in) {
  const Shape& x = in[0].shape;
  ETC_TRY(check_min_rank(x, 2, "input"));
  ETC_TRY(check_float(in[0].dtype, "input"));
  BatchNormShape r;
  r.n = x[0];
  const int64_t features = x.numel() / (x[0] == 0 ? 1 : x[0]);
  r.c = in[1].shape.numel();
  for (int i = 1; i < 5; ++i) {
    ETC_CHECK_OR_FAIL(in[i].dtype == in[0].dtype, Error::InvalidType, "input ", std::to_string(i),
                      " has dtype ", dtype_name(in[i].dtype), ", expected ", dtype_name(in[0].dtype));
    ETC_CHECK_OR_FAIL(in[i].shape.numel() == r.c, Error::InvalidShape, "input ", std::to_string(i),
                      " has shape ", in[i].shape.str(), ", scale has ", in[1].shape.str());
  }
  ETC_CHECK_OR_FAIL(r.c == x[1] || (x[0] != 0 && r.c == features), Error::InvalidShape, "scale shape ",
                    in[1].shape.str(), " does not match the channels of ", x.str());
  r.s = r.c == x[1] ? features / (x[1] == 0 ? 1 : x[1]) : 1;
  return r;
}

class BatchNormKernel final : public Kernel {
 public:
  BatchNormKernel(DType dtype, BatchNormShape s, float eps) : dtype_(dtype), s_(s), eps_(eps) {}

  Status run(const KernelArgs& args) override {
    return dispatch_float(dtype_, [&]<typename T>() {
      const T* x = args.inputs[0]->data_as<const T>();
      const T* scale = args.inputs[1]->data_as<const T>();
      const T* bias = args.inputs[2]->data_as<const T>();
      const T* mean = args.inputs[3]->data_as<const T>();
      const T* var = args.inputs[4]->data_as<const T>();
      T* y = args.outputs[0]->data_as<T>();
      for (int64_t n = 0; n < s_.n; ++n) {
        for (int64_t c = 0; c < s_.c; ++c, x += s_.s, y += s_.s) {
          // y = x * a + b with the statistics folded into one scale and shift.
          const T a = static_cast<T>(scale[c] / std::sqrt(static_cast<double>(var[c]) + eps_));
          const T b = bias[c] - mean[c] * a;
          for (int64_t i = 0; i < s_.s; ++i) y[i] = x[i] * a + b;
        }
      }
      return Status::Ok();
    });
  }

 private:
  DType dtype_;
  BatchNormShape s_;
  double eps_;
};

Status infer_batch_norm(const AttrList&, Span<const TensorSpec> in, Span<TensorSpec> out) {
  ETC_TRY(batch_norm_shape(in));
  out[0] = in[0];
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> create_batch_norm(const AttrList& attrs, Span<const TensorSpec> in,
                                                  Span<const TensorSpec>) {
  ETC_ASSIGN_OR_RETURN(BatchNormShape s, batch_norm_shape(in));
  ETC_ASSIGN_OR_RETURN(float eps, attrs.get_float("epsilon", 1e-5f));
  return std::unique_ptr<Kernel>(std::make_unique<BatchNormKernel>(in[0].dtype, s, eps));
}

// ---- instance_norm ----

// Mean and 1/sqrt(var + eps) of n contiguous values (two passes: the centred
// second pass does not cancel catastrophically).
template <typename T>
void moments(const T* x, int64_t n, double eps, double& mean, double& inv_std) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += x[i];
  mean = n > 0 ? sum / static_cast<double>(n) : 0.0;
  double sq = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = x[i] - mean;
    sq += d * d;
  }
  inv_std = 1.0 / std::sqrt((n > 0 ? sq / static_cast<double>(n) : 0.0) + eps);
}

class InstanceNormKernel final : public Kernel {
 public:
  InstanceNormKernel(DType dtype, int64_t n, int64_t c, int64_t s, float eps)
      : dtype_(dtype), n_(n), c_(c), s_(s), eps_(eps) {}

  Status run(const KernelArgs& args) override {
    return dispatch_float(dtype_, [&]<typename T>() {
      const T* x = args.inputs[0]->data_as<const T>();
      const T* scale = args.inputs[1]->data_as<const T>();
      const T* bias = args.inputs[2]->data_as<const T>();
      T* y = args.outputs[0]->data_as<T>();
      for (int64_t n = 0; n < n_; ++n) {
        for (int64_t c = 0; c < c_; ++c, x += s_, y += s_) {
          double mean = 0, inv_std = 0;
          moments(x, s_, eps_, mean, inv_std);
          const T a = static_cast<T>(scale[c] * inv_std);
          const T b = static_cast<T>(bias[c] - mean * scale[c] * inv_std);
          for (int64_t i = 0; i < s_; ++i) y[i] = x[i] * a + b;
        }
      }
      return Status::Ok();
    });
  }

 private:
  DType dtype_;
  int64_t n_, c_, s_;
  double eps_;
};

Status infer_instance_norm(const AttrList&, Span<const TensorSpec> in, Span<TensorSpec> out) {
  const Shape& x = in[0].shape;
  ETC_TRY(check_float(in[0].dtype, "input"));
  ETC_TRY(check_min_rank(x, 2, "input"));
  for (int i = 1; i < 3; ++i) {
    ETC_CHECK_OR_FAIL(in[i].dtype == in[0].dtype, Error::InvalidType, "input ", std::to_string(i),
                      " has dtype ", dtype_name(in[i].dtype), ", expected ", dtype_name(in[0].dtype));
    ETC_CHECK_OR_FAIL(in[i].shape.rank() == 1 && in[i].shape[0] == x[1], Error::InvalidShape, "input ",
                      std::to_string(i), " must have shape [", std::to_string(x[1]), "], got ",
                      in[i].shape.str());
  }
  out[0] = in[0];
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> create_instance_norm(const AttrList& attrs, Span<const TensorSpec> in,
                                                     Span<const TensorSpec>) {
  ETC_ASSIGN_OR_RETURN(float eps, attrs.get_float("epsilon", 1e-5f));
  const Shape& x = in[0].shape;
  const int64_t s = x[0] * x[1] == 0 ? 0 : x.numel() / (x[0] * x[1]);
  return std::unique_ptr<Kernel>(std::make_unique<InstanceNormKernel>(in[0].dtype, x[0], x[1], s, eps));
}

// ---- layer_norm ----

// x seen as [outer, inner] at the axis. scale and bias cover the normalized
// dims, or a suffix of them (they then repeat with their own period).
struct LayerNormShape {
  int64_t outer = 1, inner = 1;
  int64_t scale_period = 1, bias_period = 1;
};

// Period of a scale/bias operand: its element count when its shape (leading 1s
// dropped) is a suffix of the normalized shape.
Result<int64_t> layer_norm_period(const Shape& x, int64_t axis, const TensorSpec& p, const char* what) {
  int lead = 0;
  while (lead < p.shape.rank() && p.shape[lead] == 1) ++lead;
  const int len = p.shape.rank() - lead;
  bool ok = len <= x.rank() - axis;
  for (int i = 0; ok && i < len; ++i) ok = p.shape[lead + i] == x[x.rank() - len + i];
  ETC_CHECK_OR_FAIL(ok, Error::InvalidShape, what, " shape ", p.shape.str(),
                    " does not match the normalized dims of ", x.str(), " from axis ", std::to_string(axis));
  return p.shape.numel();
}

Result<LayerNormShape> layer_norm_shape(const AttrList& attrs, Span<const TensorSpec> in) {
  const Shape& x = in[0].shape;
  ETC_TRY(check_float(in[0].dtype, "input"));
  ETC_ASSIGN_OR_RETURN(int64_t axis, attrs.get_int("axis"));
  ETC_CHECK_OR_FAIL(axis >= 0 && axis < x.rank(), Error::InvalidProgram, "axis ", std::to_string(axis),
                    " out of range for rank ", std::to_string(x.rank()));
  LayerNormShape r;
  for (int d = 0; d < x.rank(); ++d) (d < axis ? r.outer : r.inner) *= x[d];
  for (size_t i = 1; i < in.size(); ++i) {
    if (in[i].dtype == DType::Invalid) continue;  // no bias
    ETC_CHECK_OR_FAIL(in[i].dtype == in[0].dtype, Error::InvalidType, "input ", std::to_string(i),
                      " has dtype ", dtype_name(in[i].dtype), ", expected ", dtype_name(in[0].dtype));
    ETC_ASSIGN_OR_RETURN(int64_t period, layer_norm_period(x, axis, in[i], i == 1 ? "scale" : "bias"));
    (i == 1 ? r.scale_period : r.bias_period) = period;
  }
  return r;
}

class LayerNormKernel final : public Kernel {
 public:
  LayerNormKernel(DType dtype, LayerNormShape s, float eps) : dtype_(dtype), s_(s), eps_(eps) {}

  Status run(const KernelArgs& args) override {
    return dispatch_float(dtype_, [&]<typename T>() {
      const T* x = args.inputs[0]->data_as<const T>();
      const T* scale = args.inputs[1]->data_as<const T>();
      const Tensor* bias = args.inputs.size() > 2 && args.inputs[2]->present() ? args.inputs[2] : nullptr;
      T* y = args.outputs[0]->data_as<T>();
      // Mean and InvStdDev are float32 whatever the input type (ONNX type U).
      float* mean_out = args.outputs.size() > 1 ? args.outputs[1]->data_as<float>() : nullptr;
      float* inv_out = args.outputs.size() > 2 ? args.outputs[2]->data_as<float>() : nullptr;
      const int64_t inner = s_.inner;
      for (int64_t o = 0; o < s_.outer; ++o, x += inner, y += inner) {
        double mean = 0, inv_std = 0;
        moments(x, inner, eps_, mean, inv_std);
        if (mean_out) mean_out[o] = static_cast<float>(mean);
        if (inv_out) inv_out[o] = static_cast<float>(inv_std);
        const T m = static_cast<T>(mean), is = static_cast<T>(inv_std);
        for (int64_t j = 0; j < inner; j += s_.scale_period)
          for (int64_t p = 0; p < s_.scale_period; ++p) y[j + p] = (x[j + p] - m) * is * scale[p];
        if (!bias) continue;
        const T* b = bias->data_as<const T>();
        for (int64_t j = 0; j < inner; j += s_.bias_period)
          for (int64_t p = 0; p < s_.bias_period; ++p) y[j + p] += b[p];
      }
      return Status::Ok();
    });
  }

 private:
  DType dtype_;
  LayerNormShape s_;
  double eps_;
};

Status infer_layer_norm(const AttrList& attrs, Span<const TensorSpec> in, Span<TensorSpec> out) {
  ETC_TRY(layer_norm_shape(attrs, in));
  ETC_ASSIGN_OR_RETURN(int64_t axis, attrs.get_int("axis"));
  out[0] = in[0];
  // Statistics keep the reduced dims as 1s.
  Shape stats = in[0].shape;
  for (int d = static_cast<int>(axis); d < stats.rank(); ++d) stats[d] = 1;
  for (size_t i = 1; i < out.size(); ++i) out[i] = TensorSpec{DType::Float32, stats};
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> create_layer_norm(const AttrList& attrs, Span<const TensorSpec> in,
                                                  Span<const TensorSpec>) {
  ETC_ASSIGN_OR_RETURN(LayerNormShape s, layer_norm_shape(attrs, in));
  ETC_ASSIGN_OR_RETURN(float eps, attrs.get_float("epsilon", 1e-5f));
  return std::unique_ptr<Kernel>(std::make_unique<LayerNormKernel>(in[0].dtype, s, eps));
}

}  // namespace

const OpDef* norm_op_def(EdgeOp op) {
  static const OpDef kDefs[] = {
      OpDef{EdgeOp::BatchNorm, 5, 5, 1, 1, infer_batch_norm, create_batch_norm},
      OpDef{EdgeOp::InstanceNorm, 3, 3, 1, 1, infer_instance_norm, create_instance_norm},
      OpDef{EdgeOp::LayerNorm, 2, 3, 1, 3, infer_layer_norm, create_layer_norm},
  };
  for (const OpDef& d : kDefs)
    if (d.op == op) return &d;
  return nullptr;
}

}  // namespace etc
