// Tensor bookkeeping and the NCHW ↔ NHWC layout rule of XNNPACK partitions.
#include <cstring>

#include "compiler/common/compile_error.h"
#include "partitioners/xnnpack/xnnpack_rules.h"
#include "preprocessors/xnnpack/lowering.h"

namespace etc::xnnpack {

std::vector<uint64_t> xnn_dims(const Shape& shape, bool nhwc) {
  std::vector<uint64_t> dims;
  if (nhwc && shape.rank() == 4)
    return {uint64_t(shape[0]), uint64_t(shape[2]), uint64_t(shape[3]), uint64_t(shape[1])};
  for (int64_t d : shape) dims.push_back(static_cast<uint64_t>(d));
  if (dims.empty()) dims.push_back(1);  // a scalar constant broadcasts as [1]
  return dims;
}

std::vector<float> nchw_to_nhwc(const std::vector<float>& data, const Shape& s) {
  const int64_t n = s[0], c = s[1], hw = s[2] * s[3];
  std::vector<float> out(data.size());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < hw; ++p) out[(b * hw + p) * c + ch] = data[(b * c + ch) * hw + p];
  return out;
}

std::vector<uint32_t> stored_axes(int rank, bool nhwc) {
  if (nhwc && rank == 4) return {0, 3, 1, 2};
  std::vector<uint32_t> axes(static_cast<size_t>(rank));
  for (int i = 0; i < rank; ++i) axes[static_cast<size_t>(i)] = static_cast<uint32_t>(i);
  return axes;
}

Lowering::Lowering(const ir::ExportedProgram& partition, BlobWriter& blob)
    : g_(partition.graph),
      blob_(blob),
      nhwc_(plan_nhwc(partition.graph)),
      tensor_of_(partition.graph.values().size(), -1),
      folded_(partition.graph.nodes().size(), false) {
  for (size_t i = 0; i < g_.inputs().size(); ++i) {
    const ir::Value& v = g_.value(g_.inputs()[i]);
    if (v.spec.dtype != DType::Float32)
      throw CompileError("xnnpack partition input '" + v.name + "' is " + dtype_name(v.spec.dtype) +
                         ", XNNPACK partitions compute float32 only");
    add_boundary(v, true, static_cast<int32_t>(i));
  }
  for (size_t i = 0; i < g_.outputs().size(); ++i) {
    const ir::Value& v = g_.value(g_.outputs()[i]);
    if (tensor_of_[v.id] >= 0 || v.is_constant() || v.producer < 0)
      throw CompileError("xnnpack partition output '" + v.name +
                         "' is not computed inside the partition, or is an output twice");
    add_boundary(v, false, static_cast<int32_t>(i));
  }
}

void Lowering::add_boundary(const ir::Value& v, bool is_input, int32_t index) {
  TensorRecord t;
  t.dims = dims(v.id);
  (is_input ? t.external_input : t.external_output) = index;
  if (nhwc_[v.id]) t.layout = is_input ? fb::BoundaryLayout::NchwToNhwc : fb::BoundaryLayout::NhwcToNchw;
  t.nchw = v.spec.shape.rank() == 4 && !nhwc_[v.id];
  tensor_of_[v.id] = blob_.add_tensor(std::move(t));
}

std::vector<uint64_t> Lowering::dims(ir::ValueId v) const {
  return xnn_dims(g_.value(v).spec.shape, nhwc_[v]);
}

uint32_t Lowering::value(ir::ValueId v) {
  if (tensor_of_[v] >= 0) return static_cast<uint32_t>(tensor_of_[v]);
  const ir::Value& val = g_.value(v);
  if (val.is_constant()) return value_as(v, false);
  TensorRecord t;
  t.dims = dims(v);
  t.nchw = val.spec.shape.rank() == 4 && !nhwc_[v];
  const uint32_t id = blob_.add_tensor(std::move(t));
  tensor_of_[v] = id;
  return id;
}

