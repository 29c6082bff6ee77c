// Load-time delegation (runtime/delegate/delegate.h): the kernel list a
// delegate sees, and the ranges it replaced put in place of their steps.
#include <algorithm>
#include <string>

#include "runtime/core/log.h"
#include "runtime/executor/method.h"

namespace etc {
namespace {

std::string str(uint64_t v) { return std::to_string(v); }

}  // namespace

DelegateModel Method::describe_kernels() const {
  DelegateModel model;
  model.options_ = &options_;
  model.may_resize_ = input_min_ != input_max_;
  const Chain& main = chains_[0];
  for (uint32_t i = main.first; i < main.first + main.count; ++i) {
    const Step& step = steps_[i];
    KernelView k;
    k.kind = step.delegate_call >= 0 || step.fallback >= 0 ? KernelKind::kDelegateCall
             : step.control >= 0                           ? KernelKind::kControlFlow
                                                           : KernelKind::kPortable;
    if (k.kind == KernelKind::kPortable) {
      k.op = step.def->op;
      k.attrs = AttrList(Span<const AttrView>(step.attrs));
    }
    k.inputs = step.inputs;
    k.outputs = step.outputs;
    for (size_t j = 0; j < step.inputs.size(); ++j)
      k.constant.push_back(j < step.constants.size() && step.constants[j] != nullptr);
    k.instruction = step.instruction;
    const fb::Instruction& ins = *plan_->instructions()->Get(step.instruction);
    if (ins.debug_handles())
      k.debug_handles = Span<const int32_t>(ins.debug_handles()->data(), ins.debug_handles()->size());
    const size_t index = model.kernels_.size();
    for (const Tensor* t : step.inputs) model.last_use_[t] = index;
    model.kernels_.push_back(std::move(k));
  }
  // What runs elsewhere reads after the main chain's kernels, as far as a
  // range of them is concerned: bodies, the control flow that runs them,
  // and the method's caller.
  constexpr size_t kEnd = DelegateModel::kReadToTheEnd;
  for (size_t i = 0; i < steps_.size(); ++i) {
    if (i >= main.first && i < main.first + main.count) continue;
    for (const Tensor* t : steps_[i].inputs) model.last_use_[t] = kEnd;
  }
  for (size_t c = 1; c < chains_.size(); ++c)
    for (const Tensor* t : chains_[c].outputs) model.last_use_[t] = kEnd;
  for (const Control& c : controls_) {
    if (c.cond) model.last_use_[c.cond] = kEnd;
    if (c.trip_count) model.last_use_[c.trip_count] = kEnd;
    for (const Tensor* t : c.carried) model.last_use_[t] = kEnd;
  }
  for (int v : inputs_) model.inputs_.push_back(&tensors_[static_cast<size_t>(v)]);
  for (int v : outputs_) {
    model.outputs_.push_back(&tensors_[static_cast<size_t>(v)]);
    model.last_use_[&tensors_[static_cast<size_t>(v)]] = kEnd;
  }
  return model;
}

Status Method::apply_runtime_delegate() {
  Delegate& d = *options_.delegate;
  const std::string name(d.name());
  if (Status s = d.init(); !s.ok()) {
    if (s.error() != Error::NotSupported)
      return fail(s.error(), program_->name(), ": load-time delegate '", name,
                  "' failed to initialise: ", s.message());
    delegate_not_used_ = s.message();
    ETC_LOG(Warning, "%s: load-time delegate '%s' is not supported here (%s); the portable kernels run",
            program_->name().c_str(), name.c_str(), s.message().c_str());
    return Status::Ok();
  }
  DelegateModel model = describe_kernels();
  if (Status s = d.build(model); !s.ok())
    return fail(s.error(), program_->name(), ": load-time delegate '", name, "': ", s.message());
  std::sort(model.replaced_.begin(), model.replaced_.end(),
            [](const ReplacedRange& a, const ReplacedRange& b) { return a.from < b.from; });
  const uint32_t first = chains_[0].first;
  const uint32_t program_delegates = program_->fb().delegates() ? program_->fb().delegates()->size() : 0;
  program_delegates_ = program_delegates;
  for (size_t r = 0; r < model.replaced_.size(); ++r) {
    ReplacedRange& range = model.replaced_[r];
    range.kernel->set_event_tracer(tracer_);
    if (tracer_ != nullptr) {
      // Its events resolve through its own map, which the ETDump keeps.
      const std::vector<DelegateKernel::DebugMapEntry> map = range.kernel->debug_handle_map();
      std::vector<DelegateMapEntryView> views;
      for (const auto& e : map)
        views.push_back({e.name.empty() ? e.id : kUnsetDelegateDebugIntId, e.name,
                         Span<const int32_t>(e.handles.data(), e.handles.size())});
      tracer_->register_load_time_delegate({static_cast<int32_t>(program_delegates + r), name,
                                            range.first_instruction, range.last_instruction,
                                            Span<const DelegateMapEntryView>(views.data(), views.size())});
    }
    Step& head = steps_[first + range.from];
    head.replacement = static_cast<int>(r);
    head.skip = static_cast<uint32_t>(range.end - range.from - 1);
    for (size_t k = range.from; k < range.end; ++k) {
      steps_[first + k].replaced = true;
      steps_[first + k].kernel.reset();  // its memory (packed weights) goes
    }
    if (Status s = range.kernel->prepare(); !s.ok())
      return fail(s.error(), program_->name(), ": load-time delegate '", name, "', instructions ",
                  str(range.first_instruction), "..", str(range.last_instruction), ": ", s.message());
  }
  replaced_ = std::move(model.replaced_);
  ETC_LOG(Info, "%s: load-time delegate '%s' replaced %zu ranges of kernels", program_->name().c_str(),
          name.c_str(), replaced_.size());
  return Status::Ok();
}

Status Method::run_replacement(const Step& step) {
  const ReplacedRange& r = replaced_[static_cast<size_t>(step.replacement)];
  if (Status s = r.kernel->execute(); !s.ok())
    return fail(s.error(), "load-time delegate '", std::string(options_.delegate->name()), "', instructions ",
                str(r.first_instruction), "..", str(r.last_instruction), ": ", s.message());
  return Status::Ok();
}

}  // namespace etc
