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

#include "compiler/common/compile_error.h"
#include "partitioners/xnnpack/xnnpack_rules.h"
#include "preprocessors/xnnpack/lowering.h"
#include "runtime/backends/xnnpack/blob_resize.h"

namespace etc::xnnpack {
namespace {

using Users = std::vector<std::vector<ir::NodeId>>;

// The stored dim of each ONNX axis of v in its blob layout.
std::vector<int8_t> logical_axes(const Lowering& l, ir::ValueId v) {
  const int rank = shape_of(l.graph(), v).rank();
  std::vector<int8_t> out;
  for (uint32_t at : stored_axes(rank, l.nhwc(v))) out.push_back(static_cast<int8_t>(at));
  return out;
}

// The element stride of stored dim `axis` of a tensor of blob dims `dims`.
uint64_t stride_of(const std::vector<uint64_t>& dims, int8_t axis) {
  uint64_t s = 1;
  for (size_t k = static_cast<size_t>(axis) + 1; k < dims.size(); ++k) s *= dims[k];
  return s;
}

// Where an operand's elements are: a value read in place (maybe through a
// folded transpose), or converted to ONNX order first; the stored dim of
// its tensor that each of the operand's axes walks.
struct Source {
  ir::ValueId value = ir::kNoValue;
  std::vector<int8_t> axes;
  std::vector<uint64_t> dims;        // of the tensor read
  const ir::Node* folded = nullptr;  // the transpose folded in
  bool onnx_order = false;           // read through value_as(value, false) / output_as

  uint64_t stride(size_t a) const { return stride_of(dims, axes[a]); }
};

bool unit_matrix_stride(const Source& s) {
  if (s.axes.size() == 1) return s.stride(0) == 1;
  return s.stride(s.axes.size() - 1) == 1 || s.stride(s.axes.size() - 2) == 1;
}

bool is_partition_output(const ir::Graph& g, ir::ValueId v) {
  return std::find(g.outputs().begin(), g.outputs().end(), v) != g.outputs().end();
}

bool plain_transpose(const ir::Graph& g, const ir::Node& t) {
  return t.op == EdgeOp::Transpose && !t.dead && !find_channel_shuffle(g, t);
}

Source in_onnx_order(const ir::Graph& g, ir::ValueId v) {
  const Shape& shape = shape_of(g, v);
  Source s{v, {}, xnn_dims(shape, false), nullptr, true};
  for (int a = 0; a < shape.rank(); ++a) s.axes.push_back(static_cast<int8_t>(a));
  return s;
}

Source input_source(const Lowering& l, const Users& users, ir::ValueId v) {
  const ir::Graph& g = l.graph();
  if (is_constant(g, v)) return in_onnx_order(g, v);
  const ir::NodeId p = g.value(v).producer;
  if (p >= 0 && plain_transpose(g, g.node(p)) && users[v].size() == 1 && !is_partition_output(g, v)) {
    const ir::Node& t = g.node(p);
    const std::vector<int8_t> from = logical_axes(l, t.inputs[0]);
    Source folded{t.inputs[0], {}, l.dims(t.inputs[0]), &t, false};
    for (int64_t a : attr_ints(t, "perm")) folded.axes.push_back(from[static_cast<size_t>(a)]);
    if (unit_matrix_stride(folded)) return folded;
  }
  Source in_place{v, logical_axes(l, v), l.dims(v), nullptr, false};
  return unit_matrix_stride(in_place) ? in_place : in_onnx_order(g, v);
}

Source output_source(const Lowering& l, const Users& users, ir::ValueId c) {
  const ir::Graph& g = l.graph();
  if (users[c].size() == 1 && !is_partition_output(g, c) && plain_transpose(g, g.node(users[c][0]))) {
    const ir::Node& t = g.node(users[c][0]);
    const std::vector<int8_t> to = logical_axes(l, t.outputs[0]);
    const std::vector<int64_t> perm = attr_ints(t, "perm");
    Source folded{t.outputs[0], std::vector<int8_t>(perm.size()), l.dims(t.outputs[0]), &t, false};
    for (size_t j = 0; j < perm.size(); ++j) folded.axes[static_cast<size_t>(perm[j])] = to[j];
    if (folded.stride(folded.axes.size() - 1) == 1) return folded;
  }
  Source in_place{c, logical_axes(l, c), l.dims(c), nullptr, false};
  return in_place.stride(in_place.axes.size() - 1) == 1 ? in_place : in_onnx_order(g, c);
}

bool is_fully_connected(const ir::Graph& g, const ir::Node& n) {
  return is_constant(g, n.inputs[1]) && shape_of(g, n.inputs[1]).rank() == 2 &&
         shape_of(g, n.inputs[0]).rank() >= 2;
}

// The stride axes (xnnpack_blob.fbs) of one operand over the product's
// batch dims (-1 where it broadcasts), then its row and its column. A 1-D A
// is [1, K], a 1-D B [K, 1]: their missing axis is -2 (size 1, unit stride).
std::vector<int8_t> operand_axes(const Source& s, const Shape& shape, size_t batch_rank, bool is_b) {
  std::vector<int8_t> out(batch_rank + 2, -1);
  const int rank = shape.rank();
  if (rank == 1) {
    out[batch_rank + (is_b ? 0 : 1)] = s.axes[0];
    out[batch_rank + (is_b ? 1 : 0)] = -2;
    return out;
  }
  const auto own = static_cast<size_t>(rank - 2);
  for (size_t i = 0; i < own; ++i)
    out[batch_rank - own + i] = shape[static_cast<int>(i)] == 1 ? int8_t{-1} : s.axes[i];
  out[batch_rank] = s.axes[own];
  out[batch_rank + 1] = s.axes[own + 1];
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
  // The product's own axes: over the batch dims, then M and N (a 1-D
  // operand's promoted axis is missing from C).
  const Shape& c = shape_of(g, n.outputs[0]);
  std::vector<int8_t> ac(batch.size() + 2, -1);
  const size_t c_batch = static_cast<size_t>(c.rank()) - (a.rank() == 1 ? 0 : 1) - (b.rank() == 1 ? 0 : 1);
  for (size_t i = 0; i < c_batch; ++i) ac[batch.size() - c_batch + i] = src[2].axes[i];
  ac[batch.size()] = a.rank() == 1 ? int8_t{-2} : src[2].axes[c_batch];
  ac[batch.size() + 1] = b.rank() == 1 ? int8_t{-2} : src[2].axes.back();
  for (const auto& v :
       {operand_axes(src[0], a, batch.size(), false), operand_axes(src[1], b, batch.size(), true), ac})
    r.stride_axes.insert(r.stride_axes.end(), v.begin(), v.end());
  BlobWriter& blob = l.blob();
  Result<MatmulLayout> layout = batch_matmul_layout(
      r.stride_axes, {&blob.tensor(ta).dims, &blob.tensor(tb).dims, &blob.tensor(tc).dims});
  if (!layout.ok()) throw CompileError(layout.message());
  r.strides = layout->strides;
  r.mnk = layout->mnk;
  r.batch = layout->batch;
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