uint32_t Lowering::value_as(ir::ValueId v, bool nhwc) {
  const ir::Value& val = g_.value(v);
  nhwc = nhwc && val.spec.shape.rank() == 4;
  if (val.is_constant())
    return constant(v, nhwc ? kAsNhwcActivation : kAsActivation, [&] {
      std::vector<float> data = floats(v);
      if (nhwc) data = nchw_to_nhwc(data, val.spec.shape);
      return blob_.add_constant(xnn_dims(val.spec.shape, nhwc), std::move(data));
    });
  const uint32_t id = value(v);
  if (nhwc == nhwc_[v]) return id;
  auto it = converted_.find(v);
  if (it != converted_.end()) return it->second;
  const ir::NodeId p = val.producer;
  const ir::Node& edge = p >= 0 ? g_.node(p) : g_.nodes().front();
  return converted_[v] = convert(id, v, nhwc, edge);
}

uint32_t Lowering::output_as(ir::ValueId v, bool nhwc) {
  const ir::Value& val = g_.value(v);
  nhwc = nhwc && val.spec.shape.rank() == 4;
  const uint32_t id = value(v);
  if (nhwc == nhwc_[v]) return id;
  TensorRecord t;
  t.dims = xnn_dims(val.spec.shape, nhwc);
  t.nchw = !nhwc;
  const uint32_t tmp = blob_.add_tensor(std::move(t));
  pending_.push_back({tmp, v, &g_.node(val.producer)});
  return tmp;
}

void Lowering::flush() {
  for (const Pending& p : pending_) convert(p.from, p.v, nhwc_[p.v], *p.edge, value(p.v));
  pending_.clear();
}

uint32_t Lowering::convert(uint32_t from, ir::ValueId v, bool to_nhwc, const ir::Node& edge, int64_t into) {
  const Shape& s = g_.value(v).spec.shape;
  uint32_t out = 0;
  if (into >= 0) {
    out = static_cast<uint32_t>(into);
  } else {
    TensorRecord t;
    t.dims = xnn_dims(s, to_nhwc);
    t.nchw = !to_nhwc;
    out = blob_.add_tensor(std::move(t));
  }
  if (layout_free(s)) {
    // Same bytes in both layouts: only the dims change.
    NodeRecord& r = add_node(fb::NodeType::StaticReshape, edge);
    r.inputs = {from};
    r.outputs = {out};
    r.new_shape = xnn_dims(s, to_nhwc);
    // The same dims reordered: new_shape follows the input through perm.
    r.perm = to_nhwc ? std::vector<uint32_t>{0, 2, 3, 1} : std::vector<uint32_t>{0, 3, 1, 2};
    return out;
  }
  // NCHW → NHWC reads dims {0, 2, 3, 1}; NHWC → NCHW reads {0, 3, 1, 2}.
  NodeRecord& r = add_node(fb::NodeType::Transpose, edge);
  r.inputs = {from};
  r.outputs = {out};
  r.perm = to_nhwc ? std::vector<uint32_t>{0, 2, 3, 1} : std::vector<uint32_t>{0, 3, 1, 2};
  return out;
}

uint32_t Lowering::add_transpose(uint32_t in, const std::vector<uint64_t>& in_dims,
                                 const std::vector<uint32_t>& perm, const ir::Node& edge) {
  TensorRecord t;
  for (uint32_t p : perm) t.dims.push_back(in_dims[p]);
  const uint32_t out = blob_.add_tensor(std::move(t));
  NodeRecord& r = add_node(fb::NodeType::Transpose, edge);
  r.inputs = {in};
  r.outputs = {out};
  r.perm = perm;
  return out;
}

std::span<const float> Lowering::float_view(ir::ValueId v) const {
  const ir::Value& val = g_.value(v);
  if (!val.is_constant() || val.spec.dtype != DType::Float32)
    throw CompileError("xnnpack: value '" + val.name + "' is not a float32 constant");
  return {val.constant_as<float>(), static_cast<size_t>(val.spec.shape.numel())};
}

std::vector<float> Lowering::floats(ir::ValueId v) const {
  const std::span<const float> view = float_view(v);
  return std::vector<float>(view.begin(), view.end());
}

NodeRecord& Lowering::add_node(fb::NodeType type, const ir::Node& edge) {
  NodeRecord r;
  r.type = type;
  r.covers.push_back(&edge);
  blob_.nodes().push_back(std::move(r));
  return blob_.nodes().back();
}

void set_output_range(NodeRecord& r, const ir::Node& n) {
  r.output_min = attr_float(n, "clamp_min", -INFINITY);
  r.output_max = attr_float(n, "clamp_max", INFINITY);
}

}  // namespace etc::xnnpack
