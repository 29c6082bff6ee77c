#include "compiler/passes/fuse_patterns.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace etc::passes {
namespace {

using Users = std::vector<std::vector<ir::NodeId>>;

bool is_output(const ir::Graph& g, ir::ValueId v) {
  return std::find(g.outputs().begin(), g.outputs().end(), v) != g.outputs().end();
}

// The one live node reading `v` (which is no graph output), or null.
ir::Node* only_user(ir::Graph& g, const Users& users, ir::ValueId v) {
  if (users[v].size() != 1 || is_output(g, v)) return nullptr;
  ir::Node& n = g.node(users[v][0]);
  return n.dead ? nullptr : &n;
}

// A float32 constant holding one value, or NaN.
float scalar_constant(const ir::Graph& g, ir::ValueId v) {
  if (v == ir::kNoValue) return NAN;
  const ir::Value& val = g.value(v);
  if (!val.is_constant() || val.spec.dtype != DType::Float32 || val.spec.shape.numel() != 1) return NAN;
  return val.constant_as<float>()[0];
}

bool is_float32(const ir::Graph& g, ir::ValueId v) { return g.value(v).spec.dtype == DType::Float32; }

// Binary node `n` with `v` as one operand: the other one.
ir::ValueId other_operand(const ir::Node& n, ir::ValueId v) {
  if (n.inputs.size() != 2) return ir::kNoValue;
  if (n.inputs[0] == v && n.inputs[1] != v) return n.inputs[1];
  if (n.inputs[1] == v && n.inputs[0] != v) return n.inputs[0];
  return ir::kNoValue;
}

// The node takes over the debug handles of `others`, which die.
void absorb_all(ir::Node& keep, const std::vector<ir::Node*>& others) {
  for (ir::Node* n : others) {
    keep.meta.debug_handles.insert(keep.meta.debug_handles.end(), n->meta.debug_handles.begin(),
                                   n->meta.debug_handles.end());
    n->dead = true;
  }
}

// ---- x * hard_sigmoid(x) with alpha 1/6, beta 1/2 → hard_swish(x) ----

bool fuse_hard_swish(ir::Graph& g, const Users& users, ir::Node& hs) {
  if (hs.op != EdgeOp::HardSigmoid || hs.inputs.size() != 1 || !is_float32(g, hs.inputs[0])) return false;
  const ir::AttrValue* a = hs.attrs.find("alpha");
  const ir::AttrValue* b = hs.attrs.find("beta");
  const float alpha = a && std::holds_alternative<float>(*a) ? std::get<float>(*a) : 0.2f;
  const float beta = b && std::holds_alternative<float>(*b) ? std::get<float>(*b) : 0.5f;
  if (std::fabs(alpha - 1.0f / 6.0f) > 1e-7f || beta != 0.5f) return false;
  ir::Node* mul = only_user(g, users, hs.outputs[0]);
  const ir::ValueId x = hs.inputs[0];
  if (mul == nullptr || mul->op != EdgeOp::Mul || other_operand(*mul, hs.outputs[0]) != x) return false;
  if (g.value(mul->outputs[0]).spec.shape != g.value(x).spec.shape) return false;
  mul->op = EdgeOp::HardSwish;
  mul->inputs = {x};
  mul->attrs = {};
  absorb_all(*mul, {&hs});
  return true;
}

// ---- x * clip(x + 3, 0, 6) / 6 → hard_swish(x) ----
// Hardswish as exporters without the operator write it (paddle2onnx): the
// division by 6 (or multiplication by 1/6) after the product, or on the
// clip before it.

bool is_scalar(const ir::Graph& g, ir::ValueId v, float want) {
  const float c = scalar_constant(g, v);
  return c == want || std::fabs(c - want) <= 1e-7f * std::fabs(want);
}

// `n` divides `v` by 6 or multiplies it by 1/6.
bool sixth_of(const ir::Graph& g, const ir::Node& n, ir::ValueId v) {
  if (n.inputs.size() != 2) return false;
  if (n.op == EdgeOp::Div) return n.inputs[0] == v && n.inputs[1] != v && is_scalar(g, n.inputs[1], 6.0f);
  return n.op == EdgeOp::Mul && is_scalar(g, other_operand(n, v), 1.0f / 6.0f);
}

bool fuse_written_hard_swish(ir::Graph& g, const Users& users, ir::Node& add) {
  if (add.op != EdgeOp::Add || add.inputs.size() != 2) return false;
  ir::ValueId x = ir::kNoValue;
  for (ir::ValueId v : add.inputs)
    if (is_scalar(g, other_operand(add, v), 3.0f)) x = v;
  if (x == ir::kNoValue || !is_float32(g, x)) return false;
  ir::Node* clip = only_user(g, users, add.outputs[0]);
  if (clip == nullptr || clip->op != EdgeOp::Clip || clip->inputs.size() != 1) return false;
  const ir::AttrValue* lo = clip->attrs.find("min");
  const ir::AttrValue* hi = clip->attrs.find("max");
  if (!lo || !hi || !std::holds_alternative<float>(*lo) || !std::holds_alternative<float>(*hi) ||
      std::get<float>(*lo) != 0.0f || std::get<float>(*hi) != 6.0f)
    return false;
  ir::Node* next = only_user(g, users, clip->outputs[0]);
  if (next == nullptr) return false;
  ir::Node* mul = nullptr;
  ir::Node* scale = nullptr;
  ir::Node* last = nullptr;
  if (next->op == EdgeOp::Mul && other_operand(*next, clip->outputs[0]) == x) {
    mul = next;  // (x * clip) / 6
    scale = only_user(g, users, mul->outputs[0]);
    if (scale == nullptr || !sixth_of(g, *scale, mul->outputs[0])) return false;
    last = scale;
  } else if (sixth_of(g, *next, clip->outputs[0])) {
    scale = next;  // x * (clip / 6)
    mul = only_user(g, users, scale->outputs[0]);
    if (mul == nullptr || mul->op != EdgeOp::Mul || other_operand(*mul, scale->outputs[0]) != x) return false;
    last = mul;
  } else {
    return false;
  }
  if (g.value(last->outputs[0]).spec.shape != g.value(x).spec.shape) return false;
  last->op = EdgeOp::HardSwish;
  last->inputs = {x};
  last->attrs = {};
  absorb_all(*last, {&add, clip, last == mul ? scale : mul});
  return true;
}

// ---- x + x * g → x * (g + 1), g broadcast over x ----
// A gate added back to its input (PaddleOCR's residual squeeze-and-excitation
// layers): the sum of the product and x in one multiplication by the small
// g + 1, so the product is never written and read back. The Mul's node
// computes g + 1; the Add's node, the product.

bool fuse_residual_gate(ir::Graph& g, const Users& users, ir::Node& mul) {
  if (mul.op != EdgeOp::Mul || mul.inputs.size() != 2 || mul.inputs[0] == mul.inputs[1]) return false;
  const ir::ValueId m = mul.outputs[0];
  ir::Node* add = only_user(g, users, m);
  if (add == nullptr || add->op != EdgeOp::Add) return false;
  const ir::ValueId x = other_operand(*add, m);
  const ir::ValueId gate = other_operand(mul, x);
  if (x == ir::kNoValue || gate == ir::kNoValue || !is_float32(g, x) || !is_float32(g, gate)) return false;
  const Shape xs = g.value(x).spec.shape;
  if (g.value(m).spec.shape != xs || g.value(add->outputs[0]).spec.shape != xs ||
      g.value(gate).spec.shape.numel() >= xs.numel())
    return false;
  const float one = 1.0f;
  const ir::ValueId c = g.add_constant(
      g.value(m).name + ".one", TensorSpec{DType::Float32, Shape{1}},
      std::make_shared<const std::vector<uint8_t>>(reinterpret_cast<const uint8_t*>(&one),
                                                   reinterpret_cast<const uint8_t*>(&one) + sizeof one));
  g.value(m).spec = g.value(gate).spec;
  mul.op = EdgeOp::Add;
  mul.inputs = {gate, c};
  add->op = EdgeOp::Mul;
  add->inputs = {x, m};
  return true;
}

// ---- x * (1 + erf(x / sqrt 2)) / 2 → gelu(x) ----
// The three groupings exporters write: ((x * t) * 0.5), (x * (t * 0.5)) and
// ((x * 0.5) * t), with t = 1 + erf(x / sqrt 2) (x * (1 / sqrt 2) too).

bool near(float v, double want) { return std::fabs(v - want) <= 1e-6 * std::fabs(want); }

// The Mul of `v` by a constant `c` among v's readers (v is no output), or null.
ir::Node* scaled_by(ir::Graph& g, const Users& users, ir::ValueId v, double c) {
  ir::Node* n = only_user(g, users, v);
  return n && n->op == EdgeOp::Mul && near(scalar_constant(g, other_operand(*n, v)), c) ? n : nullptr;
}

bool fuse_gelu(ir::Graph& g, const Users& users, ir::Node& erf) {
  if (erf.op != EdgeOp::Erf || !is_float32(g, erf.inputs[0])) return false;
  const ir::ValueId u = erf.inputs[0];
  const ir::NodeId up = g.value(u).producer;
  if (up < 0 || users[u].size() != 1 || is_output(g, u)) return false;
  ir::Node& scale = g.node(up);
  // x / sqrt 2, or x * (1 / sqrt 2) with the constant on either side.
  ir::ValueId x = ir::kNoValue;
  if (scale.op == EdgeOp::Div && near(scalar_constant(g, scale.inputs[1]), std::sqrt(2.0)))
    x = scale.inputs[0];
  if (scale.op == EdgeOp::Mul && scale.inputs.size() == 2)
    for (int k = 0; k < 2; ++k)
      if (near(scalar_constant(g, scale.inputs[k]), std::sqrt(0.5))) x = scale.inputs[1 - k];
  if (x == ir::kNoValue || g.value(x).is_constant()) return false;
  ir::Node* add = only_user(g, users, erf.outputs[0]);
  if (add == nullptr || add->op != EdgeOp::Add ||
      scalar_constant(g, other_operand(*add, erf.outputs[0])) != 1.0f)
    return false;
  const ir::ValueId t = add->outputs[0];
  ir::Node* m1 = only_user(g, users, t);
  if (m1 == nullptr || m1->op != EdgeOp::Mul) return false;
  const ir::ValueId other = other_operand(*m1, t);
  std::vector<ir::Node*> dead = {&scale, &erf, add};
  ir::Node* last = nullptr;
  if (other == x) {  // (x * t) * 0.5
    last = scaled_by(g, users, m1->outputs[0], 0.5);
    dead.push_back(m1);
  } else if (near(scalar_constant(g, other), 0.5)) {  // x * (t * 0.5)
    last = only_user(g, users, m1->outputs[0]);
    if (last && (last->op != EdgeOp::Mul || other_operand(*last, m1->outputs[0]) != x)) last = nullptr;
    dead.push_back(m1);
  } else if (other != ir::kNoValue && g.value(other).producer >= 0) {  // (x * 0.5) * t
    ir::Node& half = g.node(g.value(other).producer);
    if (half.op == EdgeOp::Mul && other_operand(half, x) != ir::kNoValue &&
        near(scalar_constant(g, other_operand(half, x)), 0.5) && users[other].size() == 1 &&
        !is_output(g, other)) {
      last = m1;
      dead.push_back(&half);
    }
  }
  if (last == nullptr || last->dead || g.value(last->outputs[0]).spec.shape != g.value(x).spec.shape)
    return false;
  last->op = EdgeOp::Gelu;
  last->inputs = {x};
  last->attrs = ir::Attrs{{"approximate", std::string("none")}};
  absorb_all(*last, dead);
  return true;
}

// ---- layer normalisation written out ----
// m = reduce_mean(x, trailing axes); d = x - m; v = reduce_mean(d^2, same);
// y = d / sqrt(v + eps) [* gamma] [+ beta]  →  layer_norm(x, gamma, beta).

struct LayerNormMatch {
  std::vector<ir::Node*> nodes;  // every node of the pattern, the last one kept
  ir::ValueId x = ir::kNoValue, gamma = ir::kNoValue, beta = ir::kNoValue;
  int64_t axis = 0;
  float eps = 0;
};

std::vector<int64_t> ints_attr(const ir::Node& n, const char* name) {
  const ir::AttrValue* v = n.attrs.find(name);
  return v && std::holds_alternative<std::vector<int64_t>>(*v) ? std::get<std::vector<int64_t>>(*v)
                                                               : std::vector<int64_t>{};
}

// Reduce-mean over trailing axes with dims kept: the first reduced axis, or -1.
int64_t trailing_mean_axis(const ir::Graph& g, const ir::Node& n) {
  if (n.op != EdgeOp::ReduceMean || n.inputs.size() != 1) return -1;
  const ir::AttrValue* keep = n.attrs.find("keepdims");
  if (keep && std::holds_alternative<int64_t>(*keep) && std::get<int64_t>(*keep) == 0) return -1;
  const std::vector<int64_t> axes = ints_attr(n, "axes");
  const int rank = g.value(n.inputs[0]).spec.shape.rank();
  if (axes.empty()) return -1;
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] != rank - static_cast<int64_t>(axes.size()) + static_cast<int64_t>(i)) return -1;
  return axes[0];
}

