// einsum. A matmul-shaped equation (two operands whose labels are all batch,
// row, column or contracted labels) packs its operands into [batch, m, k] and
// [batch, k, n] when they are not laid out so already and runs on gemm. Any
// other equation (diagonals, sums over one operand, three operands, integer
// types) walks the whole index space directly.
#include "runtime/kernels/portable/index_einsum.h"

#include <array>
#include <string>
#include <vector>

#include "runtime/kernels/portable/dispatch.h"
#include "runtime/kernels/portable/gemm.h"
#include "runtime/kernels/portable/wrapping.h"

namespace etc {
namespace {

constexpr int kMaxLabels = 52;  // a-z, A-Z

struct EinsumSpec {
  std::vector<std::string> terms;  // labels of each operand
  std::string out;
  std::array<int64_t, 128> size{};  // per label character; -1 when unused
};

bool is_label(char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'); }

// Parses and checks the equation against the operands. A label's dims must
// agree, except that size-1 dims broadcast.
Result<EinsumSpec> parse_einsum(const AttrList& attrs, Span<const TensorSpec> in) {
  ETC_ASSIGN_OR_RETURN(std::string_view eq, attrs.get_string("equation"));
  const size_t arrow = eq.find("->");
  ETC_CHECK_OR_FAIL(arrow != std::string_view::npos, Error::InvalidProgram, "equation '", std::string(eq),
                    "' has no '->'");
  EinsumSpec s;
  s.size.fill(-1);
  const std::string_view lhs = eq.substr(0, arrow);
  s.out = std::string(eq.substr(arrow + 2));
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    s.terms.emplace_back(lhs.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  ETC_CHECK_OR_FAIL(s.terms.size() == in.size(), Error::InvalidProgram, "equation has ",
                    std::to_string(s.terms.size()), " terms for ", std::to_string(in.size()), " operands");
  for (size_t i = 0; i < in.size(); ++i) {
    const std::string& term = s.terms[i];
    const Shape& shape = in[i].shape;
    ETC_CHECK_OR_FAIL(in[i].dtype == in[0].dtype && in[i].dtype != DType::Bool, Error::InvalidType,
                      "operands must share one numeric dtype");
    ETC_CHECK_OR_FAIL(static_cast<int>(term.size()) == shape.rank(), Error::InvalidShape, "term '", term,
                      "' does not match operand shape ", shape.str());
    for (size_t j = 0; j < term.size(); ++j) {
      ETC_CHECK_OR_FAIL(is_label(term[j]), Error::InvalidProgram, "bad label in term '", term, "'");
      int64_t& size = s.size[static_cast<unsigned char>(term[j])];
      const int64_t dim = shape[static_cast<int>(j)];
      if (size == -1 || size == 1)
        size = dim;
      else
        ETC_CHECK_OR_FAIL(dim == 1 || dim == size, Error::InvalidShape, "label '", std::string(1, term[j]),
                          "' has sizes ", std::to_string(size), " and ", std::to_string(dim));
    }
  }
  ETC_CHECK_OR_FAIL(static_cast<int>(s.out.size()) <= kMaxRank, Error::InvalidShape, "output rank too large");
  for (size_t j = 0; j < s.out.size(); ++j) {
    const char ch = s.out[j];
    ETC_CHECK_OR_FAIL(is_label(ch) && s.size[static_cast<unsigned char>(ch)] >= 0, Error::InvalidProgram,
                      "output label '", std::string(1, ch), "' is not an input label");
    ETC_CHECK_OR_FAIL(s.out.find(ch) == j, Error::InvalidProgram, "output label '", std::string(1, ch),
                      "' is repeated");
  }
  return s;
}

// Element strides of each label in a contiguous operand; a repeated label sums
// its strides (a diagonal), a broadcast size-1 dim has stride 0.
std::array<int64_t, 128> label_strides(const EinsumSpec& s, const std::string& term, const Shape& shape) {
  std::array<int64_t, 128> st{};
  int64_t acc = 1;
  for (int j = shape.rank() - 1; j >= 0; --j) {
    const auto ch = static_cast<unsigned char>(term[static_cast<size_t>(j)]);
    if (shape[j] != 1 || s.size[ch] == 1) st[ch] += acc;
    acc *= shape[j];
  }
  return st;
}

// A strided copy into a contiguous destination of the given dims.
struct Copy {
  bool needed = false;
  int rank = 0;
  std::array<int64_t, kMaxRank> dims{}, src_strides{};
  int64_t numel = 1;
};

template <typename T>
void strided_copy(const Copy& c, const T* src, T* dst) {
  if (c.numel == 0) return;
  std::array<int64_t, kMaxRank> counter{};
  int64_t off = 0;
  for (int64_t i = 0; i < c.numel; ++i) {
    dst[i] = src[off];
    for (int d = c.rank - 1; d >= 0; --d) {
      off += c.src_strides[d];
      if (++counter[d] < c.dims[d]) break;
      off -= c.src_strides[d] * c.dims[d];
      counter[d] = 0;
    }
  }
}

Copy make_copy(const EinsumSpec& s, const std::string& order, const std::string& from,
               const std::array<int64_t, 128>& from_strides) {
  Copy c;
  c.needed = order != from;
  c.rank = static_cast<int>(order.size());
  for (int d = 0; d < c.rank; ++d) {
    const auto ch = static_cast<unsigned char>(order[static_cast<size_t>(d)]);
    c.dims[d] = s.size[ch];
    c.src_strides[d] = from_strides[ch];
    c.numel *= c.dims[d];
  }
  return c;
}

size_t align64(size_t n) { return (n + 63) / 64 * 64; }

struct GemmPlan {
  int64_t batch = 1, m = 1, n = 1, k = 1;
  Copy pack_a, pack_b, unpack_c;
};

// The gemm form of a two-operand equation, or false when it has none.
bool plan_gemm(const EinsumSpec& s, Span<const TensorSpec> in, GemmPlan& p) {
  if (in.size() != 2 || (in[0].dtype != DType::Float32 && in[0].dtype != DType::Float64)) return false;
  const std::string &a = s.terms[0], &b = s.terms[1];
  for (int i = 0; i < 2; ++i) {
    const std::string& t = s.terms[static_cast<size_t>(i)];
    for (size_t j = 0; j < t.size(); ++j)
      if (t.find(t[j]) != j || in[i].shape[static_cast<int>(j)] != s.size[static_cast<unsigned char>(t[j])])
        return false;  // diagonal or broadcast
  }
  std::string batch, rows, cols, inner;
  for (char ch : s.out) {
    const bool in_a = a.find(ch) != std::string::npos, in_b = b.find(ch) != std::string::npos;
    (in_a && in_b ? batch : in_a ? rows : cols) += ch;
  }
  for (char ch : a) {
    if (s.out.find(ch) != std::string::npos) continue;
    if (b.find(ch) == std::string::npos) return false;  // summed over one operand only
    inner += ch;
  }
  for (char ch : b)
    if (s.out.find(ch) == std::string::npos && a.find(ch) == std::string::npos) return false;
  const auto prod = [&](const std::string& labels) {
    int64_t v = 1;
    for (char ch : labels) v *= s.size[static_cast<unsigned char>(ch)];
    return v;
  };
  p.batch = prod(batch), p.m = prod(rows), p.n = prod(cols), p.k = prod(inner);
  p.pack_a = make_copy(s, batch + rows + inner, a, label_strides(s, a, in[0].shape));
  p.pack_b = make_copy(s, batch + inner + cols, b, label_strides(s, b, in[1].shape));
  const std::string c = batch + rows + cols;
  Shape c_shape;
  for (char ch : c) c_shape.push_back(s.size[static_cast<unsigned char>(ch)]);
  p.unpack_c = make_copy(s, s.out, c, label_strides(s, c, c_shape));
  return true;
}

// The direct form: output labels first, then the contracted ones.
struct LoopPlan {
  int n_ops = 0, n_out = 0, n_all = 0;
  std::array<int64_t, kMaxLabels> dims{};
  std::array<std::array<int64_t, kMaxLabels>, kMaxEinsumOperands> strides{};
  int64_t out_numel = 1, inner_numel = 1;
};

LoopPlan plan_loop(const EinsumSpec& s, Span<const TensorSpec> in) {
  LoopPlan p;
  p.n_ops = static_cast<int>(in.size());
  std::string labels = s.out;
  for (const std::string& t : s.terms)
    for (char ch : t)
      if (labels.find(ch) == std::string::npos) labels += ch;
  p.n_out = static_cast<int>(s.out.size());
  p.n_all = static_cast<int>(labels.size());
  for (int k = 0; k < p.n_ops; ++k) {
    const auto st = label_strides(s, s.terms[static_cast<size_t>(k)], in[k].shape);
    for (int d = 0; d < p.n_all; ++d)
      p.strides[k][d] = st[static_cast<unsigned char>(labels[static_cast<size_t>(d)])];
  }
  for (int d = 0; d < p.n_all; ++d) {
    p.dims[d] = s.size[static_cast<unsigned char>(labels[static_cast<size_t>(d)])];
    (d < p.n_out ? p.out_numel : p.inner_numel) *= p.dims[d];
  }
  return p;
}

// Advances the counters of labels [lo, hi) (the last fastest) and every operand offset.
void advance(const LoopPlan& p, int lo, int hi, std::array<int64_t, kMaxLabels>& counter,
             std::array<int64_t, kMaxEinsumOperands>& off) {
  for (int d = hi - 1; d >= lo; --d) {
    for (int k = 0; k < p.n_ops; ++k) off[k] += p.strides[k][d];
    if (++counter[d] < p.dims[d]) return;
    for (int k = 0; k < p.n_ops; ++k) off[k] -= p.strides[k][d] * p.dims[d];
    counter[d] = 0;
  }
}

class EinsumKernel final : public Kernel {
 public:
  EinsumKernel(DType dtype, bool use_gemm, GemmPlan g, LoopPlan l)
      : dtype_(dtype), use_gemm_(use_gemm), g_(g), l_(l) {}

  size_t scratch_bytes() const override {
    if (!use_gemm_) return 0;
    const size_t e = dtype_size(dtype_);
    size_t n = 0;
    if (g_.pack_a.needed) n += align64(static_cast<size_t>(g_.pack_a.numel) * e);
    if (g_.pack_b.needed) n += align64(static_cast<size_t>(g_.pack_b.numel) * e);
    if (g_.unpack_c.needed) n += align64(static_cast<size_t>(g_.unpack_c.numel) * e);
    return n;
  }

  Status run(const KernelArgs& args) override {
    if (use_gemm_) {
      if (dtype_ == DType::Float32)
        run_gemm<float>(args);
      else
        run_gemm<double>(args);
      return Status::Ok();
    }
    return dispatch_arith(dtype_, [&]<typename T>() {
      run_loop<T>(args);
      return Status::Ok();
    });
  }

 private:
  template <typename T>
  void run_gemm(const KernelArgs& args) const {
    auto* scratch = static_cast<uint8_t*>(args.scratch);
    const auto stage = [&](const Copy& c, const T* src) -> const T* {
      if (!c.needed) return src;
      T* dst = reinterpret_cast<T*>(scratch);
      scratch += align64(static_cast<size_t>(c.numel) * sizeof(T));
      strided_copy(c, src, dst);
      return dst;
    };
    const T* a = stage(g_.pack_a, args.inputs[0]->data_as<const T>());
    const T* b = stage(g_.pack_b, args.inputs[1]->data_as<const T>());
    T* y = args.outputs[0]->data_as<T>();
    T* c = g_.unpack_c.needed ? reinterpret_cast<T*>(scratch) : y;
    const int64_t m = g_.m, n = g_.n, k = g_.k;
    for (int64_t i = 0; i < g_.batch; ++i) {
      if constexpr (std::is_same_v<T, float>)
        gemm_f32(false, false, m, n, k, 1.0f, a + i * m * k, k, b + i * k * n, n, 0.0f, c + i * m * n, n);
      else
        gemm_f64(false, false, m, n, k, 1.0, a + i * m * k, k, b + i * k * n, n, 0.0, c + i * m * n, n);
    }
    if (g_.unpack_c.needed) strided_copy<T>(g_.unpack_c, c, y);
  }

  template <typename T>
  void run_loop(const KernelArgs& args) const {
    std::array<const T*, kMaxEinsumOperands> x{};
    for (int k = 0; k < l_.n_ops; ++k) x[k] = args.inputs[k]->data_as<const T>();
    T* y = args.outputs[0]->data_as<T>();
    std::array<int64_t, kMaxLabels> out_counter{}, in_counter{};
    std::array<int64_t, kMaxEinsumOperands> base{};
    for (int64_t o = 0; o < l_.out_numel; ++o) {
      T acc = 0;
      std::array<int64_t, kMaxEinsumOperands> off = base;
      for (int64_t t = 0; t < l_.inner_numel; ++t) {
        T p = 1;
        for (int k = 0; k < l_.n_ops; ++k) p = wrap_mul(p, x[k][off[k]]);
        acc = wrap_add(acc, p);
        advance(l_, l_.n_out, l_.n_all, in_counter, off);
      }
      y[o] = acc;
      advance(l_, 0, l_.n_out, out_counter, base);
    }
  }

  DType dtype_;
  bool use_gemm_;
  GemmPlan g_;
  LoopPlan l_;
};

}  // namespace

Status infer_einsum(const AttrList& attrs, Span<const TensorSpec> in, Span<TensorSpec> out) {
  ETC_ASSIGN_OR_RETURN(EinsumSpec s, parse_einsum(attrs, in));
  Shape shape;
  for (char ch : s.out) shape.push_back(s.size[static_cast<unsigned char>(ch)]);
  out[0] = TensorSpec{in[0].dtype, shape};
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> create_einsum(const AttrList& attrs, Span<const TensorSpec> in,
                                              Span<const TensorSpec>) {
  ETC_ASSIGN_OR_RETURN(EinsumSpec s, parse_einsum(attrs, in));
  GemmPlan g;
  const bool use_gemm = plan_gemm(s, in, g);
  const LoopPlan l = use_gemm ? LoopPlan{} : plan_loop(s, in);
  return std::unique_ptr<Kernel>(std::make_unique<EinsumKernel>(in[0].dtype, use_gemm, g, l));
}

}  // namespace etc
