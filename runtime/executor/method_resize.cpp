// Bounded dynamic shapes of a Method: input bounds, and re-running every
// instruction's shape function when an input changes shape.
#include <algorithm>
#include <new>
#include <string>

#include "runtime/core/log.h"
#include "runtime/executor/method.h"

namespace etc {
namespace {

std::string str(uint64_t v) { return std::to_string(v); }

}  // namespace

Status Method::bind_input_bounds(const fb::ExecutionPlan& plan) {
  capacity_.resize(tensors_.size());
  for (size_t v = 0; v < tensors_.size(); ++v) capacity_[v] = tensors_[v].nbytes();
  for (int32_t id : inputs_) {
    const fb::Value& value = *plan.values()->Get(static_cast<uint32_t>(id));
    const Shape& max = tensors_[static_cast<size_t>(id)].spec.shape;
    input_max_.push_back(max);
    if (!value.min_shape()) {
      input_min_.push_back(max);
      continue;
    }
    const auto& min = *value.min_shape();
    if (min.size() != static_cast<size_t>(max.rank()))
      return fail(Error::InvalidProgram, program_->name(), ": input '", names_[static_cast<size_t>(id)],
                  "' has a smallest shape of rank ", str(min.size()), " for its shape ", max.str());
    Shape shape;
    for (int d = 0; d < max.rank(); ++d) {
      const int64_t lo = min.Get(static_cast<uint32_t>(d));
      if (lo < 0 || lo > max[d])
        return fail(Error::InvalidProgram, program_->name(), ": input '", names_[static_cast<size_t>(id)],
                    "' dim ", str(static_cast<uint64_t>(d)), " has the range ", std::to_string(lo), "..",
                    std::to_string(max[d]));
      shape.push_back(lo);
    }
    input_min_.push_back(shape);
  }
  return Status::Ok();
}

Status Method::resize_input(size_t i, const Shape& shape) {
  if (i >= inputs_.size())
    return fail(Error::InvalidArgument, "input index ", str(i), " out of range (", str(inputs_.size()),
                " inputs)");
  Tensor& t = tensors_[static_cast<size_t>(inputs_[i])];
  const std::string& name = names_[static_cast<size_t>(inputs_[i])];
  if (shape == t.spec.shape) return Status::Ok();
  const Shape& lo = input_min_[i];
  const Shape& hi = input_max_[i];
  if (lo == hi)
    return fail(Error::InvalidArgument, "input '", name, "' has the fixed shape ", hi.str(), ", not ",
                shape.str(), " (compile it with a range, --input-shape ", name,
                "=A..B per dimension, to run other sizes)");
  if (shape.rank() != hi.rank())
    return fail(Error::InvalidArgument, "input '", name, "' has rank ", str(static_cast<uint64_t>(hi.rank())),
                ", not ", str(static_cast<uint64_t>(shape.rank())), " (", shape.str(), ")");
  for (int d = 0; d < hi.rank(); ++d)
    if (shape[d] < lo[d] || shape[d] > hi[d])
      return fail(Error::InvalidArgument, "input '", name, "' dim ", str(static_cast<uint64_t>(d)), " is ",
                  std::to_string(shape[d]), ", outside the compiled range ", std::to_string(lo[d]),
                  lo[d] == hi[d] ? "" : ".." + std::to_string(hi[d]), " (shape ", shape.str(), ", smallest ",
                  lo.str(), ", largest ", hi.str(), ")");
  const Shape previous = t.spec.shape;
  t.spec.shape = shape;
  Status s = Status::Ok();
  const uint64_t start = event_tracer_now();
  try {
    s = reinfer();
  } catch (const std::bad_alloc&) {
    s = fail(Error::MemoryAllocationFailed, "out of memory while resizing input '", name, "'");
  }
  if (s.ok()) {
    // At -v: what a resize cost (kernels re-created, delegates resized).
    ETC_LOG(Info, "%s: input '%s' resized from %s to %s in %.2f ms", program_->name().c_str(), name.c_str(),
            previous.str().c_str(), shape.str().c_str(),
            static_cast<double>(event_tracer_now() - start) / 1e6);
    return s;
  }
  // Back to the shapes that worked: they re-infer as they did before.
  t.spec.shape = previous;
  (void)reinfer();
  return fail(s.error(), "resizing input '", name, "' to ", shape.str(), ": ", s.message());
}

Status Method::reinfer() {
  ETC_TRY(reinfer_chain(0));
  size_t scratch = 0;
  for (const Step& step : steps_)
    if (step.kernel) scratch = std::max(scratch, step.kernel->scratch_bytes());
  if (scratch > scratch_.size()) {
    AlignedBuffer bigger = AlignedBuffer::allocate(scratch, 16);  // the tail padding init gives it
    if (!bigger)
      return fail(Error::MemoryAllocationFailed, "cannot allocate ", str(scratch),
                  " bytes of kernel scratch");
    scratch_ = std::move(bigger);
  }
  return Status::Ok();
}

Status Method::set_spec(Tensor& t, const TensorSpec& spec, uint32_t instruction) {
  const size_t v = static_cast<size_t>(&t - tensors_.data());
  if (spec.nbytes() > capacity_[v])
    return fail(Error::InvalidArgument, describe_instruction(instruction), ": its output '", names_[v],
                "' would be ", spec.str(), ", more than the ", str(capacity_[v]), " bytes planned for it (",
                t.spec.str(), " at the largest input)");
  t.spec = spec;
  return Status::Ok();
}

Status Method::reinfer_chain(uint32_t chain) {
  const Chain& c = chains_[chain];
  for (uint32_t i = c.first; i < c.first + c.count; ++i) {
    ETC_TRY(reinfer_step(steps_[i]));
    if (steps_[i].replacement < 0) continue;
    // A replaced range: its steps' shape functions, then its kernel.
    const ReplacedRange& r = replaced_[static_cast<size_t>(steps_[i].replacement)];
    for (uint32_t k = 1; k <= steps_[i].skip; ++k) ETC_TRY(reinfer_step(steps_[i + k]));
    if (Status s = r.kernel->resize(); !s.ok())
      return fail(s.error(), "load-time delegate '", std::string(options_.delegate->name()),
                  "', instructions ", str(r.first_instruction), "..", str(r.last_instruction), ": ",
                  s.message());
    i += steps_[i].skip;
  }
  return Status::Ok();
}

Status Method::reinfer_step(Step& step) {
  if (step.delegate_call >= 0) {
    DelegateCall& dc = delegates_[static_cast<size_t>(step.delegate_call)];
    bool changed = false;
    for (size_t k = 0; k < step.inputs.size(); ++k)
      changed = changed || !(step.inputs[k]->spec == dc.input_specs[k]);
    if (!changed) return Status::Ok();
    std::vector<TensorSpec> before;
    for (const Tensor* out : step.outputs) before.push_back(out->spec);
    if (Status s = dc.backend->resize(dc.handle, Span<EValue*>(dc.args)); !s.ok())
      return fail(s.error(), describe_instruction(step.instruction), ": delegate ", str(dc.delegate),
                  " (backend '", dc.backend_id, "'): ", s.message());
    for (size_t k = 0; k < step.outputs.size(); ++k) {
      const TensorSpec resized = step.outputs[k]->spec;
      step.outputs[k]->spec = before[k];
      ETC_TRY(set_spec(*step.outputs[k], resized, step.instruction));
    }
    for (size_t k = 0; k < step.inputs.size(); ++k) dc.input_specs[k] = step.inputs[k]->spec;
    return Status::Ok();
  }
  if (step.fallback >= 0) {
    const auto f = static_cast<uint32_t>(step.fallback);
    ETC_TRY(reinfer_chain(f));
    for (size_t k = 0; k < step.outputs.size(); ++k)
      ETC_TRY(set_spec(*step.outputs[k], chains_[f].outputs[k]->spec, step.instruction));
    return Status::Ok();
  }
  if (step.control >= 0) {
    const Control& c = controls_[static_cast<size_t>(step.control)];
    if (!c.is_loop) {
      ETC_TRY(reinfer_chain(c.chains[0]));
      ETC_TRY(reinfer_chain(c.chains[1]));
      const Chain& then_chain = chains_[c.chains[0]];
      const Chain& else_chain = chains_[c.chains[1]];
      for (size_t k = 0; k < c.outputs.size(); ++k) {
        // A branch that cannot run (c.errors) has stand-in outputs: the other decides.
        const TensorSpec& a = (c.errors[0].empty() ? then_chain : else_chain).outputs[k]->spec;
        const TensorSpec& b = (c.errors[1].empty() ? else_chain : then_chain).outputs[k]->spec;
        if (!(a == b))
          return fail(Error::InvalidArgument, describe_instruction(step.instruction), ": output ", str(k),
                      " is ", a.str(), " in the then branch but ", b.str(),
                      " in the else branch at these shapes");
        ETC_TRY(set_spec(*c.outputs[k], a, step.instruction));
      }
      return Status::Ok();
    }
    const Chain& body = chains_[c.chains[0]];
    const size_t n = c.carried.size();
    for (size_t k = 0; k < n; ++k)
      ETC_TRY(set_spec(*body.inputs[2 + k], c.carried[k]->spec, step.instruction));
    ETC_TRY(reinfer_chain(c.chains[0]));
    for (size_t k = 0; k < n; ++k) {
      if (!(body.outputs[1 + k]->spec == body.inputs[2 + k]->spec))
        return fail(Error::InvalidArgument, describe_instruction(step.instruction), ": carried value ",
                    str(k), " enters the body as ", body.inputs[2 + k]->spec.str(), " and leaves it as ",
                    body.outputs[1 + k]->spec.str(), " at these shapes");
      ETC_TRY(set_spec(*c.outputs[k], body.inputs[2 + k]->spec, step.instruction));
    }
    for (size_t j = n; j < c.outputs.size(); ++j) {
      TensorSpec stacked{body.outputs[1 + j]->spec.dtype, Shape{c.outputs[j]->spec.shape[0]}};
      for (int64_t d : body.outputs[1 + j]->spec.shape) stacked.shape.push_back(d);
      ETC_TRY(set_spec(*c.outputs[j], stacked, step.instruction));
    }
    return Status::Ok();
  }
  std::vector<TensorSpec> in_specs, out_specs(step.outputs.size());
  for (const Tensor* t : step.inputs) in_specs.push_back(t->spec);
  const AttrList attrs(step.attrs);
  if (Status s = infer_outputs(*step.def, attrs, in_specs, out_specs); !s.ok())
    return fail(s.error(), describe_instruction(step.instruction), ": ", s.message());
  for (size_t k = 0; k < out_specs.size(); ++k)
    ETC_TRY(set_spec(*step.outputs[k], out_specs[k], step.instruction));
  if (in_specs == step.in_specs || step.replaced) return Status::Ok();
  // Kernels plan for their shapes when created: new shapes get a new kernel.
  auto kernel = step.def->create(attrs, in_specs, out_specs);
  if (!kernel.ok())
    return fail(kernel.error(), describe_instruction(step.instruction), ": ", kernel.message());
  std::unique_ptr<Kernel> created = std::move(kernel).get();
  if (Status s = created->prepare(step.constants); !s.ok())
    return fail(s.error(), describe_instruction(step.instruction), ": ", s.message());
  if (created->wants_threads()) acquire_kernel_pool();
  step.kernel = std::move(created);
  step.in_specs = std::move(in_specs);
  return Status::Ok();
}

}  // namespace etc
