#include "runtime/executor/method.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "runtime/executor/node_names.h"
#include "runtime/executor/program_validation.h"

namespace etc {
namespace {

constexpr size_t kAlign = AlignedBuffer::kAlignment;

// Vectorized kernels (XNNPACK's among them) may read up to 16 bytes past the
// end of a tensor they are handed; a tensor at the very end of the arena must
// not turn that into a read past the allocation.
constexpr size_t kTailPadding = 16;

// Views of a flatbuffer attribute list; they point into the program mapping.
std::vector<AttrView> attr_views(const flatbuffers::Vector<flatbuffers::Offset<fb::Attr>>* attrs) {
  std::vector<AttrView> out;
  if (!attrs) return out;
  for (const fb::Attr* a : *attrs) {
    AttrView v;
    v.name = a->name()->string_view();
    v.kind = static_cast<AttrKind>(a->kind());
    v.i = a->i();
    v.f = a->f();
    if (a->ints()) v.ints = {a->ints()->data(), a->ints()->size()};
    if (a->floats()) v.floats = {a->floats()->data(), a->floats()->size()};
    if (a->s()) v.s = a->s()->string_view();
    out.push_back(v);
  }
  return out;
}

}  // namespace

Method::~Method() { destroy_delegates(); }

Result<std::unique_ptr<Method>> Method::init(const Program& program, int plan_index,
                                             const RuntimeOptions& options, EventTracer* tracer) {
  if (plan_index < 0 || plan_index >= program.num_plans())
    return fail(Error::InvalidArgument, "no execution plan ", std::to_string(plan_index));
  // The runtime does not throw: the containers and objects init builds may
  // (std::bad_alloc), so running out of memory here is reported, naming
  // the stage it happened in. On any failure ~Method destroys the delegate
  // handles initialised so far.
  const char* stage = "the method";
  try {
    std::unique_ptr<Method> m(new Method());
    const fb::ExecutionPlan& plan = program.plan(plan_index);
    m->program_ = &program;
    m->plan_ = &plan;
    m->options_ = options;
    m->tracer_ = tracer;
    m->name_ = plan.name() && plan.name()->size() > 0 ? plan.name()->str() : "forward";
    stage = "its values and arena";
    ETC_TRY(m->bind_values(program, plan));
    ETC_TRY(m->bind_input_bounds(plan));
    stage = "its delegates";
    ETC_TRY(m->prepare_delegates(program, plan));
    stage = "its kernels and delegate calls";
    ETC_TRY(m->create_steps(program, plan));
    stage = "its load-time delegate";
    if (options.delegate != nullptr) ETC_TRY(m->apply_runtime_delegate());
    return m;
  } catch (const std::bad_alloc&) {
    return fail(Error::MemoryAllocationFailed, program.name(), ": out of memory while setting up ", stage);
  }
}

Status Method::create_steps(const Program& program, const fb::ExecutionPlan& plan) {
  ETC_TRY(bind_chains(plan));
  fallback_of_chain_.assign(chains_.size(), -1);
  chain_idle_.assign(chains_.size(), false);
  if (!plan.instructions()) return Status::Ok();
  size_t scratch = 0;
  for (uint32_t i = 0; i < plan.instructions()->size(); ++i) {
    const fb::Instruction& ins = *plan.instructions()->Get(i);
    if (const fb::KernelCall* call = ins.args_as_KernelCall()) {
      ETC_TRY(create_kernel_step(program, *call, i));
      if (steps_.back().kernel) scratch = std::max(scratch, steps_.back().kernel->scratch_bytes());
    } else if (const fb::DelegateCall* call = ins.args_as_DelegateCall()) {
      ETC_TRY(create_delegate_step(program, *call, i));
    } else {
      ETC_TRY(create_control_step(ins, i));
    }
  }
  ETC_TRY(check_fallback_chains());
  for (const Step& step : steps_)
    if (step.kernel && step.kernel->wants_threads()) {
      acquire_kernel_pool();
      break;
    }
  if (scratch > 0) {
    scratch_ = AlignedBuffer::allocate(scratch, kTailPadding);
    if (!scratch_)
      return fail(Error::MemoryAllocationFailed, "cannot allocate ", std::to_string(scratch),
                  " bytes of kernel scratch");
  }
  return Status::Ok();
}

void Method::acquire_kernel_pool() {
  if (kernel_pool_.get() != nullptr || options_.num_threads == 1 || options_.num_threads < 0) return;
  // Empty where it cannot be made: the kernels then run on the calling thread.
  kernel_pool_ = SharedTaskPool::acquire(static_cast<size_t>(options_.num_threads));
}

Status Method::bind_values(const Program& program, const fb::ExecutionPlan& plan) {
  const size_t n = plan.values() ? plan.values()->size() : 0;
  tensors_.resize(n);
  names_.resize(n);
  // Validation put every value inside arena_size; allocating only up to the
  // last value's end keeps a damaged, huge arena_size from reaching malloc.
  size_t extent = 0;
  for (size_t i = 0; i < n; ++i) {
    const fb::Value& v = *plan.values()->Get(i);
    tensors_[i].spec = value_spec(v);
    if (v.kind() != fb::ValueKind::Constant)
      extent = std::max(extent, static_cast<size_t>(v.arena_offset()) + tensors_[i].nbytes());
  }
  arena_size_ = std::min(static_cast<size_t>(plan.arena_size()), (extent + kAlign - 1) / kAlign * kAlign);
  arena_ = AlignedBuffer::allocate(arena_size_, kTailPadding);
  if (!arena_)
    return fail(Error::MemoryAllocationFailed, "cannot allocate a ", std::to_string(arena_size_),
                "-byte arena");
  for (size_t i = 0; i < n; ++i) {
    const fb::Value& v = *plan.values()->Get(i);
    if (v.name()) names_[i] = v.name()->str();
    if (v.kind() == fb::ValueKind::Constant) {
      // Kernels never write their inputs, so constants stay in the read-only mapping.
      tensors_[i].data = const_cast<uint8_t*>(program.segment(v.segment()).data() + v.segment_offset());
    } else {
      tensors_[i].data = arena_.data() + v.arena_offset();
    }
  }
  if (plan.inputs()) inputs_.assign(plan.inputs()->begin(), plan.inputs()->end());
  if (plan.outputs()) outputs_.assign(plan.outputs()->begin(), plan.outputs()->end());
  return Status::Ok();
}

Status Method::create_kernel_step(const Program& program, const fb::KernelCall& call, uint32_t index) {
  const char* op_name = program.fb().operators()->Get(call.op())->c_str();
  const EdgeOp op = *edge_op_from_name(op_name);
  const std::string where = program.name() + ": instruction " + std::to_string(index) + " (" + op_name + ")";
  const OpDef* def = find_op_def(op);
  if (!def) return fail(Error::NotSupported, where, ": no portable kernel for this operator");

  Step step;
  step.instruction = index;
  std::vector<TensorSpec> in_specs, out_specs, inferred;
  std::vector<const Tensor*> constants;  // for Kernel::prepare: the inputs that are program constants
  if (call.inputs()) {
    for (int32_t id : *call.inputs()) {
      const Tensor* t = id < 0 ? &absent_ : &tensors_[id];
      step.inputs.push_back(t);
      in_specs.push_back(t->spec);
      const bool constant =
          id >= 0 && plan_->values()->Get(static_cast<uint32_t>(id))->kind() == fb::ValueKind::Constant;
      constants.push_back(constant ? t : nullptr);
    }
  }
  if (call.outputs()) {
    for (int32_t id : *call.outputs()) {
      step.outputs.push_back(&tensors_[id]);
      out_specs.push_back(tensors_[id].spec);
    }
  }
  step.def = def;
  step.in_specs = in_specs;
  step.attrs = attr_views(call.attrs());
  step.constants = constants;
  const AttrList attrs(step.attrs);
  inferred.resize(out_specs.size());
  Status s = infer_outputs(*def, attrs, in_specs, inferred);
  if (!s.ok()) return fail(Error::InvalidProgram, where, ": ", s.message());
  for (size_t i = 0; i < inferred.size(); ++i) {
    if (!(inferred[i] == out_specs[i]))
      return fail(Error::InvalidProgram, where, ": output ", std::to_string(i), " is declared ",
                  dtype_name(out_specs[i].dtype), out_specs[i].shape.str(), " but computes to ",
                  dtype_name(inferred[i].dtype), inferred[i].shape.str());
  }
  // An unused fallback's kernels are never created (nor their weights packed).
  if (chain_idle_[chain_of_[index]]) {
    steps_.push_back(std::move(step));
    return Status::Ok();
  }
  auto kernel = def->create(attrs, in_specs, out_specs);
  if (!kernel.ok()) return fail(kernel.error(), where, ": ", kernel.message());
  step.kernel = std::move(kernel).get();
  s = step.kernel->prepare(constants);
  if (!s.ok()) return fail(s.error(), where, ": ", s.message());
  steps_.push_back(std::move(step));
  return Status::Ok();
}

Status Method::set_input(size_t i, const TensorSpec& spec, const void* data) {
  if (i >= inputs_.size())
    return fail(Error::InvalidArgument, "input index ", std::to_string(i), " out of range (",
                std::to_string(inputs_.size()), " inputs)");
  Tensor& t = tensors_[inputs_[i]];
  if (!(spec == t.spec))
    return fail(Error::InvalidArgument, "input '", names_[inputs_[i]], "': expected ",
                dtype_name(t.spec.dtype), t.spec.shape.str(), ", got ", dtype_name(spec.dtype),
                spec.shape.str());
  if (spec.dtype == DType::Bool)
    if (const int64_t bad = first_invalid_bool(data, t.nbytes()); bad >= 0)
      return fail(Error::InvalidArgument, "input '", names_[inputs_[i]], "' is bool, but element ",
                  std::to_string(bad), " holds the byte ",
                  std::to_string(static_cast<const uint8_t*>(data)[bad]), " (a bool must be 0 or 1)");
  if (t.nbytes() > 0) std::memcpy(t.data, data, t.nbytes());
  return Status::Ok();
}

std::string Method::describe_instruction(uint32_t instruction) const {
  const fb::ExecutionPlan& plan = *plan_;
  std::string out = "instruction " + std::to_string(instruction);
  if (!plan.instructions() || instruction >= plan.instructions()->size()) return out;
  const fb::Instruction& ins = *plan.instructions()->Get(instruction);
  if (const fb::KernelCall* call = ins.args_as_KernelCall())
    out += std::string(" (") + program_->fb().operators()->Get(call->op())->c_str() + ")";
  if (ins.debug_handles()) {
    const std::string nodes =
        describe_onnx_nodes(*program_, {ins.debug_handles()->data(), ins.debug_handles()->size()});
    if (!nodes.empty()) out += " from " + nodes;
  }
  return out;
}

template <bool kTraced>
Status Method::run_step(Step& step) {
  if (step.replacement >= 0) return run_replacement(step);
  if (step.fallback >= 0) return run_fallback<kTraced>(step);
  if (step.delegate_call >= 0) return execute_delegate(delegates_[static_cast<size_t>(step.delegate_call)]);
  if (step.control >= 0) return run_control<kTraced>(controls_[static_cast<size_t>(step.control)]);
  KernelArgs args{step.inputs, step.outputs, scratch_.data(), kernel_pool_.get()};
  Status s = step.kernel->run(args);
  if (!s.ok()) return fail(s.error(), describe_instruction(step.instruction), ": ", s.message());
  return Status::Ok();
}

// With a tracer, each instruction is one profiling event (a control-flow
// instruction's spans the instructions of its chains, whose events nest in
// it) and, when the tracer asks, its outputs are logged. Without one, the
// loop stays as lean as it was before tracing existed.
template <bool kTraced>
Status Method::run_step_traced_if(Step& step) {
  if constexpr (!kTraced) {
    return run_step<false>(step);
  } else {
    EventTracer& tracer = *tracer_;
    const auto instruction = static_cast<int32_t>(step.instruction);
    // A load-time delegated range is numbered after the program's delegates.
    const int32_t delegate =
        step.delegate_call >= 0
            ? static_cast<int32_t>(delegates_[static_cast<size_t>(step.delegate_call)].delegate)
        : step.replacement >= 0 ? static_cast<int32_t>(program_delegates_) + step.replacement
                                : -1;
    tracer.set_instruction(instruction, delegate);
    const EventTracerEntry event = tracer.start_profiling(instruction);
    const Status status = run_step<true>(step);
    // A control-flow step's chains set the tracer's instruction as they run.
    if (step.control >= 0) tracer.set_instruction(instruction, delegate);
    tracer.end_profiling(event);
    if (!status.ok()) return status;
    // A replaced range's first step need not have computed its own outputs.
    if (tracer.intermediate_outputs() && step.replacement < 0)
      for (size_t k = 0; k < step.outputs.size(); ++k)
        tracer.log_instruction_output(instruction, static_cast<int32_t>(k), *step.outputs[k]);
    return status;
  }
}

template <bool kTraced>
Status Method::run_chain(uint32_t chain) {
  const Chain& c = chains_[chain];
  for (uint32_t i = c.first; i < c.first + c.count; i += 1 + steps_[i].skip)
    ETC_TRY(run_step_traced_if<kTraced>(steps_[i]));
  return Status::Ok();
}

template Status Method::run_chain<false>(uint32_t);
template Status Method::run_chain<true>(uint32_t);

Status Method::execute() {
  if (tracer_ == nullptr) return run_chain<false>(0);
  tracer_->begin_run();
  const Status status = run_chain<true>(0);
  tracer_->set_instruction(-1, -1);
  tracer_->end_run();
  return status;
}

}  // namespace etc
