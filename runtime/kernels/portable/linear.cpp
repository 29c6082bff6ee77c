// Portable kernels of the 'linear' family: matmul (numpy semantics) and gemm,
// float32 and float64, both on the shared Eigen-backed GEMM. Both take the
// optional fused-activation attributes clamp_min / clamp_max.
#include <string>
#include <vector>

#include "runtime/kernels/kernel.h"
#include "runtime/kernels/portable/gemm.h"
#include "runtime/kernels/portable/gemm_output.h"

namespace etc {
namespace {

void gemm_alpha(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  gemm_f32(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
void gemm_alpha(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
                const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  gemm_f64(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

Status check_float_pair(const TensorSpec& a, const TensorSpec& b) {
  ETC_CHECK_OR_FAIL(a.dtype == DType::Float32 || a.dtype == DType::Float64, Error::InvalidType,
                    "supports float32 and float64, got ", dtype_name(a.dtype));
  ETC_CHECK_OR_FAIL(a.dtype == b.dtype, Error::InvalidType, "input dtypes differ (", dtype_name(a.dtype),
                    " vs ", dtype_name(b.dtype), ")");
  return Status::Ok();
}

Result<OutputClamp> read_clamp(const AttrList& attrs) {
  OutputClamp c;
  ETC_ASSIGN_OR_RETURN(c.lo, attrs.get_float("clamp_min", c.lo));
  ETC_ASSIGN_OR_RETURN(c.hi, attrs.get_float("clamp_max", c.hi));
  ETC_CHECK_OR_FAIL(c.lo <= c.hi, Error::InvalidProgram,
                    "clamp_min must not exceed clamp_max (and neither may be NaN)");
  return c;
}

// ---- matmul ----

// Batch layout of a matmul: each of `offsets` pairs is the element offset of
// one A matrix and one B matrix; the output matrices are contiguous.
struct MatMulPlan {
  int64_t m = 1, n = 1, k = 1;
  Shape out;
  std::vector<int64_t> a_offsets, b_offsets;
};

Result<MatMulPlan> plan_matmul(const TensorSpec& a, const TensorSpec& b) {
  ETC_TRY(check_float_pair(a, b));
  const Shape& sa = a.shape;
  const Shape& sb = b.shape;
  ETC_CHECK_OR_FAIL(sa.rank() >= 1 && sb.rank() >= 1, Error::InvalidArgument, "inputs must not be scalars");
  MatMulPlan p;
  p.m = sa.rank() == 1 ? 1 : sa[sa.rank() - 2];
  p.k = sa[sa.rank() - 1];
  const int64_t kb = sb.rank() == 1 ? sb[0] : sb[sb.rank() - 2];
  p.n = sb.rank() == 1 ? 1 : sb[sb.rank() - 1];
  ETC_CHECK_OR_FAIL(p.k == kb, Error::InvalidArgument, "inner dims of ", sa.str(), " and ", sb.str(),
                    " differ");
  const int ba = std::max(sa.rank() - 2, 0), bb = std::max(sb.rank() - 2, 0);
  const int batch_rank = std::max(ba, bb);
  Shape batch, a_batch, b_batch;
  for (int i = 0; i < batch_rank; ++i) {
    const int ia = i - (batch_rank - ba), ib = i - (batch_rank - bb);
    const int64_t da = ia >= 0 ? sa[ia] : 1, db = ib >= 0 ? sb[ib] : 1;
    ETC_CHECK_OR_FAIL(da == db || da == 1 || db == 1, Error::InvalidArgument, "batch dims of ", sa.str(),
                      " and ", sb.str(), " do not broadcast");
    batch.push_back(da == 1 ? db : da);
    a_batch.push_back(da);
    b_batch.push_back(db);
  }
  p.out = batch;
  if (sa.rank() > 1) p.out.push_back(p.m);
  if (sb.rank() > 1) p.out.push_back(p.n);
  // Odometer over the output batch, with broadcast dims contributing no offset.
  const auto sta = strides_of(a_batch), stb = strides_of(b_batch);
  std::vector<int64_t> idx(batch_rank, 0);
  for (int64_t i = 0; i < batch.numel(); ++i) {
    int64_t oa = 0, ob = 0;
    for (int d = 0; d < batch_rank; ++d) {
      if (a_batch[d] != 1) oa += idx[d] * sta[d];
      if (b_batch[d] != 1) ob += idx[d] * stb[d];
    }
    p.a_offsets.push_back(oa * p.m * p.k);
    p.b_offsets.push_back(ob * p.k * p.n);
    for (int d = batch_rank - 1; d >= 0 && ++idx[d] == batch[d]; --d) idx[d] = 0;
  }
  // One shared B and consecutive A matrices: a single GEMM with the batch folded into M.
  bool fold = !p.b_offsets.empty();
  for (size_t i = 0; fold && i < p.a_offsets.size(); ++i)
    fold = p.b_offsets[i] == 0 && p.a_offsets[i] == static_cast<int64_t>(i) * p.m * p.k;
  if (fold) {
    p.m *= static_cast<int64_t>(p.a_offsets.size());
    p.a_offsets.assign(1, 0);
    p.b_offsets.assign(1, 0);
  }
  return p;
}

template <typename T>
class MatMulKernel final : public Kernel {
 public:
  MatMulKernel(MatMulPlan plan, OutputClamp clamp) : p_(std::move(plan)), clamp_(clamp) {}
  Status run(const KernelArgs& args) override {
    const T* a = args.inputs[0]->data_as<const T>();
    const T* b = args.inputs[1]->data_as<const T>();
    T* y = args.outputs[0]->data_as<T>();
    for (size_t i = 0; i < p_.a_offsets.size(); ++i) {
      gemm_alpha(false, false, p_.m, p_.n, p_.k, T(1), a + p_.a_offsets[i], p_.k, b + p_.b_offsets[i], p_.n,
                 T(0), y + static_cast<int64_t>(i) * p_.m * p_.n, p_.n);
      bias_clamp_rows<T>(y + static_cast<int64_t>(i) * p_.m * p_.n, p_.m, p_.n, p_.n, nullptr, clamp_);
    }
    return Status::Ok();
  }

 private:
  MatMulPlan p_;
  OutputClamp clamp_;
};

Status infer_matmul(const AttrList& attrs, Span<const TensorSpec> in, Span<TensorSpec> out) {
  ETC_TRY(read_clamp(attrs));
  ETC_ASSIGN_OR_RETURN(MatMulPlan p, plan_matmul(in[0], in[1]));
  out[0] = TensorSpec{in[0].dtype, p.out};
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> create_matmul(const AttrList& attrs, Span<const TensorSpec> in,
                                              Span<const TensorSpec>) {
  ETC_ASSIGN_OR_RETURN(OutputClamp clamp, read_clamp(attrs));
  ETC_ASSIGN_OR_RETURN(MatMulPlan p, plan_matmul(in[0], in[1]));
  if (in[0].dtype == DType::Float64)
    return std::unique_ptr<Kernel>(std::make_unique<MatMulKernel<double>>(std::move(p), clamp));
  return std::unique_ptr<Kernel>(std::make_unique<MatMulKernel<float>>(std::move(p), clamp));
}

// ---- gemm ----

struct GemmParams {
  bool trans_a = false, trans_b = false;
  float alpha = 1.0f, beta = 1.0f;
  int64_t m = 0, n = 0, k = 0;
  bool has_c = false;
  int64_t c_rows = 1, c_cols = 1;  // C viewed as [c_rows, c_cols], each 1 or the full dim
  OutputClamp clamp;
};

Result<GemmParams> gemm_params(const AttrList& attrs, Span<const TensorSpec> in) {
  GemmParams p;
  ETC_TRY(check_float_pair(in[0], in[1]));
  ETC_ASSIGN_OR_RETURN(int64_t ta, attrs.get_int("trans_a", 0));
  ETC_ASSIGN_OR_RETURN(int64_t tb, attrs.get_int("trans_b", 0));
  ETC_ASSIGN_OR_RETURN(p.alpha, attrs.get_float("alpha", 1.0f));
  ETC_ASSIGN_OR_RETURN(p.beta, attrs.get_float("beta", 1.0f));
  ETC_ASSIGN_OR_RETURN(p.clamp, read_clamp(attrs));
  p.trans_a = ta != 0;
  p.trans_b = tb != 0;
  const Shape& a = in[0].shape;
  const Shape& b = in[1].shape;
  ETC_CHECK_OR_FAIL(a.rank() == 2 && b.rank() == 2, Error::InvalidArgument, "A and B must be 2-D, got ",
                    a.str(), " and ", b.str());
  p.m = p.trans_a ? a[1] : a[0];
  p.k = p.trans_a ? a[0] : a[1];
  p.n = p.trans_b ? b[0] : b[1];
  const int64_t kb = p.trans_b ? b[1] : b[0];
  ETC_CHECK_OR_FAIL(p.k == kb, Error::InvalidArgument, "inner dims of A ", a.str(), " and B ", b.str(),
                    " differ");
  p.has_c = in.size() > 2 && in[2].dtype != DType::Invalid;
  if (!p.has_c) return p;
  const Shape& c = in[2].shape;
  ETC_CHECK_OR_FAIL(in[2].dtype == in[0].dtype, Error::InvalidType, "C dtype ", dtype_name(in[2].dtype),
                    " differs from A dtype");
  ETC_CHECK_OR_FAIL(c.rank() <= 2, Error::InvalidArgument, "C must have rank <= 2, got ", c.str());
  p.c_rows = c.rank() == 2 ? c[0] : 1;
  p.c_cols = c.rank() >= 1 ? c[c.rank() - 1] : 1;
  ETC_CHECK_OR_FAIL((p.c_rows == 1 || p.c_rows == p.m) && (p.c_cols == 1 || p.c_cols == p.n),
                    Error::InvalidArgument, "C shape ", c.str(), " does not broadcast to [",
                    std::to_string(p.m), ", ", std::to_string(p.n), "]");
  return p;
}

template <typename T>
class GemmKernel final : public Kernel {
 public:
  explicit GemmKernel(const GemmParams& p) : p_(p) {}
  Status run(const KernelArgs& args) override {
    const T* a = args.inputs[0]->data_as<const T>();
    const T* b = args.inputs[1]->data_as<const T>();
    T* y = args.outputs[0]->data_as<T>();
    const bool add_c = p_.has_c && p_.beta != 0.0f;
    if (add_c) {
      const T* c = args.inputs[2]->data_as<const T>();
      const T beta = static_cast<T>(p_.beta);
      const int64_t row_step = p_.c_rows == 1 ? 0 : p_.c_cols;
      for (int64_t i = 0; i < p_.m; ++i) {
        const T* crow = c + i * row_step;
        T* yrow = y + i * p_.n;
        if (p_.c_cols == 1) {
          for (int64_t j = 0; j < p_.n; ++j) yrow[j] = beta * crow[0];
        } else {
          for (int64_t j = 0; j < p_.n; ++j) yrow[j] = beta * crow[j];
        }
      }
    }
    const int64_t lda = p_.trans_a ? p_.m : p_.k;
    const int64_t ldb = p_.trans_b ? p_.k : p_.n;
    gemm_alpha(p_.trans_a, p_.trans_b, p_.m, p_.n, p_.k, static_cast<T>(p_.alpha), a, lda, b, ldb,
               add_c ? T(1) : T(0), y, p_.n);
    bias_clamp_rows<T>(y, p_.m, p_.n, p_.n, nullptr, p_.clamp);
    return Status::Ok();
  }

 private:
  GemmParams p_;
};

Status infer_gemm(const AttrList& attrs, Span<const TensorSpec> in, Span<TensorSpec> out) {
  ETC_ASSIGN_OR_RETURN(GemmParams p, gemm_params(attrs, in));
  out[0] = TensorSpec{in[0].dtype, Shape{p.m, p.n}};
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> create_gemm(const AttrList& attrs, Span<const TensorSpec> in,
                                            Span<const TensorSpec>) {
  ETC_ASSIGN_OR_RETURN(GemmParams p, gemm_params(attrs, in));
  if (in[0].dtype == DType::Float64) return std::unique_ptr<Kernel>(std::make_unique<GemmKernel<double>>(p));
  return std::unique_ptr<Kernel>(std::make_unique<GemmKernel<float>>(p));
}

}  // namespace

const OpDef* linear_op_def(EdgeOp op) {
  static const OpDef kDefs[] = {
      {EdgeOp::MatMul, 2, 2, 1, 1, infer_matmul, create_matmul},
      {EdgeOp::Gemm, 2, 3, 1, 1, infer_gemm, create_gemm},
  };
  for (const OpDef& d : kDefs)
    if (d.op == op) return &d;
  return nullptr;
}

}  // namespace etc
