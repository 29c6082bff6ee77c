// Checks of the native compute nodes (native_math.h) of an untrusted blob:
// every index a node will compute from its parameters stays inside its
// tensors, and an output is written at most once per element.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "runtime/backends/xnnpack/native_math.h"
#include "runtime/backends/xnnpack/node_checks.h"

namespace etc::xnnpack {
namespace {

using fb::NodeType;

Failure invalid(const fb::Node& node, size_t index, const std::string& what) {
  return fail(Error::InvalidProgram, "xnnpack: invalid blob: ", node_name(node, index), ": ", what);
}

const TensorInfo& input(const BlobView& view, const fb::Node& node, flatbuffers::uoffset_t i) {
  return view.tensors[node.inputs()->Get(i)];
}
const TensorInfo& output(const BlobView& view, const fb::Node& node) {
  return view.tensors[node.outputs()->Get(0)];
}

bool same_dims(const TensorInfo& a, const TensorInfo& b) {
  return a.rank == b.rank && std::equal(a.dims, a.dims + a.rank, b.dims);
}

template <typename V>
std::vector<uint64_t> values(const V* v) {
  std::vector<uint64_t> out;
  if (v != nullptr)
    for (auto x : *v) out.push_back(x);
  return out;
}

Status check_transpose(const BlobView& view, const fb::Node& node, size_t index) {
  const TensorInfo &in = input(view, node, 0), &out = output(view, node);
  const std::vector<uint64_t> perm = values(node.perm());
  if (perm.size() != in.rank || out.rank != in.rank)
    return invalid(
        node, index,
        "perm, input " + dims_string(in) + " and output " + dims_string(out) + " must have the same rank");
  std::vector<bool> seen(in.rank, false);
  for (size_t j = 0; j < perm.size(); ++j) {
    if (perm[j] >= in.rank || seen[perm[j]]) return invalid(node, index, "perm is not a permutation");
    seen[perm[j]] = true;
    if (out.dims[j] != in.dims[perm[j]])
      return invalid(node, index,
                     "output " + dims_string(out) + " is not input " + dims_string(in) + " permuted");
  }
  return Status::Ok();
}

// The furthest element an operand's strides reach, past which it must not
// read (every factor is below 2^31, so no sum of six products overflows).
uint64_t furthest(const std::vector<std::pair<uint64_t, uint64_t>>& extent_stride) {
  uint64_t last = 0;
  for (const auto& [extent, stride] : extent_stride) last += (extent - 1) * stride;
  return last;
}

// No two indices of (extent, stride) pairs address the same element.
bool one_to_one(std::vector<std::pair<uint64_t, uint64_t>> extent_stride) {
  std::erase_if(extent_stride, [](const auto& p) { return p.first == 1; });
  std::sort(extent_stride.begin(), extent_stride.end(),
            [](const auto& a, const auto& b) { return a.second < b.second; });
  uint64_t span = 0;  // the furthest offset the smaller strides reach
  for (const auto& [extent, stride] : extent_stride) {
    if (stride <= span) return false;
    span += (extent - 1) * stride;
  }
  return true;
}

Status check_batch_matmul(const BlobView& view, const fb::Node& node, size_t index) {
  const std::vector<uint64_t> mnk = values(node.mnk()), batch = values(node.batch()),
                              strides = values(node.strides());
  if (mnk.size() != 3 || batch.size() > kMaxTensorRank - 2 || strides.size() != 3 * (batch.size() + 2))
    return invalid(node, index, "mnk, batch and strides do not describe three operands");
  for (uint64_t v : mnk)
    if (v == 0 || v > kMaxTensorElements) return invalid(node, index, "a matrix dimension is 0 or too large");
  for (uint64_t v : batch)
    if (v == 0 || v > kMaxTensorElements) return invalid(node, index, "a batch dimension is 0 or too large");
  for (uint64_t v : strides)
    if (v > kMaxTensorElements) return invalid(node, index, "a stride is too large");
  const uint64_t m = mnk[0], n = mnk[1], k = mnk[2];
  const uint32_t ids[3] = {node.inputs()->Get(0), node.inputs()->Get(1), node.outputs()->Get(0)};
  if (ids[0] == ids[2] || ids[1] == ids[2]) return invalid(node, index, "the product overwrites an operand");
  const uint64_t rows[3] = {m, k, m}, cols[3] = {k, n, n};
  const char* names[3] = {"A", "B", "the product"};
  const size_t per = batch.size() + 2;
  for (size_t o = 0; o < 3; ++o) {
    std::vector<std::pair<uint64_t, uint64_t>> es;
    for (size_t d = 0; d < batch.size(); ++d) es.emplace_back(batch[d], strides[o * per + d]);
    const uint64_t row = strides[o * per + batch.size()], col = strides[o * per + batch.size() + 1];
    es.emplace_back(rows[o], row);
    es.emplace_back(cols[o], col);
    const TensorInfo& t = view.tensors[ids[o]];
    if (furthest(es) >= t.numel)
      return invalid(
          node, index,
          std::string(names[o]) + "'s strides reach past its " + std::to_string(t.numel) + " elements");
    if (row != 1 && col != 1)
      return invalid(node, index, std::string(names[o]) + " has neither unit row nor unit column stride");
    if (o == 2 && (col != 1 || !one_to_one(es)))
      return invalid(node, index, "the product's strides are not a one-to-one row-major layout");
  }
  return Status::Ok();
}

Status check_layer_norm(const BlobView& view, const fb::Node& node, size_t index) {
  const TensorInfo &in = input(view, node, 0), &out = output(view, node);
  if (!same_dims(in, out)) return invalid(node, index, "output dims differ from input " + dims_string(in));
  if (node.axis() >= in.rank)
    return invalid(node, index, "axis " + std::to_string(node.axis()) + " out of range");
  size_t width = 1;
  for (size_t d = node.axis(); d < in.rank; ++d) width *= in.dims[d];
  for (flatbuffers::uoffset_t i = 1; i < node.inputs()->size(); ++i)
    if (input(view, node, i).numel != width)
      return invalid(node, index,
                     "input " + std::to_string(i) + " has " + std::to_string(input(view, node, i).numel) +
                         " elements, the normalized dims " + std::to_string(width));
  if (!(node.epsilon() >= 0.0f) || node.epsilon() > 1e30f)
    return invalid(node, index, "epsilon must be a finite non-negative number");
  return Status::Ok();
}

Status check_reduce(const BlobView& view, const fb::Node& node, size_t index) {
  const TensorInfo &in = input(view, node, 0), &out = output(view, node);
  const std::vector<uint64_t> axes = values(node.axes());
  if (axes.empty() || axes.back() >= in.rank)
    return invalid(node, index, "axes must be given and below the input's rank");
  size_t reduced = 1;
  for (size_t i = 0; i < axes.size(); ++i) {
    if (i > 0 && axes[i] != axes[i - 1] + 1) return invalid(node, index, "axes are not consecutive");
    reduced *= in.dims[axes[i]];
  }
  if (out.numel * reduced != in.numel)
    return invalid(node, index,
                   "output " + dims_string(out) + " is not input " + dims_string(in) + " reduced");
  if (node.reduce_op() > fb::ReduceOp::MAX) return invalid(node, index, "unknown reduce_op");
  return Status::Ok();
}

Status check_resize_nearest(const BlobView& view, const fb::Node& node, size_t index) {
  const TensorInfo &in = input(view, node, 0), &out = output(view, node);
  if (in.rank != 4 || out.rank != 4 || in.dims[0] != out.dims[0] || in.dims[3] != out.dims[3])
    return invalid(node, index,
                   "input " + dims_string(in) + " and output " + dims_string(out) +
                       " are not NHWC images of the same batch and channels");
  const std::vector<uint64_t> indices = values(node.indices());
  if (indices.size() != out.dims[1] + out.dims[2])
    return invalid(node, index,
                   "indices must hold one source row per output row, then one column per column");
  for (size_t i = 0; i < indices.size(); ++i)
    if (indices[i] >= (i < out.dims[1] ? in.dims[1] : in.dims[2]))
      return invalid(node, index, "source index " + std::to_string(indices[i]) + " is outside the input");
  return Status::Ok();
}

Status check_channel_scale(const BlobView& view, const fb::Node& node, size_t index) {
  const TensorInfo &x = input(view, node, 0), &s = input(view, node, 1), &y = output(view, node);
  if (!same_dims(x, y) || x.rank < 2)
    return invalid(node, index, "input " + dims_string(x) + " and output " + dims_string(y) + " differ");
  bool ok = s.rank == x.rank && (s.dims[0] == 1 || s.dims[0] == x.dims[0]) &&
            s.dims[s.rank - 1] == x.dims[x.rank - 1];
  for (size_t d = 1; ok && d + 1 < s.rank; ++d) ok = s.dims[d] == 1;
  if (!ok)
    return invalid(node, index,
                   "scale " + dims_string(s) + " is not one value per channel of " + dims_string(x));
  if (!(node.output_min() <= node.output_max())) return invalid(node, index, "empty output range");
  return Status::Ok();
}

}  // namespace

Status check_math_node(const BlobView& view, const fb::Node& node, size_t index) {
  const TensorInfo &in = input(view, node, 0), &out = output(view, node);
  switch (node.type()) {
    case NodeType::Transpose: return check_transpose(view, node, index);
    case NodeType::BatchMatMul: return check_batch_matmul(view, node, index);
    case NodeType::AxisSoftmax:
      if (!same_dims(in, out))
        return invalid(node, index, "output dims differ from input " + dims_string(in));
      if (node.axis() >= in.rank) return invalid(node, index, "axis out of range");
      return Status::Ok();
    case NodeType::LayerNorm: return check_layer_norm(view, node, index);
    case NodeType::Reduce: return check_reduce(view, node, index);
    case NodeType::UnaryMath:
      if (in.numel != out.numel) return invalid(node, index, "input and output differ in size");
      if (node.unary_op() > fb::UnaryOp::MAX) return invalid(node, index, "unknown unary_op");
      return Status::Ok();
    case NodeType::ResizeNearest: return check_resize_nearest(view, node, index);
    case NodeType::ChannelScale: return check_channel_scale(view, node, index);
    default: return invalid(node, index, "not a native compute node");
  }
}

}  // namespace etc::xnnpack
