// Index and scan ops: top_k, cum_sum, trilu (einsum lives in index_einsum.cpp, the
// indexed gathers and scatters in index_scatter.cpp).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>

#include "runtime/kernels/kernel.h"
#include "runtime/kernels/portable/dispatch.h"
#include "runtime/kernels/portable/index_einsum.h"
#include "runtime/kernels/portable/index_scatter.h"
#include "runtime/kernels/portable/wrapping.h"

namespace etc {
namespace {

// The input as [outer, n, inner] around one axis.
struct AxisShape {
  int64_t outer = 1, n = 1, inner = 1;
};

AxisShape split_at(const Shape& s, int64_t axis) {
  AxisShape r;
  for (int d = 0; d < s.rank(); ++d) {
    if (d < axis)
      r.outer *= s[d];
    else if (d == axis)
      r.n = s[d];
    else
      r.inner *= s[d];
  }
  return r;
}

Status check_axis(int64_t axis, const Shape& s) {
  ETC_CHECK_OR_FAIL(axis >= 0 && axis < s.rank(), Error::InvalidProgram, "axis ", std::to_string(axis),
                    " out of range for rank ", std::to_string(s.rank()));
  return Status::Ok();
}

// ---- top_k ----

// Orders indices by value (largest or smallest first); ties go to the lower
// index, and NaN ranks above every number, as in numpy and ONNX Runtime. A
// strict weak order, so std::partial_sort is well defined even with NaN.
template <typename T, bool kLargest>
struct TopKBefore {
  const T* x;
  int64_t stride;
  bool operator()(int64_t a, int64_t b) const {
    const T va = x[a * stride], vb = x[b * stride];
    if constexpr (std::is_floating_point_v<T>) {
      const bool na = std::isnan(va), nb = std::isnan(vb);
      if (na || nb) return na != nb ? (kLargest ? na : nb) : a < b;
    }
    if (va != vb) return kLargest ? va > vb : va < vb;
    return a < b;
  }
};

// k is an attribute; when the model computes it, it is also an int64 input
// that each run checks against that static k (the declared output dim).
class TopKKernel final : public Kernel {
 public:
  TopKKernel(DType dtype, AxisShape s, int64_t k, bool largest, const Shape& out)
      : dtype_(dtype), s_(s), k_(k), largest_(largest), out_(out) {}

  size_t scratch_bytes() const override { return static_cast<size_t>(s_.n) * sizeof(int64_t); }

  Status run(const KernelArgs& args) override {
    if (args.inputs.size() > 1 && args.inputs[1]->present()) {
      const int64_t k = args.inputs[1]->data_as<const int64_t>()[0];
      ETC_CHECK_OR_FAIL(k == k_, Error::InvalidArgument, "top_k: k = ", std::to_string(k),
                        ", but the program was compiled for k = ", std::to_string(k_),
                        " (declared output shape ", out_.str(), ")");
    }
    return dispatch_arith(dtype_, [&]<typename T>() {
      if (largest_)
        run_typed<T, true>(args);
      else
        run_typed<T, false>(args);
      return Status::Ok();
    });
  }

 private:
  template <typename T, bool kLargest>
  void run_typed(const KernelArgs& args) const {
    const T* x = args.inputs[0]->data_as<const T>();
    T* values = args.outputs[0]->data_as<T>();
    int64_t* indices = args.outputs[1]->data_as<int64_t>();
    int64_t* order = static_cast<int64_t*>(args.scratch);
    const int64_t n = s_.n, inner = s_.inner, k = k_;
    for (int64_t o = 0; o < s_.outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const T* col = x + o * n * inner + i;
        for (int64_t j = 0; j < n; ++j) order[j] = j;
        std::partial_sort(order, order + k, order + n, TopKBefore<T, kLargest>{col, inner});
        const int64_t out = o * k * inner + i;
        for (int64_t j = 0; j < k; ++j) {
          values[out + j * inner] = col[order[j] * inner];
          indices[out + j * inner] = order[j];
        }
      }
    }
  }