// A constant that broadcasts against the normalized dims as their suffix.
bool suffix_constant(const ir::Graph& g, ir::ValueId c, const Shape& x, int64_t axis) {
  const ir::Value& v = g.value(c);
  if (!v.is_constant() || v.spec.dtype != DType::Float32) return false;
  const Shape& s = v.spec.shape;
  const int suffix = x.rank() - static_cast<int>(axis);
  for (int i = 0; i < s.rank(); ++i) {
    const int from_end = s.rank() - i;
    if (from_end > suffix ? s[i] != 1 : s[i] != x[x.rank() - from_end]) return false;
  }
  return s.numel() == [&] {
    int64_t n = 1;
    for (int d = static_cast<int>(axis); d < x.rank(); ++d) n *= x[d];
    return n;
  }();
}

bool match_layer_norm(ir::Graph& g, const Users& users, ir::Node& m1, LayerNormMatch& m) {
  m.axis = trailing_mean_axis(g, m1);
  if (m.axis < 0 || !is_float32(g, m1.inputs[0])) return false;
  m.x = m1.inputs[0];
  ir::Node* sub = only_user(g, users, m1.outputs[0]);
  if (sub == nullptr || sub->op != EdgeOp::Sub || sub->inputs[0] != m.x || sub->inputs[1] != m1.outputs[0])
    return false;
  const ir::ValueId d = sub->outputs[0];
  if (users[d].size() != 2 || is_output(g, d)) return false;
  ir::Node* sq = nullptr;
  ir::Node* div = nullptr;
  for (ir::NodeId u : users[d]) {
    ir::Node& n = g.node(u);
    const bool squares =
        (n.op == EdgeOp::Pow && n.inputs[0] == d && scalar_constant(g, n.inputs[1]) == 2.0f) ||
        (n.op == EdgeOp::Mul && n.inputs[0] == d && n.inputs[1] == d);
    if (squares) sq = &n;
    if (n.op == EdgeOp::Div && n.inputs[0] == d) div = &n;
  }
  if (sq == nullptr || div == nullptr) return false;
  ir::Node* m2 = only_user(g, users, sq->outputs[0]);
  if (m2 == nullptr || trailing_mean_axis(g, *m2) != m.axis) return false;
  ir::Node* add = only_user(g, users, m2->outputs[0]);
  if (add == nullptr || add->op != EdgeOp::Add) return false;
  m.eps = scalar_constant(g, other_operand(*add, m2->outputs[0]));
  if (!(m.eps >= 0.0f)) return false;
  ir::Node* sqrt = only_user(g, users, add->outputs[0]);
  if (sqrt == nullptr || sqrt->op != EdgeOp::Sqrt || only_user(g, users, sqrt->outputs[0]) != div ||
      div->inputs[1] != sqrt->outputs[0])
    return false;
  m.nodes = {&m1, sub, sq, m2, add, sqrt, div};
  const Shape& xs = g.value(m.x).spec.shape;
  if (g.value(div->outputs[0]).spec.shape != xs) return false;
  // Optional scale, then optional shift.
  ir::ValueId y = div->outputs[0];
  for (EdgeOp op : {EdgeOp::Mul, EdgeOp::Add}) {
    ir::Node* n = only_user(g, users, y);
    if (n == nullptr || n->op != op) continue;
    const ir::ValueId c = other_operand(*n, y);
    if (c == ir::kNoValue || !suffix_constant(g, c, xs, m.axis) || g.value(n->outputs[0]).spec.shape != xs)
      continue;
    (op == EdgeOp::Mul ? m.gamma : m.beta) = c;
    m.nodes.push_back(n);
    y = n->outputs[0];
  }
  return true;
}

