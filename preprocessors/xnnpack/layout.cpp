// Tensor bookkeeping and the NCHW ↔ NHWC layout rule of XNNPACK partitions.
#include <cstring>

#include "compiler/common/compile_error.h"
#include "partitioners/xnnpack/xnnpack_rules.h"
#include "preprocessors/xnnpack/lowering.h"

namespace etc::xnnpack {

std::vector<uint64_t> xnn_dims(const Shape& shape) {
  std::vector<uint64_t> dims;
  if (shape.rank() == 4)
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

Lowering::Lowering(const ir::ExportedProgram& partition, BlobWriter& blob)
    : g_(partition.graph), blob_(blob), tensor_of_(partition.graph.values().size(), -1) {
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
  t.dims = xnn_dims(v.spec.shape);
  (is_input ? t.external_input : t.external_output) = index;
  if (v.spec.shape.rank() == 4)
    t.layout = is_input ? fb::BoundaryLayout::NchwToNhwc : fb::BoundaryLayout::NhwcToNchw;
  tensor_of_[v.id] = blob_.add_tensor(std::move(t));
}

uint32_t Lowering::value(ir::ValueId v) {
  if (tensor_of_[v] >= 0) return static_cast<uint32_t>(tensor_of_[v]);
  const ir::Value& val = g_.value(v);
  uint32_t id = 0;
  if (val.is_constant()) {
    std::vector<float> data = floats(v);
    if (val.spec.shape.rank() == 4) data = nchw_to_nhwc(data, val.spec.shape);
    id = blob_.add_constant(xnn_dims(val.spec.shape), data);
  } else {
    TensorRecord t;
    t.dims = xnn_dims(val.spec.shape);
    id = blob_.add_tensor(std::move(t));
  }
  tensor_of_[v] = id;
  return id;
}

std::vector<float> Lowering::floats(ir::ValueId v) const {
  const ir::Value& val = g_.value(v);
  if (!val.is_constant() || val.spec.dtype != DType::Float32)
    throw CompileError("xnnpack: value '" + val.name + "' is not a float32 constant");
  std::vector<float> out(static_cast<size_t>(val.spec.shape.numel()));
  if (!out.empty()) std::memcpy(out.data(), val.constant->data(), out.size() * sizeof(float));
  return out;
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
