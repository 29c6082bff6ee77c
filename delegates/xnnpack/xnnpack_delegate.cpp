#include "delegates/xnnpack/xnnpack_delegate.h"

#include <unordered_map>
#include <unordered_set>

#include "compiler/backend/to_backend.h"
#include "compiler/common/compile_error.h"
#include "partitioners/xnnpack/xnnpack_partitioner.h"
#include "preprocessors/register.h"
#include "runtime/backends/xnnpack/xnnpack_backend.h"

namespace etc::xnnpack {
namespace {

// A run of kernels on the XNNPACK backend: its blob, lowered at load time,
// initialised at prepare.
class RunKernel : public DelegateKernel {
 public:
  RunKernel(KernelRange io, std::vector<uint8_t> blob, std::vector<DebugMapEntry> map,
            const RuntimeOptions& options, bool may_resize)
      : DelegateKernel(io.inputs, io.outputs),
        blob_(std::move(blob)),
        map_(std::move(map)),
        options_(options),
        may_resize_(may_resize) {
    for (const Tensor* t : inputs()) values_.emplace_back(const_cast<Tensor*>(t));  // read only
    for (Tensor* t : outputs()) values_.emplace_back(t);
    for (EValue& v : values_) args_.push_back(&v);
  }
  ~RunKernel() override {
    if (handle_ != nullptr) backend_->destroy(handle_);
  }

  Status prepare() override {
    FreeableBuffer processed(blob_.data(), blob_.size());
    BackendInitContext context(event_tracer(), "forward", &options_, may_resize_);
    ETC_ASSIGN_OR_RETURN(handle_, backend_->init(context, &processed, {}));
    // The backend frees the bytes it no longer reads (it keeps reading
    // them to resize, or for weights packed ahead of time).
    if (processed.data() == nullptr) std::vector<uint8_t>().swap(blob_);
    return Status::Ok();
  }
  Status execute() override {
    BackendExecutionContext context(nullptr, event_tracer(), "forward");
    return backend_->execute(context, handle_, Span<EValue*>(args_));
  }
  Status resize() override { return backend_->resize(handle_, Span<EValue*>(args_)); }
  std::optional<size_t> activation_bytes() const override { return backend_->activation_bytes(handle_); }
  std::vector<DebugMapEntry> debug_handle_map() const override { return map_; }