  DType dtype_;
  AxisShape s_;
  int64_t k_;
  bool largest_;
  Shape out_;
};

Status infer_top_k(const AttrList& attrs, Span<const TensorSpec> in, Span<TensorSpec> out) {
  const DType t = in[0].dtype;
  ETC_CHECK_OR_FAIL(t != DType::Bool, Error::InvalidType, "does not take bool");
  ETC_ASSIGN_OR_RETURN(int64_t axis, attrs.get_int("axis"));
  ETC_ASSIGN_OR_RETURN(int64_t k, attrs.get_int("k"));
  ETC_TRY(check_axis(axis, in[0].shape));
  if (in.size() > 1 && in[1].dtype != DType::Invalid)
    ETC_CHECK_OR_FAIL(in[1].dtype == DType::Int64 && in[1].shape.numel() == 1 && in[1].shape.rank() <= 1,
                      Error::InvalidType, "k input must be one int64, got ", dtype_name(in[1].dtype), " ",
                      in[1].shape.str());
  const int64_t n = in[0].shape[static_cast<int>(axis)];
  ETC_CHECK_OR_FAIL(k >= 0 && k <= n, Error::InvalidShape, "k=", std::to_string(k), " is outside [0, ",
                    std::to_string(n), "]");
  Shape s = in[0].shape;
  s[static_cast<int>(axis)] = k;
  out[0] = TensorSpec{t, s};
  out[1] = TensorSpec{DType::Int64, s};
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> create_top_k(const AttrList& attrs, Span<const TensorSpec> in,
                                             Span<const TensorSpec> out) {
  ETC_ASSIGN_OR_RETURN(int64_t axis, attrs.get_int("axis"));
  ETC_ASSIGN_OR_RETURN(int64_t k, attrs.get_int("k"));
  ETC_ASSIGN_OR_RETURN(int64_t largest, attrs.get_int("largest", 1));
  return std::unique_ptr<Kernel>(
      std::make_unique<TopKKernel>(in[0].dtype, split_at(in[0].shape, axis), k, largest != 0, out[0].shape));
}

// ---- cum_sum ----

// The axis is an attribute, or (when the model computes it) an int scalar
// input read at run time; the output shape does not depend on it.
class CumSumKernel final : public Kernel {
 public:
  CumSumKernel(DType dtype, int64_t axis, bool exclusive, bool reverse)
      : dtype_(dtype), axis_(axis), exclusive_(exclusive), reverse_(reverse) {}

  Status run(const KernelArgs& args) override {
    const Tensor& x = *args.inputs[0];
    int64_t axis = axis_;
    if (args.inputs.size() > 1 && args.inputs[1]->present()) {
      const Tensor& a = *args.inputs[1];
      axis = a.dtype() == DType::Int32 ? a.data_as<const int32_t>()[0] : a.data_as<const int64_t>()[0];
      if (axis < 0) axis += x.rank();
      ETC_TRY(check_axis(axis, x.shape()));
    }
    const AxisShape s = split_at(x.shape(), axis);
    return dispatch_arith(dtype_, [&]<typename T>() {
      scan<T>(x.data_as<const T>(), args.outputs[0]->data_as<T>(), s);
      return Status::Ok();
    });
  }

 private:
  // Rows along the axis are `inner` apart; each step adds a whole contiguous row.
  template <typename T>
  void scan(const T* x, T* y, const AxisShape& s) const {
    const int64_t n = s.n, inner = s.inner;
    const int64_t step = reverse_ ? -inner : inner;
    for (int64_t o = 0; o < s.outer; ++o) {
      const int64_t first = o * n * inner + (reverse_ ? (n - 1) * inner : 0);
      for (int64_t k = 0; k < n; ++k) {
        T* yk = y + first + k * step;
        const T* xk = x + first + k * step;
        if (k == 0) {
          for (int64_t i = 0; i < inner; ++i) yk[i] = exclusive_ ? T(0) : xk[i];
          continue;
        }
        const T* prev_y = yk - step;
        const T* add = exclusive_ ? xk - step : xk;
        for (int64_t i = 0; i < inner; ++i) yk[i] = wrap_add(prev_y[i], add[i]);
      }
    }
  }

  DType dtype_;
  int64_t axis_;
  bool exclusive_, reverse_;
};

Status infer_cum_sum(const AttrList& attrs, Span<const TensorSpec> in, Span<TensorSpec> out) {
  ETC_CHECK_OR_FAIL(in[0].dtype != DType::Bool, Error::InvalidType, "does not take bool");
  if (in.size() > 1 && in[1].dtype != DType::Invalid) {
    ETC_CHECK_OR_FAIL(
        (in[1].dtype == DType::Int32 || in[1].dtype == DType::Int64) && in[1].shape.numel() == 1,
        Error::InvalidType, "axis input must be one int32 or int64, got ", dtype_name(in[1].dtype), " ",
        in[1].shape.str());
    ETC_CHECK_OR_FAIL(in[0].shape.rank() > 0, Error::InvalidShape, "input must have rank >= 1");
  } else {
    ETC_ASSIGN_OR_RETURN(int64_t axis, attrs.get_int("axis"));
    ETC_TRY(check_axis(axis, in[0].shape));
  }
  out[0] = in[0];
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> create_cum_sum(const AttrList& attrs, Span<const TensorSpec> in,
                                               Span<const TensorSpec>) {
  ETC_ASSIGN_OR_RETURN(int64_t axis, attrs.get_int("axis", 0));
  ETC_ASSIGN_OR_RETURN(int64_t exclusive, attrs.get_int("exclusive", 0));
  ETC_ASSIGN_OR_RETURN(int64_t reverse, attrs.get_int("reverse", 0));
  return std::unique_ptr<Kernel>(
      std::make_unique<CumSumKernel>(in[0].dtype, axis, exclusive != 0, reverse != 0));
}

// ---- trilu ----

// Works on bytes: every dtype's zero is all-zero bytes. k is an attribute or
// an int64 scalar input read at run time.
class TriluKernel final : public Kernel {
 public:
  TriluKernel(size_t elem, int64_t rows, int64_t cols, int64_t k, bool upper)
      : elem_(elem), rows_(rows), cols_(cols), k_(k), upper_(upper) {}

  Status run(const KernelArgs& args) override {
    const Tensor& x = *args.inputs[0];
    int64_t k = k_;
    if (args.inputs.size() > 1 && args.inputs[1]->present()) k = args.inputs[1]->data_as<const int64_t>()[0];
    const auto* src = static_cast<const uint8_t*>(x.data);
    auto* dst = static_cast<uint8_t*>(args.outputs[0]->data);
    const int64_t matrices = rows_ * cols_ == 0 ? 0 : x.numel() / (rows_ * cols_);
    const size_t row_bytes = static_cast<size_t>(cols_) * elem_;
    for (int64_t m = 0; m < matrices; ++m) {
      for (int64_t i = 0; i < rows_; ++i, src += row_bytes, dst += row_bytes) {
        // Kept columns: j >= i + k (upper) or j <= i + k (lower).
        const int64_t edge = std::clamp<int64_t>(upper_ ? i + k : i + k + 1, 0, cols_);
        const size_t cut = static_cast<size_t>(edge) * elem_;
        if (upper_) {
          std::memset(dst, 0, cut);
          std::memcpy(dst + cut, src + cut, row_bytes - cut);
        } else {
          std::memcpy(dst, src, cut);
          std::memset(dst + cut, 0, row_bytes - cut);
        }
      }
    }
    return Status::Ok();
  }

 private:
  size_t elem_;
  int64_t rows_, cols_, k_;
  bool upper_;
};

Status infer_trilu(const AttrList&, Span<const TensorSpec> in, Span<TensorSpec> out) {
  ETC_TRY(check_min_rank(in[0].shape, 2, "input"));
  if (in.size() > 1 && in[1].dtype != DType::Invalid)
    ETC_CHECK_OR_FAIL(in[1].dtype == DType::Int64 && in[1].shape.numel() == 1, Error::InvalidType,
                      "k input must be one int64, got ", dtype_name(in[1].dtype), " ", in[1].shape.str());
  out[0] = in[0];
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> create_trilu(const AttrList& attrs, Span<const TensorSpec> in,
                                             Span<const TensorSpec>) {
  ETC_ASSIGN_OR_RETURN(int64_t upper, attrs.get_int("upper", 1));
  ETC_ASSIGN_OR_RETURN(int64_t k, attrs.get_int("k", 0));
  const Shape& s = in[0].shape;
  return std::unique_ptr<Kernel>(
      std::make_unique<TriluKernel>(dtype_size(in[0].dtype), s.dim(-2), s.dim(-1), k, upper != 0));
}

}  // namespace

const OpDef* index_op_def(EdgeOp op) {
  static const OpDef kDefs[] = {
      OpDef{EdgeOp::TopK, 1, 2, 2, 2, infer_top_k, create_top_k},
      OpDef{EdgeOp::CumSum, 1, 2, 1, 1, infer_cum_sum, create_cum_sum},
      OpDef{EdgeOp::Trilu, 1, 2, 1, 1, infer_trilu, create_trilu},
      OpDef{EdgeOp::Einsum, 1, kMaxEinsumOperands, 1, 1, infer_einsum, create_einsum},
      OpDef{EdgeOp::GatherElements, 2, 2, 1, 1, infer_gather_elements, create_gather_elements},
      OpDef{EdgeOp::ScatterElements, 3, 3, 1, 1, infer_scatter_elements, create_scatter_elements},
      OpDef{EdgeOp::GatherNd, 2, 2, 1, 1, infer_gather_nd, create_gather_nd},
      OpDef{EdgeOp::ScatterNd, 3, 3, 1, 1, infer_scatter_nd, create_scatter_nd},
  };
  for (const OpDef& d : kDefs)
    if (d.op == op) return &d;
  return nullptr;
}

}  // namespace etc
