// Range with start, limit and delta read at run time (the importer folds the
// constant case). The output length is declared; run() checks that
// max(ceil((limit - start) / delta), 0) gives it, then fills start + i * delta
// in the inputs' type (integers with exact integer arithmetic).
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/kernels/portable/shape_ops.h"
#include "runtime/kernels/portable/wrapping.h"

namespace etc::shape_ops {
namespace {

template <typename T>
int64_t range_length(T start, T limit, T delta) {
  if constexpr (std::is_integral_v<T>) {
    const int64_t span = static_cast<int64_t>(limit) - static_cast<int64_t>(start);
    const int64_t d = delta;
    return span / d + ((span % d != 0 && ((span < 0) == (d < 0))) ? 1 : 0);
  } else {
    const double n = std::ceil((static_cast<double>(limit) - start) / delta);
    // Saturate so a NaN or huge count compares unequal without overflow.
    return n >= 0 && n < 9.0e18 ? static_cast<int64_t>(n) : (n < 0 ? 0 : -1);
  }
}

template <typename T>
Status run_range(const KernelArgs& args, int64_t n) {
  const T start = *args.inputs[0]->data_as<const T>();
  const T limit = *args.inputs[1]->data_as<const T>();
  const T delta = *args.inputs[2]->data_as<const T>();
  const auto str = [](T v) { return std::to_string(v); };
  ETC_CHECK_OR_FAIL(delta != T(0), Error::InvalidArgument, "range: run-time delta is 0");
  const int64_t got = std::max<int64_t>(range_length<T>(start, limit, delta), 0);
  ETC_CHECK_OR_FAIL(got == n, Error::InvalidArgument, "range: run-time start ", str(start), ", limit ",
                    str(limit), ", delta ", str(delta), " give ", std::to_string(got),
                    " elements; the declared output shape is [", std::to_string(n), "]");
  T* out = args.outputs[0]->data_as<T>();
  for (int64_t i = 0; i < n; ++i) out[i] = wrap_add(start, wrap_mul(static_cast<T>(i), delta));
  return Status::Ok();
}

class RangeKernel final : public Kernel {
 public:
  RangeKernel(DType dtype, int64_t n) : dtype_(dtype), n_(n) {}
  Status run(const KernelArgs& args) override {
    switch (dtype_) {
      case DType::Float32: return run_range<float>(args, n_);
      case DType::Float64: return run_range<double>(args, n_);
      case DType::Int32: return run_range<int32_t>(args, n_);
      default: return run_range<int64_t>(args, n_);
    }
  }

 private:
  DType dtype_;
  int64_t n_;
};

}  // namespace

Status infer_range(const AttrList& attrs, Span<const TensorSpec> in, Span<TensorSpec> out) {
  const DType t = in[0].dtype;
  ETC_CHECK_OR_FAIL(t == DType::Float32 || t == DType::Float64 || t == DType::Int32 || t == DType::Int64,
                    Error::InvalidType, "start must be float32, float64, int32 or int64, got ",
                    dtype_name(t));
  for (int i = 0; i < 3; ++i) {
    ETC_CHECK_OR_FAIL(in[i].dtype == t, Error::InvalidType, "start, limit and delta have different types");
    ETC_CHECK_OR_FAIL(in[i].shape.rank() <= 1 && in[i].shape.numel() == 1, Error::InvalidShape,
                      "start, limit and delta must hold one element, got ", in[i].shape.str());
  }
  ETC_ASSIGN_OR_RETURN(std::vector<int64_t> dims, attrs.get_ints("shape"));
  ETC_CHECK_OR_FAIL(dims.size() == 1 && dims[0] >= 0, Error::InvalidShape, "shape must be [n] with n >= 0");
  out[0] = TensorSpec{t, Shape{dims[0]}};
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> create_range(const AttrList&, Span<const TensorSpec> in,
                                             Span<const TensorSpec> out) {
  return std::unique_ptr<Kernel>(std::make_unique<RangeKernel>(in[0].dtype, out[0].shape[0]));
}

}  // namespace etc::shape_ops
