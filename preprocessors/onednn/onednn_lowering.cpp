#include "preprocessors/onednn/onednn_lowering.h"

#include <cmath>
#include <cstring>

#include "compiler/common/compile_error.h"
#include "compiler/ir/node_attrs.h"

namespace etc::onednn {

using ir::attr_float;
using ir::attr_int;
using ir::attr_ints;
using ir::attr_string;
using ir::present;
using ir::shape_of;

namespace {

std::vector<int64_t> dims_of(const Shape& s) {
  std::vector<int64_t> d;
  for (int i = 0; i < s.rank(); ++i) d.push_back(s[i]);
  return d;
}

}  // namespace

Lowering::Lowering(const ir::ExportedProgram& partition) : graph_(partition.graph) {
  blob_.version = kOnednnBlobVersion;
  blob_.num_inputs = static_cast<uint32_t>(graph_.inputs().size());
  blob_.num_outputs = static_cast<uint32_t>(graph_.outputs().size());
  for (size_t i = 0; i < graph_.inputs().size(); ++i) tensor(graph_.inputs()[i]);
  for (size_t i = 0; i < graph_.inputs().size(); ++i)
    blob_.tensors[tensors_.at(graph_.inputs()[i])]->external_input = static_cast<int32_t>(i);
  for (size_t i = 0; i < graph_.outputs().size(); ++i) {
    const ir::ValueId v = graph_.outputs()[i];
    // A value that is both an input and an output, or two outputs of one
    // value, each get a tensor of their own; only the first is computed.
    if (tensors_.count(v) && (blob_.tensors[tensors_.at(v)]->external_output >= 0 ||
                              blob_.tensors[tensors_.at(v)]->external_input >= 0))
      throw CompileError("onednn: a partition output that is also an input or another output");
    blob_.tensors[tensor(v)]->external_output = static_cast<int32_t>(i);
  }
}

uint32_t Lowering::tensor(ir::ValueId v) {
  if (auto it = tensors_.find(v); it != tensors_.end()) return it->second;
  const ir::Value& value = graph_.value(v);
  const uint32_t id = intermediate(dims_of(value.spec.shape));
  if (value.is_constant()) add_constant_data(id, floats(v));
  if (value.spec.shape.rank() == 0) blob_.tensors[id]->dims = {1};
  tensors_[v] = id;
  return id;
}

uint32_t Lowering::constant(std::vector<int64_t> dims, std::vector<float> data) {
  const uint32_t id = intermediate(std::move(dims));
  owned_data_.push_back(std::move(data));
  add_constant_data(id, owned_data_.back());
  return id;
}

void Lowering::add_constant_data(uint32_t id, std::span<const float> data) {
  blob_.tensors[id]->constant_size = data.size() * sizeof(float);
  constant_data_.push_back(data);
  constant_tensors_.push_back(id);
}

uint32_t Lowering::intermediate(std::vector<int64_t> dims) {
  auto t = std::make_unique<fb::TensorT>();
  t->dims = std::move(dims);
  blob_.tensors.push_back(std::move(t));
  return static_cast<uint32_t>(blob_.tensors.size() - 1);
}

std::span<const float> Lowering::floats(ir::ValueId v) const {
  const ir::Value& value = graph_.value(v);
  if (!value.is_constant() || value.spec.dtype != DType::Float32)
    throw CompileError("onednn: value '" + value.name + "' is not a float32 constant");
  return {value.constant_as<float>(), static_cast<size_t>(value.spec.shape.numel())};
}

fb::NodeT& Lowering::add(fb::NodeKind kind, const ir::Node& covers) {
  auto node = std::make_unique<fb::NodeT>();
  node->kind = kind;
  nodes_.push_back(LoweredNode{std::move(node), {&covers}});
  return *nodes_.back().node;
}

std::vector<uint8_t> Lowering::finish(const std::vector<uint32_t>& debug_ids) {
  // Constants are laid out in the order they were added.
  uint64_t size = 0;
  for (uint32_t t : constant_tensors_) {
    size = (size + kOnednnConstantAlignment - 1) / kOnednnConstantAlignment * kOnednnConstantAlignment;
    blob_.tensors[t]->constant_offset = size;
    size += blob_.tensors[t]->constant_size;
  }
  for (size_t i = 0; i < nodes_.size(); ++i) {
    nodes_[i].node->debug_id = debug_ids[i];
    blob_.nodes.push_back(std::move(nodes_[i].node));
  }
  nodes_.clear();
  flatbuffers::FlatBufferBuilder fbb;
  fbb.FinishSizePrefixed(fb::Graph::Pack(fbb, &blob_), kOnednnBlobIdentifier);
  const size_t base = onednn_constant_base(fbb.GetSize() - 4);
  std::vector<uint8_t> bytes;
  bytes.reserve(base + size);
  bytes.insert(bytes.end(), fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  for (size_t c = 0; c < constant_tensors_.size(); ++c) {
    bytes.resize(base + blob_.tensors[constant_tensors_[c]]->constant_offset, 0);
    const auto* data = reinterpret_cast<const uint8_t*>(constant_data_[c].data());
    bytes.insert(bytes.end(), data, data + constant_data_[c].size() * sizeof(float));
  }
  owned_data_.clear();
  bytes.resize(base + size, 0);
  return bytes;
}

Activation activation_of(const ir::Node& n) {
  switch (n.op) {
    case EdgeOp::Relu: return {fb::Algorithm::Relu, 0.0f, 0.0f};
    case EdgeOp::LeakyRelu: return {fb::Algorithm::Relu, attr_float(n, "alpha", 0.01f), 0.0f};
    case EdgeOp::Clip:
      return {fb::Algorithm::Clip, attr_float(n, "min", -INFINITY), attr_float(n, "max", INFINITY)};
    case EdgeOp::Sigmoid: return {fb::Algorithm::Logistic};
    case EdgeOp::Tanh: return {fb::Algorithm::Tanh};
    case EdgeOp::HardSwish: return {fb::Algorithm::HardSwish};
    case EdgeOp::Elu: return {fb::Algorithm::Elu, attr_float(n, "alpha", 1.0f), 0.0f};
    case EdgeOp::Abs: return {fb::Algorithm::Abs};
    case EdgeOp::Sqrt: return {fb::Algorithm::Sqrt};
    case EdgeOp::Exp: return {fb::Algorithm::Exp};
    case EdgeOp::Log: return {fb::Algorithm::Log};
    case EdgeOp::Gelu:
      return {attr_string(n, "approximate", "none") == "tanh" ? fb::Algorithm::GeluTanh
                                                              : fb::Algorithm::GeluErf};
    default: return {};
  }
}

Activation fused_clamp(const ir::Node& n) {
  const float lo = attr_float(n, "clamp_min", -INFINITY), hi = attr_float(n, "clamp_max", INFINITY);
  if (lo == -INFINITY && hi == INFINITY) return {};
  if (lo == 0.0f && hi == INFINITY) return {fb::Algorithm::Relu, 0.0f, 0.0f};
  return {fb::Algorithm::Clip, lo, hi};
}

void add_activation(fb::NodeT& node, const Activation& a) {
  if (a.algorithm == fb::Algorithm::None) return;
  auto p = std::make_unique<fb::PostOpT>();
  p->kind = fb::PostOpKind::Eltwise;
  p->algorithm = a.algorithm;
  p->alpha = a.alpha;
  p->beta = a.beta;
  node.post_ops.push_back(std::move(p));
}

void emit_conv(Lowering& l, const ir::Node& n) {
  const ir::Graph& g = l.graph();
  const size_t dims = static_cast<size_t>(shape_of(g, n.inputs[0]).rank() - 2);
  fb::NodeT& c = l.add(fb::NodeKind::Convolution, n);
  c.inputs = {l.tensor(n.inputs[0]), l.tensor(n.inputs[1])};
  if (present(n, 2)) c.inputs.push_back(l.tensor(n.inputs[2]));
  c.outputs = {l.tensor(n.outputs[0])};
  const Shape& w = shape_of(g, n.inputs[1]);
  for (size_t i = 0; i < dims; ++i) c.kernel.push_back(w[static_cast<int>(2 + i)]);
  c.strides = attr_ints(n, "strides");
  c.dilations = attr_ints(n, "dilations");
  std::vector<int64_t> pads = attr_ints(n, "pads");
  c.strides.resize(dims, 1);
  c.dilations.resize(dims, 1);
  pads.resize(2 * dims, 0);
  c.pads_begin.assign(pads.begin(), pads.begin() + static_cast<long>(dims));
  c.pads_end.assign(pads.begin() + static_cast<long>(dims), pads.end());
  c.groups = attr_int(n, "group", 1);
  add_activation(c, fused_clamp(n));
}

void emit_pool(Lowering& l, const ir::Node& n) {
  const ir::Graph& g = l.graph();
  const Shape& x = shape_of(g, n.inputs[0]);
  const Shape& y = shape_of(g, n.outputs[0]);
  const size_t dims = static_cast<size_t>(x.rank() - 2);
  fb::NodeT& p = l.add(fb::NodeKind::Pooling, n);
  p.inputs = {l.tensor(n.inputs[0])};
  const bool global = n.op == EdgeOp::ReduceMean || attr_int(n, "global", 0) != 0;
  p.algorithm = n.op == EdgeOp::MaxPool                          ? fb::Algorithm::PoolMax
                : attr_int(n, "count_include_pad", 0) && !global ? fb::Algorithm::PoolAvgIncludePad
                                                                 : fb::Algorithm::PoolAvgExcludePad;
  if (global) {
    for (size_t i = 0; i < dims; ++i) p.kernel.push_back(x[static_cast<int>(2 + i)]);
    p.strides.assign(dims, 1);
    p.dilations.assign(dims, 1);
    p.pads_begin.assign(dims, 0);
    p.pads_end.assign(dims, 0);
  } else {
    p.kernel = attr_ints(n, "kernel_shape");
    p.strides = attr_ints(n, "strides");
    p.dilations = attr_ints(n, "dilations");
    const std::vector<int64_t> pads = attr_ints(n, "pads");
    p.pads_begin.assign(pads.begin(), pads.begin() + static_cast<long>(dims));
    p.pads_end.assign(pads.begin() + static_cast<long>(dims), pads.end());
    // ceil_mode: the end padding that makes oneDNN's floor-rounded size
    // the node's (the partitioner checked that one can).
    const std::vector<int64_t> extra = ir::pool_ceil_padding(g, n);
    for (size_t i = 0; i < dims && i < extra.size(); ++i) p.pads_end[i] += extra[i];
  }
  if (y.rank() == x.rank()) {
    p.outputs = {l.tensor(n.outputs[0])};
    return;
  }
  // reduce_mean without keepdims: pool to [N, C, 1, 1], then drop the ones.
  std::vector<int64_t> pooled = {x[0], x[1]};
  pooled.resize(static_cast<size_t>(x.rank()), 1);
  const uint32_t mid = l.intermediate(pooled);
  p.outputs = {mid};
  fb::NodeT& r = l.add(fb::NodeKind::Reshape, n);
  r.inputs = {mid};
  r.outputs = {l.tensor(n.outputs[0])};
}

}  // namespace etc::onednn