 private:
  BackendInterface* backend_ = xnnpack_backend();
  std::vector<uint8_t> blob_;
  std::vector<DebugMapEntry> map_;  // the preprocess's, by the blob's node debug ids
  RuntimeOptions options_;
  bool may_resize_;
  std::vector<EValue> values_;
  std::vector<EValue*> args_;
  DelegateHandle* handle_ = nullptr;
};

ir::Attrs attrs_of(const AttrList& list) {
  ir::Attrs attrs;
  for (const AttrView& a : list.all()) {
    const std::string name(a.name);
    switch (a.kind) {
      case AttrKind::Int: attrs.set(name, a.i); break;
      case AttrKind::Float: attrs.set(name, a.f); break;
      case AttrKind::Ints: attrs.set(name, std::vector<int64_t>(a.ints.begin(), a.ints.end())); break;
      case AttrKind::Floats: attrs.set(name, std::vector<float>(a.floats.begin(), a.floats.end())); break;
      case AttrKind::String: attrs.set(name, std::string(a.s)); break;
    }
  }
  return attrs;
}

// The IR's copy of each program constant, made once and shared by every
// program rebuilt from the kernels.
using ConstantCopies = std::unordered_map<const Tensor*, ir::ConstantData>;

// Kernels [from, end) of `model` as an edge program: the range's inputs as
// graph inputs (program constants as constants), its outputs as graph
// outputs. Values are named "v<N>", N indexing `tensors`.
struct Rebuilt {
  ir::ExportedProgram program;
  std::vector<const Tensor*> tensors;
  std::vector<ir::NodeId> node_of;  // per kernel of the range
};

Rebuilt rebuild(const DelegateModel& model, size_t from, size_t end, const KernelRange* io,
                ConstantCopies& copies) {
  Rebuilt r;
  r.program.source_path = "load-time delegate 'xnnpack'";
  ir::Graph& g = r.program.graph;
  std::unordered_map<const Tensor*, ir::ValueId> value_of;
  std::unordered_set<const Tensor*> constants;
  for (size_t k = from; k < end; ++k)
    for (size_t j = 0; j < model.kernel(k).inputs.size(); ++j)
      if (model.kernel(k).constant[j]) constants.insert(model.kernel(k).inputs[j]);
  auto value = [&](const Tensor* t) -> ir::ValueId {
    if (const auto it = value_of.find(t); it != value_of.end()) return it->second;
    const std::string name = "v" + std::to_string(r.tensors.size());
    r.tensors.push_back(t);
    ir::ValueId id = ir::kNoValue;
    if (constants.count(t)) {
      ir::ConstantData& data = copies[t];
      if (!data) {
        const auto* bytes = static_cast<const uint8_t*>(t->data);
        data = std::make_shared<const std::vector<uint8_t>>(bytes, bytes + t->nbytes());
      }
      id = g.add_constant(name, t->spec, data);
    } else {
      id = g.add_value(name, t->spec);
    }
    value_of[t] = id;
    return id;
  };
  if (io)
    for (const Tensor* t : io->inputs)
      if (!constants.count(t)) g.inputs().push_back(value(t));
  for (size_t k = from; k < end; ++k) {
    const KernelView& kernel = model.kernel(k);
    if (kernel.kind != KernelKind::kPortable) {
      r.node_of.push_back(-1);
      continue;
    }
    std::vector<ir::ValueId> ins, outs;
    for (const Tensor* t : kernel.inputs) ins.push_back(t->present() ? value(t) : ir::kNoValue);
    for (const Tensor* t : kernel.outputs) outs.push_back(value(t));
    ir::NodeMeta meta;
    meta.debug_handles.assign(kernel.debug_handles.begin(), kernel.debug_handles.end());
    r.node_of.push_back(g.add_node(kernel.op, ins, outs, attrs_of(kernel.attrs), std::move(meta)));
  }
  if (io)
    for (const Tensor* t : io->outputs) g.outputs().push_back(value(t));
  return r;
}

}  // namespace

Status XnnpackDelegate::init() {
  if (!xnnpack_backend()->is_available()) return fail(Error::NotSupported, "XNNPACK cannot run on this CPU");
  register_xnnpack_preprocessor();
  return Status::Ok();
}

Status XnnpackDelegate::build(DelegateModel& model) {
  runs_.clear();
  // The node rule, on every kernel in its context.
  ConstantCopies copies;
  const Rebuilt all = rebuild(model, 0, model.num_kernels(), nullptr, copies);
  std::vector<bool> taken(model.num_kernels(), false);
  for (size_t k = 0; k < model.num_kernels(); ++k)
    taken[k] =
        all.node_of[k] >= 0 &&
        XnnpackPartitioner::is_supported(all.program.graph, all.program.graph.node(all.node_of[k])).supported;
  for (size_t k = 0; k < model.num_kernels();) {
    if (!taken[k]) {
      ++k;
      continue;
    }
    Run run{k, k, false, {}};
    while (run.end < model.num_kernels() && taken[run.end]) ++run.end;
    k = run.end;
    ETC_ASSIGN_OR_RETURN(const KernelRange io, model.range(run.from, run.end));
    try {
      const Rebuilt part = rebuild(model, run.from, run.end, &io, copies);
      const ir::ExportedProgram lowered = to_backend("xnnpack", part.program, {});
      if (lowered.delegates.size() != 1) throw CompileError("the run did not lower to one delegate");
      // The delegate's arguments, in its order: the call's inputs, then outputs.
      const ir::Node* call = nullptr;
      for (const ir::Node& n : lowered.graph.nodes())
        if (!n.dead && n.is_delegate_call()) call = &n;
      if (call == nullptr) throw CompileError("the run left no delegate call");
      auto tensor = [&](ir::ValueId v) {
        return part.tensors[std::stoul(lowered.graph.value(v).name.substr(1))];
      };
      KernelRange args;
      for (ir::ValueId v : call->inputs) args.inputs.push_back(tensor(v));
      for (ir::ValueId v : call->outputs) args.outputs.push_back(const_cast<Tensor*>(tensor(v)));
      std::vector<DelegateKernel::DebugMapEntry> map;
      if (const auto* ids = std::get_if<IntDelegateDebugMap>(&lowered.delegates[0].debug_handle_map))
        for (const auto& [id, handles] : *ids) map.push_back({id, {}, handles});
      ETC_TRY(
          model.replace(run.from, run.end,
                        std::make_unique<RunKernel>(std::move(args), lowered.delegates[0].processed_bytes,
                                                    std::move(map), model.options(), model.may_resize())));
      run.taken = true;
    } catch (const CompileError& e) {
      run.reason = e.what();
    }
    runs_.push_back(std::move(run));
  }
  return Status::Ok();
}

}  // namespace etc::xnnpack