// A float32 constant of the normalized dims' shape holding `c`'s values
// (ones when `c` is absent).
ir::ValueId layer_norm_param(ir::Graph& g, ir::ValueId c, const Shape& x, int64_t axis,
                             const std::string& name) {
  Shape shape;
  for (int d = static_cast<int>(axis); d < x.rank(); ++d) shape.push_back(x[d]);
  std::vector<uint8_t> bytes(static_cast<size_t>(shape.numel()) * sizeof(float));
  if (c != ir::kNoValue) {
    if (g.value(c).spec.shape == shape) return c;
    std::memcpy(bytes.data(), g.value(c).constant->data(), bytes.size());
  } else {
    const float one = 1.0f;
    for (size_t i = 0; i < bytes.size(); i += sizeof(float)) std::memcpy(&bytes[i], &one, sizeof(float));
  }
  return g.add_constant(name, TensorSpec{DType::Float32, shape},
                        std::make_shared<const std::vector<uint8_t>>(std::move(bytes)));
}

void fuse_layer_norm(ir::Graph& g, const LayerNormMatch& m) {
  ir::Node& last = *m.nodes.back();
  const Shape xs = g.value(m.x).spec.shape;
  const std::string base = g.value(last.outputs[0]).name;
  const ir::ValueId gamma = layer_norm_param(g, m.gamma, xs, m.axis, base + ".scale");
  std::vector<ir::ValueId> inputs = {m.x, gamma};
  if (m.beta != ir::kNoValue) inputs.push_back(layer_norm_param(g, m.beta, xs, m.axis, base + ".bias"));
  ir::Node& keep = last;
  keep.op = EdgeOp::LayerNorm;
  keep.inputs = inputs;
  keep.attrs = ir::Attrs{{"axis", m.axis}, {"epsilon", m.eps}};
  std::vector<ir::Node*> others(m.nodes.begin(), m.nodes.end() - 1);
  absorb_all(keep, others);
}

}  // namespace

size_t fuse_patterns(ir::Graph& g) {
  size_t fused = 0;
  Users users = g.users();
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    ir::Node& n = g.nodes()[i];
    if (n.dead) continue;
    if (fuse_hard_swish(g, users, n) || fuse_written_hard_swish(g, users, n) || fuse_gelu(g, users, n) ||
        fuse_residual_gate(g, users, n)) {
      users = g.users();
      ++fused;
      continue;
    }
    LayerNormMatch m;
    if (match_layer_norm(g, users, n, m)) {
      fuse_layer_norm(g, m);
      users = g.users();
      ++fused;
    }
  }
  return fused;
}

}  // namespace etc::passes
