// matmul → fully_connected (a constant 2-D right operand, packed by XNNPACK)
// or the native BatchMatMul (numpy matmul of any two operands: batch
// broadcasting, 1-D promotion). Each BatchMatMul operand is addressed by
// strides, so a transpose that only feeds it (attention's Kᵀ, the heads
// split out of Q) or only reads its product (the heads merged back) is
// folded in when the moved matrix keeps a unit row or column stride: no
// copy is made.
#include <algorithm>
#include <array>
#include <optional>

#include "partitioners/xnnpack/xnnpack_rules.h"
#include "preprocessors/xnnpack/lowering.h"

namespace etc::xnnpack {
namespace {

using Users = std::vector<std::vector<ir::NodeId>>;

// A tensor's element strides per ONNX axis, in its blob layout.
std::vector<uint64_t> logical_strides(const Lowering& l, ir::ValueId v) {
  const std::vector<uint64_t> dims = l.dims(v);
  std::vector<uint64_t> stored(dims.size(), 1);
  for (size_t d = dims.size() - 1; d-- > 0;) stored[d] = stored[d + 1] * dims[d + 1];
  const int rank = shape_of(l.graph(), v).rank();
  const std::vector<uint32_t> at = stored_axes(rank, l.nhwc(v));
  std::vector<uint64_t> out(static_cast<size_t>(rank));
  for (int a = 0; a < rank; ++a) out[static_cast<size_t>(a)] = stored[at[static_cast<size_t>(a)]];
  return out;
}

std::vector<uint64_t> onnx_strides(const Shape& shape) {
  std::vector<uint64_t> s(static_cast<size_t>(shape.rank()), 1);
  for (int d = shape.rank() - 1; d-- > 0;)
    s[static_cast<size_t>(d)] = s[static_cast<size_t>(d) + 1] * static_cast<uint64_t>(shape[d + 1]);
  return s;
}

// Where an operand's elements are: a value read in place (maybe through a
// folded transpose), or converted to ONNX order first; the stride of each of
// the operand's axes there.
struct Source {
  ir::ValueId value = ir::kNoValue;
  std::vector<uint64_t> strides;
  const ir::Node* folded = nullptr;  // the transpose folded in
  bool onnx_order = false;           // read through value_as(value, false) / output_as
};

bool unit_matrix_stride(const std::vector<uint64_t>& s) {
  if (s.size() == 1) return s[0] == 1;
  return s[s.size() - 1] == 1 || s[s.size() - 2] == 1;
}

bool is_partition_output(const ir::Graph& g, ir::ValueId v) {
  return std::find(g.outputs().begin(), g.outputs().end(), v) != g.outputs().end();
}

bool plain_transpose(const ir::Graph& g, const ir::Node& t) {
  return t.op == EdgeOp::Transpose && !t.dead && !find_channel_shuffle(g, t);
}

Source in_onnx_order(const ir::Graph& g, ir::ValueId v) {
  return {v, onnx_strides(shape_of(g, v)), nullptr, true};
}

Source input_source(const Lowering& l, const Users& users, ir::ValueId v) {
  const ir::Graph& g = l.graph();
  if (is_constant(g, v)) return in_onnx_order(g, v);
  const ir::NodeId p = g.value(v).producer;
  if (p >= 0 && plain_transpose(g, g.node(p)) && users[v].size() == 1 && !is_partition_output(g, v)) {
    const ir::Node& t = g.node(p);
    const std::vector<uint64_t> from = logical_strides(l, t.inputs[0]);
    Source folded{t.inputs[0], {}, &t, false};
    for (int64_t a : attr_ints(t, "perm")) folded.strides.push_back(from[static_cast<size_t>(a)]);
    if (unit_matrix_stride(folded.strides)) return folded;
  }
  Source in_place{v, logical_strides(l, v), nullptr, false};
  return unit_matrix_stride(in_place.strides) ? in_place : in_onnx_order(g, v);
}

Source output_source(const Lowering& l, const Users& users, ir::ValueId c) {
  const ir::Graph& g = l.graph();
  if (users[c].size() == 1 && !is_partition_output(g, c) && plain_transpose(g, g.node(users[c][0]))) {
    const ir::Node& t = g.node(users[c][0]);
    const std::vector<uint64_t> to = logical_strides(l, t.outputs[0]);
    const std::vector<int64_t> perm = attr_ints(t, "perm");
    Source folded{t.outputs[0], std::vector<uint64_t>(perm.size()), &t, false};
    for (size_t j = 0; j < perm.size(); ++j) folded.strides[static_cast<size_t>(perm[j])] = to[j];
    if (folded.strides.back() == 1) return folded;
  }
  Source in_place{c, logical_strides(l, c), nullptr, false};
  return in_place.strides.back() == 1 ? in_place : in_onnx_order(g, c);
}

bool is_fully_connected(const ir::Graph& g, const ir::Node& n) {
  return is_constant(g, n.inputs[1]) && shape_of(g, n.inputs[1]).rank() == 2 &&
         shape_of(g, n.inputs[0]).rank() >= 2;
}

// Strides of one operand over the product's batch dims (0 where it
// broadcasts), then its row and its column. A 1-D A is [1, K], a 1-D B [K, 1].
std::vector<uint64_t> operand_strides(const Source& s, const Shape& shape, size_t batch_rank, bool is_b) {
  std::vector<uint64_t> out(batch_rank + 2, 0);
  const int rank = shape.rank();
  if (rank == 1) {
    out[batch_rank + (is_b ? 0 : 1)] = s.strides[0];
    out[batch_rank + (is_b ? 1 : 0)] = is_b ? 1 : static_cast<uint64_t>(shape[0]) * s.strides[0];
    return out;
  }
  const auto own = static_cast<size_t>(rank - 2);
  for (size_t i = 0; i < own; ++i)
    out[batch_rank - own + i] = shape[static_cast<int>(i)] == 1 ? 0 : s.strides[i];
  out[batch_rank] = s.strides[own];
  out[batch_rank + 1] = s.strides[own + 1];
  return out;
}

// The product's batch dims: both operands' batch dims, numpy-broadcast.
std::vector<int64_t> batch_dims(const Shape& a, const Shape& b) {
  const int rank = std::max(a.rank(), b.rank()) - 2;
  std::vector<int64_t> batch(static_cast<size_t>(std::max(rank, 0)), 1);
  for (const Shape* s : {&a, &b})
    for (int i = 0; i < s->rank() - 2; ++i) {
      int64_t& d = batch[batch.size() - static_cast<size_t>(s->rank() - 2) + static_cast<size_t>(i)];
      d = std::max(d, (*s)[i]);
    }
  return batch;
}

void emit_batch_matmul(Lowering& l, const Users& users, const ir::Node& n) {
  const ir::Graph& g = l.graph();
  const Shape &a = shape_of(g, n.inputs[0]), &b = shape_of(g, n.inputs[1]);
  const Source src[3] = {input_source(l, users, n.inputs[0]), input_source(l, users, n.inputs[1]),
                         output_source(l, users, n.outputs[0])};
  const std::vector<int64_t> batch = batch_dims(a, b);
  const uint32_t ta = src[0].onnx_order ? l.value_as(src[0].value, false) : l.value(src[0].value);
  const uint32_t tb = src[1].onnx_order ? l.value_as(src[1].value, false) : l.value(src[1].value);
  const uint32_t tc = src[2].onnx_order ? l.output_as(src[2].value, false) : l.value(src[2].value);
  NodeRecord& r = l.add_node(fb::NodeType::BatchMatMul, n);
  for (int o = 0; o < 2; ++o)
    if (src[o].folded) r.covers.push_back(src[o].folded);
  if (src[2].folded) r.covers.push_back(src[2].folded);
  r.inputs = {ta, tb};
  r.outputs = {tc};
  r.mnk = {uint64_t(a.rank() == 1 ? 1 : a[a.rank() - 2]), uint64_t(b.rank() == 1 ? 1 : b.dim(-1)),
           uint64_t(a.dim(-1))};
  for (int64_t d : batch) r.batch.push_back(static_cast<uint64_t>(d));
  const Shape& c = shape_of(g, n.outputs[0]);
  // The product's own strides: over the batch dims, then M and N (a 1-D
  // operand's promoted axis is missing from C, its stride irrelevant).
  std::vector<uint64_t> sc(batch.size() + 2, 0);
  const size_t c_batch = static_cast<size_t>(c.rank()) - (a.rank() == 1 ? 0 : 1) - (b.rank() == 1 ? 0 : 1);
  for (size_t i = 0; i < c_batch; ++i) sc[batch.size() - c_batch + i] = src[2].strides[i];
  sc[batch.size()] = a.rank() == 1 ? r.mnk[1] : src[2].strides[c_batch];
  sc[batch.size() + 1] = b.rank() == 1 ? 1 : src[2].strides.back();
  for (const auto& v :
       {operand_strides(src[0], a, batch.size(), false), operand_strides(src[1], b, batch.size(), true), sc})
    r.strides.insert(r.strides.end(), v.begin(), v.end());
}

}  // namespace

void fold_into_matmuls(Lowering& l) {
  const ir::Graph& g = l.graph();
  const Users users = g.users();
  for (const ir::Node& n : g.nodes()) {
    if (n.dead || n.op != EdgeOp::MatMul) continue;
    if (is_fully_connected(g, n)) {
      if (const ir::Node* add = foldable_bias_add(g, users, n)) {
        l.set_bias_add(n, *add);
        l.folded()[static_cast<size_t>(add->id)] = true;
      }
      continue;
    }
    for (const Source& s : {input_source(l, users, n.inputs[0]), input_source(l, users, n.inputs[1]),
                            output_source(l, users, n.outputs[0])})
      if (s.folded) l.folded()[static_cast<size_t>(s.folded->id)] = true;
  }
}

void emit_matmul(Lowering& l, const ir::Node& n) {
  if (n.op == EdgeOp::Gemm || is_fully_connected(l.graph(), n)) return emit_linear(l, n);
  emit_batch_matmul(l, l.graph().users(), n);
}

}  // namespace etc::xnnpack
