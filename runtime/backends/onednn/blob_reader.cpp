#include "runtime/backends/onednn/blob_reader.h"

#include <dnnl.h>

#include <cmath>
#include <cstring>
#include <string>

#include "runtime/core/vector_alignment.h"

namespace etc::onednn {
namespace {

constexpr int64_t kMaxWindow = int64_t{1} << 20;  // kernel, stride, dilation, pad

Failure bad(const std::string& what) { return fail(Error::InvalidProgram, "onednn blob: ", what); }

std::string node_name(size_t n, const fb::Node& node) {
  return "node " + std::to_string(n) + " (" + fb::EnumNameNodeKind(node.kind()) + ")";
}

bool is_eltwise(fb::Algorithm a) { return a >= fb::Algorithm::Relu && a <= fb::Algorithm::GeluTanh; }
bool is_binary(fb::Algorithm a) { return a >= fb::Algorithm::Add && a <= fb::Algorithm::Min; }
bool is_pool(fb::Algorithm a) { return a >= fb::Algorithm::PoolMax && a <= fb::Algorithm::PoolAvgExcludePad; }

// Every [long] vector is 8-byte aligned before it is read
// (runtime/core/vector_alignment.h).
Status check_alignment(const fb::Graph& g) {
  if (const auto* tensors = g.tensors())
    for (uint32_t t = 0; t < tensors->size(); ++t)
      if (misaligned_8(tensors->Get(t)->dims()))
        return bad("tensor " + std::to_string(t) + ": misaligned dims");
  if (const auto* nodes = g.nodes())
    for (uint32_t n = 0; n < nodes->size(); ++n) {
      const fb::Node& node = *nodes->Get(n);
      if (misaligned_8(node.kernel()) || misaligned_8(node.strides()) || misaligned_8(node.dilations()) ||
          misaligned_8(node.pads_begin()) || misaligned_8(node.pads_end()))
        return bad("node " + std::to_string(n) + ": misaligned parameters");
    }
  return Status::Ok();
}

Status read_tensors(const fb::Graph& g, size_t constants_size, const uint8_t* constants, BlobView& view) {
  const auto* tensors = g.tensors();
  if (tensors == nullptr || tensors->size() == 0) return bad("no tensors");
  // Each delegate argument is a tensor of its own: the counts are bounded
  // before anything is sized by them.
  if (g.num_inputs() > tensors->size() || g.num_outputs() > tensors->size() - g.num_inputs())
    return bad(std::to_string(g.num_inputs()) + " inputs and " + std::to_string(g.num_outputs()) +
               " outputs but " + std::to_string(tensors->size()) + " tensors");
  view.input_tensors.assign(g.num_inputs(), UINT32_MAX);
  view.output_tensors.assign(g.num_outputs(), UINT32_MAX);
  for (uint32_t t = 0; t < tensors->size(); ++t) {
    const fb::Tensor& ft = *tensors->Get(t);
    const std::string name = "tensor " + std::to_string(t);
    TensorInfo info;
    if (ft.dims() == nullptr || ft.dims()->size() == 0 || ft.dims()->size() > kMaxTensorRank)
      return bad(name + " has no dims or more than " + std::to_string(kMaxTensorRank));
    for (int64_t d : *ft.dims()) {
      if (d < 1 || d > kMaxTensorElements) return bad(name + " has a dim of " + std::to_string(d));
      info.dims.push_back(d);
      info.numel *= d;
      if (info.numel > kMaxTensorElements) return bad(name + " is too large");
    }
    if (ft.packed_desc() != nullptr) {
      // Checked against the primitive's own descriptor when used.
      if (ft.packed_desc()->size() != sizeof(dnnl_memory_desc_t) || ft.constant_size() == 0 ||
          ft.constant_size() % sizeof(float) != 0)
        return bad(name + ": a packed constant with a malformed descriptor or size");
      info.packed_desc = ft.packed_desc()->data();
      // Shown in error messages: printable characters only.
      info.packed_for = ft.packed_for() != nullptr ? ft.packed_for()->str().substr(0, 80) : "";
      for (char& c : info.packed_for)
        if (c < 0x20 || c > 0x7e) c = '?';
      view.has_packed = true;
    }
    if (ft.constant_size() != 0) {
      const uint64_t bytes = info.packed_desc != nullptr ? ft.constant_size()
                                                         : static_cast<uint64_t>(info.numel) * sizeof(float);
      if (ft.constant_size() != bytes || ft.constant_offset() % alignof(float) != 0 ||
          ft.constant_offset() > constants_size || constants_size - ft.constant_offset() < bytes)
        return bad(name + ": its constant data is outside the blob or of the wrong size");
      if (ft.external_input() >= 0 || ft.external_output() >= 0)
        return bad(name + " is constant and external");
      info.constant = reinterpret_cast<const float*>(constants + ft.constant_offset());
      info.constant_bytes = bytes;
    }
    info.external_input = ft.external_input();
    info.external_output = ft.external_output();
    if (info.external_input >= 0 && info.external_output >= 0) return bad(name + " is both input and output");
    if (info.external_input >= 0) {
      if (static_cast<uint32_t>(info.external_input) >= g.num_inputs() ||
          view.input_tensors[static_cast<size_t>(info.external_input)] != UINT32_MAX)
        return bad(name + ": input index " + std::to_string(info.external_input) +
                   " is out of range or taken");
      view.input_tensors[static_cast<size_t>(info.external_input)] = t;
    }
    if (info.external_output >= 0) {
      if (static_cast<uint32_t>(info.external_output) >= g.num_outputs() ||
          view.output_tensors[static_cast<size_t>(info.external_output)] != UINT32_MAX)
        return bad(name + ": output index " + std::to_string(info.external_output) +
                   " is out of range or taken");
      view.output_tensors[static_cast<size_t>(info.external_output)] = t;
    }
    view.tensors.push_back(std::move(info));
  }
  for (uint32_t t : view.input_tensors)
    if (t == UINT32_MAX) return bad("a delegate input has no tensor");
  for (uint32_t t : view.output_tensors)
    if (t == UINT32_MAX) return bad("a delegate output has no tensor");
  return Status::Ok();
}

size_t count(const flatbuffers::Vector<uint32_t>* v) { return v == nullptr ? 0 : v->size(); }

// The output dims of a convolution or pooling window over `src`.
Result<std::vector<int64_t>> window_output(const fb::Node& node, const std::vector<int64_t>& src,
                                           int64_t channels, const std::string& name) {
  const size_t dims = src.size() - 2;
  const auto* k = node.kernel();
  const auto* s = node.strides();
  const auto* d = node.dilations();
  const auto* pb = node.pads_begin();
  const auto* pe = node.pads_end();
  if (k == nullptr || s == nullptr || d == nullptr || pb == nullptr || pe == nullptr || k->size() != dims ||
      s->size() != dims || d->size() != dims || pb->size() != dims || pe->size() != dims)
    return bad(name + ": window attributes do not match its " + std::to_string(dims) + " spatial dims");
  std::vector<int64_t> out = {src[0], channels};
  for (uint32_t i = 0; i < dims; ++i) {
    const int64_t kk = k->Get(i), ss = s->Get(i), dd = d->Get(i), b = pb->Get(i), e = pe->Get(i);
    if (kk < 1 || ss < 1 || dd < 1 || b < 0 || e < 0 || kk > kMaxWindow || ss > kMaxWindow ||
        dd > kMaxWindow || b > kMaxWindow || e > kMaxWindow)
      return bad(name + ": a kernel, stride, dilation or pad is out of range");
    const int64_t extent = (kk - 1) * dd + 1, padded = src[2 + i] + b + e;
    if (padded < extent) return bad(name + ": the window is larger than the padded input");
    // oneDNN requires a window to overlap the input or its begin padding.
    if (b >= extent || e >= extent) return bad(name + ": a pad is as large as the window");
    out.push_back((padded - extent) / ss + 1);
  }
  return out;
}

// The dims the node computes from its inputs, checking the inputs' shapes.
Result<std::vector<int64_t>> node_output(const fb::Node& node, const BlobView& view,
                                         const std::string& name) {
  const auto* in = node.inputs();
  auto dims = [&](uint32_t i) -> const std::vector<int64_t>& { return view.tensors[in->Get(i)].dims; };
  const size_t n = count(in);
  auto arity = [&](size_t lo, size_t hi) -> Status {
    if (n < lo || n > hi) return bad(name + " has " + std::to_string(n) + " inputs");
    return Status::Ok();
  };
  switch (node.kind()) {
    case fb::NodeKind::Convolution: {
      ETC_TRY(arity(2, 3));
      const std::vector<int64_t>&src = dims(0), &w = dims(1);
      const int64_t groups = node.groups();
      if (src.size() < 3 || w.size() != src.size() || groups < 1 || src[1] % groups != 0 ||
          w[0] % groups != 0 || w[1] * groups != src[1])
        return bad(name + ": weights " + dims_string(w) + " do not fit input " + dims_string(src) + " in " +
                   std::to_string(groups) + " groups");
      for (size_t i = 2; i < w.size(); ++i)
        if (node.kernel() == nullptr || node.kernel()->size() != w.size() - 2 ||
            node.kernel()->Get(static_cast<uint32_t>(i - 2)) != w[i])
          return bad(name + ": the kernel does not match the weights " + dims_string(w));
      if (n == 3 && dims(2) != std::vector<int64_t>{w[0]})
        return bad(name + ": the bias is not one per output");
      return window_output(node, src, w[0], name);
    }
    case fb::NodeKind::Pooling: {
      ETC_TRY(arity(1, 1));
      if (!is_pool(node.algorithm())) return bad(name + " has no pooling algorithm");
      if (dims(0).size() < 3) return bad(name + ": input of rank below 3");
      return window_output(node, dims(0), dims(0)[1], name);
    }
    case fb::NodeKind::Binary: {
      ETC_TRY(arity(2, 2));
      if (!is_binary(node.algorithm())) return bad(name + " has no binary algorithm");
      const std::vector<int64_t>&a = dims(0), &b = dims(1);
      if (a.size() != b.size()) return bad(name + ": operands of different ranks");
      for (size_t i = 0; i < a.size(); ++i)
        if (b[i] != a[i] && b[i] != 1)
          return bad(name + ": operand " + dims_string(b) + " does not broadcast into " + dims_string(a));
      return a;
    }
    case fb::NodeKind::Eltwise:
      ETC_TRY(arity(1, 1));
      if (!is_eltwise(node.algorithm())) return bad(name + " has no eltwise algorithm");
      return dims(0);
    case fb::NodeKind::Concat: {
      ETC_TRY(arity(1, 64));
      std::vector<int64_t> out = dims(0);
      if (node.axis() < 0 || static_cast<size_t>(node.axis()) >= out.size()) return bad(name + ": bad axis");
      const auto axis = static_cast<size_t>(node.axis());
      for (uint32_t i = 1; i < n; ++i) {
        const std::vector<int64_t>& d = dims(i);
        if (d.size() != out.size()) return bad(name + ": inputs of different ranks");
        for (size_t k = 0; k < d.size(); ++k)
          if (k != axis && d[k] != out[k]) return bad(name + ": input " + dims_string(d) + " does not fit");
        out[axis] += d[axis];
        if (out[axis] > kMaxTensorElements) return bad(name + ": too large");
      }
      return out;
    }
    case fb::NodeKind::InnerProduct: {
      ETC_TRY(arity(2, 3));
      const std::vector<int64_t>&src = dims(0), &w = dims(1);
      int64_t k = 1;
      for (size_t i = 1; i < src.size(); ++i) k *= src[i];
      if (src.size() < 2 || w.size() != 2 || w[1] != k)
        return bad(name + ": weights " + dims_string(w) + " do not fit input " + dims_string(src));
      if (n == 3 && dims(2) != std::vector<int64_t>{w[0]})
        return bad(name + ": the bias is not one per output");
      return std::vector<int64_t>{src[0], w[0]};
    }
    case fb::NodeKind::Softmax:
      ETC_TRY(arity(1, 1));
      if (node.axis() < 0 || static_cast<size_t>(node.axis()) >= dims(0).size())
        return bad(name + ": bad axis");
      return dims(0);
    case fb::NodeKind::Reshape:
      ETC_TRY(arity(1, 1));
      return std::vector<int64_t>{};  // checked by element count below
    case fb::NodeKind::BatchNorm: {
      ETC_TRY(arity(5, 5));
      const std::vector<int64_t>& src = dims(0);
      if (src.size() < 2) return bad(name + ": input of rank below 2");
      for (uint32_t i = 1; i < 5; ++i)
        if (dims(i) != std::vector<int64_t>{src[1]})
          return bad(name + ": a parameter is not one per channel");
      if (!std::isfinite(node.epsilon()) || node.epsilon() < 0) return bad(name + ": bad epsilon");
      return src;
    }
  }
  return bad(name + " is of an unknown kind");
}

Status read_nodes(const fb::Graph& g, BlobView& view) {
  const auto* nodes = g.nodes();
  if (nodes == nullptr || nodes->size() == 0) return bad("no nodes");
  std::vector<bool> ready(view.tensors.size(), false);
  for (size_t t = 0; t < view.tensors.size(); ++t)
    ready[t] = view.tensors[t].is_constant() || view.tensors[t].external_input >= 0;
  view.last_reader.assign(view.tensors.size(), -1);
  for (uint32_t n = 0; n < nodes->size(); ++n) {
    const fb::Node& node = *nodes->Get(n);
    const std::string name = node_name(n, node);
    if (node.kind() < fb::NodeKind::MIN || node.kind() > fb::NodeKind::MAX)
      return bad(name + ": unknown kind");
    if (count(node.inputs()) == 0 || count(node.outputs()) != 1)
      return bad(name + " needs inputs and one output");
    auto read = [&](uint32_t t) -> Status {
      if (t >= view.tensors.size())
        return bad(name + " reads tensor " + std::to_string(t) + ", which is absent");
      if (!ready[t]) return bad(name + " reads tensor " + std::to_string(t) + " before it is written");
      view.last_reader[t] = static_cast<int32_t>(n);
      return Status::Ok();
    };
    for (uint32_t t : *node.inputs()) ETC_TRY(read(t));
    const uint32_t out = node.outputs()->Get(0);
    if (out >= view.tensors.size() || ready[out])
      return bad(name + " writes tensor " + std::to_string(out) + ", which is absent, constant or written");
    ETC_ASSIGN_OR_RETURN(std::vector<int64_t> dims, node_output(node, view, name));
    const TensorInfo& o = view.tensors[out];
    if (node.kind() == fb::NodeKind::Reshape ? o.numel != view.tensors[node.inputs()->Get(0)].numel
                                             : o.dims != dims)
      return bad(name + " computes " + (dims.empty() ? std::string("other elements") : dims_string(dims)) +
                 " but its output tensor " + std::to_string(out) + " is " + dims_string(o.dims));
    if (const auto* post = node.post_ops()) {
      const bool takes = node.kind() == fb::NodeKind::Convolution ||
                         node.kind() == fb::NodeKind::InnerProduct || node.kind() == fb::NodeKind::Binary;
      if (!takes && post->size() != 0) return bad(name + " cannot take post-ops");
      if (post->size() > 8) return bad(name + " has more than 8 post-ops");
      for (const fb::PostOp* p : *post) {
        if (p == nullptr) return bad(name + ": an empty post-op");
        if (p->kind() == fb::PostOpKind::Sum) {
          ETC_TRY(read(p->operand()));
          if (view.tensors[p->operand()].dims != o.dims) return bad(name + ": a sum operand of other dims");
        } else if (p->kind() != fb::PostOpKind::Eltwise || !is_eltwise(p->algorithm())) {
          return bad(name + ": an unknown post-op");
        }
      }
    }
    ready[out] = true;
  }
  for (uint32_t t : view.output_tensors)
    if (!ready[t]) return bad("delegate output tensor " + std::to_string(t) + " is never written");
  return Status::Ok();
}

}  // namespace

std::string dims_string(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

Result<BlobView> read_onednn_blob(const void* data, size_t size) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  // The size prefix, the root offset and the file identifier.
  if (data == nullptr || size < 12) return bad("too small");
  uint32_t fb_size = 0;
  std::memcpy(&fb_size, bytes, sizeof(fb_size));
  fb_size = flatbuffers::EndianScalar(fb_size);
  if (fb_size > size - 4) return bad("its flatbuffer runs past the end");
  flatbuffers::Verifier verifier(bytes, size_t{fb_size} + 4);
  if (!flatbuffers::BufferHasIdentifier(bytes, kOnednnBlobIdentifier, /*size_prefixed=*/true) ||
      !fb::VerifySizePrefixedGraphBuffer(verifier))
    return bad("not a oneDNN blob, or damaged (the flatbuffer does not verify)");
  BlobView view;
  view.graph = fb::GetSizePrefixedGraph(bytes);
  if (view.graph->version() != kOnednnBlobVersion)
    return fail(Error::DelegateInvalidCompatibility, "onednn blob: format version ",
                std::to_string(view.graph->version()), ", this runtime reads ",
                std::to_string(kOnednnBlobVersion));
  ETC_TRY(check_alignment(*view.graph));
  const size_t base = onednn_constant_base(fb_size);
  const size_t constants_size = base < size ? size - base : 0;
  ETC_TRY(read_tensors(*view.graph, constants_size, bytes + (base < size ? base : size), view));
  view.packed_threads = view.graph->packed_threads();
  if (view.packed_threads > 1024) return bad("packed for more than 1024 threads");
  ETC_TRY(read_nodes(*view.graph, view));
  return view;
}

}  // namespace etc::onednn
