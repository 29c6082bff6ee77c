// Lowering of ONNX TopK, CumSum, Trilu and Einsum.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "compiler/import/onnx/lower_context.h"
#include "compiler/import/onnx/ops/register_all.h"
#include "compiler/import/onnx/ops/shape_lowerings.h"

namespace etc::onnx_import {
namespace {

// k computed by the model: k is the dim the declared output type gives the
// axis, and the kernel checks at run time that the input k agrees.
int64_t declared_k(const LowerContext& c, const Shape& shape, int64_t axis) {
  std::optional<TensorSpec> declared = c.declared_output_spec(0);
  if (!declared) declared = c.declared_output_spec(1);
  if (!declared) c.fail("k (input 1) is not a compile-time constant and the output type is undeclared");
  bool ok = declared->shape.rank() == shape.rank();
  for (int d = 0; ok && d < shape.rank(); ++d) ok = d == axis || declared->shape[d] == shape[d];
  if (!ok)
    c.fail("declared output shape " + declared->shape.str() + " does not fit input shape " + shape.str());
  return declared->shape[static_cast<int>(axis)];
}

// k is an attribute before opset 10 and an input from 10. It sets the output
// shape: a computed k needs a declared output type.
void lower_top_k(LowerContext& c) {
  const Shape shape = c.input_spec(0).shape;
  const int64_t axis = c.normalize_axis(c.attr_int("axis", -1), shape.rank());
  std::vector<ir::ValueId> inputs = {c.input(0)};
  int64_t k = 0;
  if (c.opset() < 10) {
    k = c.attr_int("k");
  } else if (c.is_constant(c.input(1))) {
    const std::vector<int64_t> ks = c.constant_ints(1, "k");
    if (ks.size() != 1) c.fail("k must hold exactly one value");
    k = ks[0];
  } else {
    k = declared_k(c, shape, axis);
    inputs.push_back(c.input(1));
  }
  const int64_t n = shape[static_cast<int>(axis)];
  if (k < 0 || k > n) c.fail("k=" + std::to_string(k) + " is outside [0, " + std::to_string(n) + "]");
  // sorted=0 leaves the order unspecified; the kernel always sorts.
  const auto out = c.emit(EdgeOp::TopK, std::move(inputs),
                          {{"k", k}, {"axis", axis}, {"largest", c.attr_int("largest", 1)}}, 2);
  c.set_output(0, out[0]);
  c.set_output(1, out[1]);
}

// A constant axis becomes an attribute; a computed one stays an input that the
// kernel reads at run time (the output shape does not depend on it).
void lower_cum_sum(LowerContext& c) {
  const int64_t rank = c.input_spec(0).shape.rank();
  if (rank == 0) c.fail("input must have rank >= 1");
  ir::Attrs attrs{{"exclusive", c.attr_int("exclusive", 0)}, {"reverse", c.attr_int("reverse", 0)}};
  std::vector<ir::ValueId> inputs = {c.input(0)};
  if (c.is_constant(c.input(1))) {
    const std::vector<int64_t> axis = c.constant_ints(1, "axis");
    if (axis.size() != 1) c.fail("axis must hold exactly one value");
    attrs.set("axis", c.normalize_axis(axis[0], rank));
  } else {
    inputs.push_back(c.input(1));
  }
  c.set_output(0, c.emit1(EdgeOp::CumSum, std::move(inputs), std::move(attrs)));
}

// k as for CumSum's axis: an attribute when constant, else a run-time input.
void lower_trilu(LowerContext& c) {
  if (c.input_spec(0).shape.rank() < 2) c.fail("input must have rank >= 2");
  ir::Attrs attrs{{"upper", c.attr_int("upper", 1)}};
  std::vector<ir::ValueId> inputs = {c.input(0)};
  if (c.has_input(1)) {
    if (c.is_constant(c.input(1))) {
      const std::vector<int64_t> k = c.constant_ints(1, "k");
      if (k.size() != 1) c.fail("k must hold exactly one value");
      attrs.set("k", k[0]);
    } else {
      inputs.push_back(c.input(1));
    }
  }
  c.set_output(0, c.emit1(EdgeOp::Trilu, std::move(inputs), std::move(attrs)));
}

std::vector<std::string> split_terms(const std::string& s) {
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    const size_t comma = s.find(',', start);
    terms.push_back(s.substr(start, comma == std::string::npos ? comma : comma - start));
    if (comma == std::string::npos) return terms;
    start = comma + 1;
  }
}

bool is_label(char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'); }

// Rewrites an ONNX equation into the edge form: no spaces, "..." replaced by
// fresh labels (right-aligned, so ellipsis dims broadcast as in numpy), and
// the implicit output (ellipsis dims, then the labels used once, sorted) made
// explicit.
std::string normalize_einsum(const LowerContext& c, const std::string& equation) {
  std::string eq;
  for (char ch : equation)
    if (ch != ' ') eq += ch;
  const size_t arrow = eq.find("->");
  const bool explicit_out = arrow != std::string::npos;
  std::vector<std::string> terms = split_terms(eq.substr(0, arrow));
  if (static_cast<int>(terms.size()) != c.num_inputs())
    c.fail("equation '" + equation + "' has " + std::to_string(terms.size()) + " terms for " +
           std::to_string(c.num_inputs()) + " inputs");
  std::string used;
  int ellipsis_rank = 0;
  std::vector<int> term_ellipsis(terms.size(), 0);
  for (size_t i = 0; i < terms.size(); ++i) {
    const int rank = c.input_spec(static_cast<int>(i)).shape.rank();
    const size_t dots = terms[i].find("...");
    const int letters = static_cast<int>(terms[i].size()) - (dots == std::string::npos ? 0 : 3);
    for (size_t j = 0; j < terms[i].size(); ++j)
      if (!is_label(terms[i][j]) && !(dots != std::string::npos && j >= dots && j < dots + 3))
        c.fail("equation '" + equation + "' has an invalid character '" + terms[i][j] + "'");
    if (dots == std::string::npos ? letters != rank : letters > rank)
      c.fail("term '" + terms[i] + "' does not match input " + std::to_string(i) + " of rank " +
             std::to_string(rank));
    if (dots != std::string::npos) term_ellipsis[i] = rank - letters;
    ellipsis_rank = std::max(ellipsis_rank, term_ellipsis[i]);
    used += terms[i];
  }
  std::string fresh;
  for (char ch = 'A'; ch <= 'Z' && static_cast<int>(fresh.size()) < ellipsis_rank; ++ch)
    if (used.find(ch) == std::string::npos) fresh += ch;
  for (char ch = 'a'; ch <= 'z' && static_cast<int>(fresh.size()) < ellipsis_rank; ++ch)
    if (used.find(ch) == std::string::npos) fresh += ch;
  if (static_cast<int>(fresh.size()) < ellipsis_rank) c.fail("equation uses too many labels");
  std::string lhs, once;
  for (size_t i = 0; i < terms.size(); ++i) {
    for (char ch : terms[i])
      if (is_label(ch) && std::count(used.begin(), used.end(), ch) == 1) once += ch;
    const size_t dots = terms[i].find("...");
    if (dots != std::string::npos)
      terms[i].replace(dots, 3, fresh.substr(fresh.size() - static_cast<size_t>(term_ellipsis[i])));
    lhs += (i ? "," : "") + terms[i];
  }
  std::string out;
  if (explicit_out) {
    out = eq.substr(arrow + 2);
    const size_t dots = out.find("...");
    if (dots != std::string::npos) out.replace(dots, 3, fresh);
  } else {
    std::sort(once.begin(), once.end());
    out = fresh + once;
  }
  return lhs + "->" + out;
}

// x with its dims in the order of `to` (a permutation of the labels `from`):
// x itself when the order is the same.
ir::ValueId transposed(LowerContext& c, ir::ValueId x, const std::string& from, const std::string& to) {
  std::vector<int64_t> perm;
  for (char ch : to) perm.push_back(static_cast<int64_t>(from.find(ch)));
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == static_cast<int64_t>(i);
  return identity ? x : c.emit1(EdgeOp::Transpose, {x}, {{"perm", perm}});
}

// A two-operand float32 einsum that is a batched matrix product (each label
// in one term once; batch labels in both operands and the output, of the
// same size; m labels in the first operand and the output, n labels in the
// second and the output, k labels in both operands only) as transposes,
// reshapes and one MatMul, which backends run (attention written as
// einsum: MaxViT, Swin, many transformer exports). Null when it is not one.
std::optional<ir::ValueId> einsum_as_matmul(LowerContext& c, const std::string& eq) {
  if (c.num_inputs() != 2) return std::nullopt;
  const TensorSpec a = c.input_spec(0), b = c.input_spec(1);
  if (a.dtype != DType::Float32 || b.dtype != DType::Float32) return std::nullopt;
  const size_t comma = eq.find(','), arrow = eq.find("->");
  const std::string ta = eq.substr(0, comma), tb = eq.substr(comma + 1, arrow - comma - 1),
                    to = eq.substr(arrow + 2);
  auto once_each = [](const std::string& t) {
    for (size_t i = 0; i < t.size(); ++i)
      if (t.find(t[i], i + 1) != std::string::npos) return false;
    return true;
  };
  if (!once_each(ta) || !once_each(tb) || !once_each(to)) return std::nullopt;
  auto has = [](const std::string& t, char ch) { return t.find(ch) != std::string::npos; };
  auto dim = [](const TensorSpec& s, const std::string& t, char ch) {
    return s.shape[static_cast<int>(t.find(ch))];
  };
  std::string batch, m, n, k;
  for (char ch : to) {
    if (has(ta, ch) && has(tb, ch)) {
      if (dim(a, ta, ch) != dim(b, tb, ch)) return std::nullopt;
      batch += ch;
    } else if (has(ta, ch)) {
      m += ch;
    } else if (has(tb, ch)) {
      n += ch;
    } else {
      return std::nullopt;
    }
  }
  for (char ch : ta)
    if (!has(to, ch)) {
      if (!has(tb, ch) || dim(a, ta, ch) != dim(b, tb, ch)) return std::nullopt;
      k += ch;
    }
  for (char ch : tb)
    if (!has(to, ch) && !has(ta, ch)) return std::nullopt;  // summed over the second operand alone
  std::vector<int64_t> lead;
  for (char ch : batch) lead.push_back(dim(a, ta, ch));
  std::vector<int64_t> dims = lead;  // of the product before its last transpose
  for (char ch : m) dims.push_back(dim(a, ta, ch));
  for (char ch : n) dims.push_back(dim(b, tb, ch));
  if (lead.size() + 2 > static_cast<size_t>(kMaxRank) || dims.size() > static_cast<size_t>(kMaxRank))
    return std::nullopt;
  auto product = [&](const std::string& labels) {
    int64_t p = 1;
    for (char ch : labels) p *= has(ta, ch) ? dim(a, ta, ch) : dim(b, tb, ch);
    return p;
  };
  auto matrix = [&](ir::ValueId v, const std::string& from, const std::string& rows,
                    const std::string& cols) {
    std::vector<int64_t> dims = lead;
    dims.push_back(product(rows));
    dims.push_back(product(cols));
    return reshape_to(c, transposed(c, v, from, batch + rows + cols), dims);
  };
  const ir::ValueId product_value =
      c.emit1(EdgeOp::MatMul, {matrix(c.input(0), ta, m, k), matrix(c.input(1), tb, k, n)});
  return transposed(c, reshape_to(c, product_value, dims), batch + m + n, to);
}

void lower_einsum(LowerContext& c) {
  std::vector<ir::ValueId> inputs;
  for (int i = 0; i < c.num_inputs(); ++i) inputs.push_back(c.input(i));
  if (inputs.empty() || inputs.size() > 8) c.fail("einsum takes 1 to 8 operands");
  const std::string eq = normalize_einsum(c, c.attr_string("equation", ""));
  if (const std::optional<ir::ValueId> y = einsum_as_matmul(c, eq)) {
    c.set_output(0, *y);
    return;
  }
  c.set_output(0, c.emit1(EdgeOp::Einsum, std::move(inputs), {{"equation", eq}}));
}

}  // namespace

void register_index_lowerings() {
  register_lowering("TopK", {lower_top_k, 1, 17});
  register_lowering("CumSum", {lower_cum_sum, 11, 17});
  register_lowering("Trilu", {lower_trilu, 14, 17});
  register_lowering("Einsum", {lower_einsum, 12, 17});
}

}  // namespace etc::onnx_import
