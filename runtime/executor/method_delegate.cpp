// The delegate calls of a Method: backend lookup, init, execute, destroy.
#include <algorithm>
#include <cstdlib>
#include <new>
#include <string>

#include "runtime/backend/registry.h"
#include "runtime/core/log.h"
#include "runtime/executor/method.h"
#include "runtime/executor/node_names.h"

namespace etc {
namespace {

std::string str(uint64_t v) { return std::to_string(v); }

void release_program_bytes(void* program, const void* data, size_t size) {
  static_cast<const Program*>(program)->release_pages(data, size);
}

// A backend's message, or the error's name when it gave none.
std::string reason(const Failure& failure) {
  return failure.message.empty() ? std::string(to_string(failure.code)) : failure.message;
}

// Validation made sure a delegate has inline bytes or a segment in bounds.
Span<const uint8_t> processed_bytes(const Program& program, const fb::Delegate& delegate) {
  if (delegate.segment() >= 0) return program.segment(static_cast<uint32_t>(delegate.segment()));
  if (delegate.inline_data()) return {delegate.inline_data()->data(), delegate.inline_data()->size()};
  return {};
}

// Views into the program mapping, valid while the Program lives.
std::vector<CompileSpecView> compile_spec_views(const fb::Delegate& delegate) {
  std::vector<CompileSpecView> views;
  if (!delegate.compile_specs()) return views;
  for (const fb::CompileSpec* spec : *delegate.compile_specs()) {
    CompileSpecView view;
    view.key = spec->key()->string_view();
    if (spec->value()) view.value = {spec->value()->data(), spec->value()->size()};
    views.push_back(view);
  }
  return views;
}

}  // namespace

// Every delegate's backend is looked up before any is initialised: a missing
// backend is reported at once, without paying for the other inits first.
Status Method::prepare_delegates(const Program& program, const fb::ExecutionPlan& plan) {
  size_t count = 0;
  if (plan.instructions()) {
    for (uint32_t index = 0; index < plan.instructions()->size(); ++index) {
      const fb::Instruction* ins = plan.instructions()->Get(index);
      const fb::DelegateCall* call = ins->args_as_DelegateCall();
      if (!call) continue;
      ++count;
      const std::string_view id =
          program.fb().delegates()->Get(call->delegate())->backend_id()->string_view();
      const BackendInterface* backend = get_backend_class(id);
      Error error = Error::Ok;
      std::string why;
      const auto& disabled = options_.disabled_backends;
      if (!backend) {
        error = Error::DelegateNotRegistered;
        why = "needs backend '" + std::string(id) +
              "', which is not registered (registered: " + global_backend_registry().names() + ")";
      } else if (std::find(disabled.begin(), disabled.end(), id) != disabled.end()) {
        error = Error::DelegateUnavailable;
        why = "needs backend '" + std::string(id) + "', which is disabled by the runtime options";
      } else if (!backend->is_available()) {
        error = Error::DelegateUnavailable;
        const char* reason = backend->why_unavailable();
        why = "needs backend '" + std::string(id) +
              "', which is registered but not available on this machine" +
              (reason != nullptr && reason[0] != '\0' ? std::string(": ") + reason : std::string());
      }
      if (error == Error::Ok) continue;
      // With a portable fallback the call runs that instead (create_fallback_step).
      if (call->fallback() >= 0) {
        unusable_[index] = why;
        continue;
      }
      return fail(error, program.name(), ": delegate ", str(call->delegate()), " ", why,
                  error == Error::DelegateUnavailable
                      ? " (compile with --fallback portable to run such programs anyway, more slowly)"
                      : "");
    }
  }
  if (count == 0) return Status::Ok();
  delegates_.reserve(count);
  const size_t temp_bytes = options_.temp_allocator_bytes;
  if (temp_bytes > 0) {
    temp_ = AlignedBuffer::allocate(temp_bytes);
    if (!temp_)
      return fail(Error::MemoryAllocationFailed, program.name(), ": cannot allocate the ", str(temp_bytes),
                  "-byte temp allocator for delegates");
  }
  temp_allocator_ = MemoryAllocator(temp_.data(), temp_ ? temp_bytes : 0);
  return Status::Ok();
}

Status Method::create_delegate_step(const Program& program, const fb::DelegateCall& call, uint32_t index) {
  const fb::Delegate& delegate = *program.fb().delegates()->Get(call.delegate());
  const std::string_view id = delegate.backend_id()->string_view();
  const int32_t f = call.fallback();
  if (f >= 0) {
    if (static_cast<size_t>(f) >= chains_.size() || static_cast<uint32_t>(f) <= chain_of_[index] ||
        fallback_of_chain_[static_cast<size_t>(f)] >= 0)
      return fail(Error::InvalidProgram, program.name(), ": ", describe_instruction(index),
                  ": its fallback chain ", std::to_string(f), " is not a later chain of its own (",
                  str(chains_.size()), " chains)");
    fallback_of_chain_[static_cast<size_t>(f)] = index;
  }
  if (const auto it = unusable_.find(index); it != unusable_.end())
    return create_fallback_step(call, index, it->second);
  // Reserved in prepare_delegates: no reallocation, addresses stay put.
  DelegateCall& dc = delegates_.emplace_back();
  dc.backend = get_backend_class(id);
  dc.backend_id = id;
  dc.delegate = call.delegate();
  dc.instruction = index;
  const Span<const uint8_t> bytes = processed_bytes(program, delegate);
  // The bytes live in the program: freeing them, or a part of them, returns
  // their whole pages to the operating system when the program is a mapped
  // file (they stay readable).
  dc.processed = FreeableBuffer(bytes.data(), bytes.size(), &release_program_bytes,
                                const_cast<Program*>(&program), /*releases_parts=*/true);
  Step step;
  if (call.inputs())
    for (int32_t v : *call.inputs()) {
      dc.values.emplace_back(&tensors_[static_cast<size_t>(v)]);
      step.inputs.push_back(&tensors_[static_cast<size_t>(v)]);
      dc.input_specs.push_back(tensors_[static_cast<size_t>(v)].spec);
    }
  if (call.outputs())
    for (int32_t v : *call.outputs()) {
      dc.values.emplace_back(&tensors_[static_cast<size_t>(v)]);
      step.outputs.push_back(&tensors_[static_cast<size_t>(v)]);
    }
  for (EValue& value : dc.values) dc.args.push_back(&value);

  const std::vector<CompileSpecView> specs = compile_spec_views(delegate);
  BackendInitContext context(tracer_, name_, &options_, input_min_ != input_max_);
  Result<DelegateHandle*> handle = Error::DelegateMemoryAllocationFailed;
  const uint64_t start = event_tracer_now();
  try {
    handle = dc.backend->init(context, &dc.processed, Span<const CompileSpecView>(specs));
  } catch (const std::bad_alloc&) {
    // A backend that let allocation failure escape: its handle, if any, is lost.
    handle = fail(Error::DelegateMemoryAllocationFailed, "out of memory");
  }
  if (!handle.ok()) {
    delegates_.pop_back();  // never initialised: no destroy
    if (f >= 0)
      return create_fallback_step(
          call, index,
          "needs backend '" + std::string(id) + "', which failed to initialise: " + reason(handle.failure()));
    return fail(handle.error(), program.name(), ": instruction ", str(index), ": delegate ",
                str(call.delegate()), " (backend '", id,
                "') failed to initialise: ", reason(handle.failure()));
  }
  dc.handle = handle.get();
  // At -v: which backend took each delegate, and what its init cost (for
  // XNNPACK, packing the weights).
  ETC_LOG(Info, "%s: delegate %u (backend '%.*s') initialised in %.2f ms", program.name().c_str(),
          call.delegate(), static_cast<int>(id.size()), id.data(),
          static_cast<double>(event_tracer_now() - start) / 1e6);
  step.delegate_call = static_cast<int>(delegates_.size() - 1);
  step.instruction = index;
  steps_.push_back(std::move(step));
  // The backend runs: its fallback's kernels are never created.
  if (f >= 0) chain_idle_[static_cast<size_t>(f)] = true;
  return Status::Ok();
}

Status Method::create_fallback_step(const fb::DelegateCall& call, uint32_t index, const std::string& why) {
  const Chain& chain = chains_[static_cast<size_t>(call.fallback())];
  Step step;
  step.instruction = index;
  step.fallback = call.fallback();
  if (call.inputs())
    for (int32_t v : *call.inputs()) step.inputs.push_back(&tensors_[static_cast<size_t>(v)]);
  if (call.outputs())
    for (int32_t v : *call.outputs()) step.outputs.push_back(&tensors_[static_cast<size_t>(v)]);
  if (chain.outputs.size() != step.outputs.size())
    return fail(Error::InvalidProgram, program_->name(), ": ", describe_instruction(index),
                ": its fallback gives ", str(chain.outputs.size()), " outputs for its ",
                str(step.outputs.size()));
  for (size_t k = 0; k < step.outputs.size(); ++k)
    if (!(chain.outputs[k]->spec == step.outputs[k]->spec))
      return fail(Error::InvalidProgram, program_->name(), ": ", describe_instruction(index),
                  ": its fallback's output ", str(k), " is ", chain.outputs[k]->spec.str(), ", the call's ",
                  step.outputs[k]->spec.str());
  ETC_LOG(Warning, "%s: delegate %u %s; its portable fallback runs instead (slower)",
          program_->name().c_str(), call.delegate(), why.c_str());
  steps_.push_back(std::move(step));
  return Status::Ok();
}

size_t Method::num_fallbacks_used() const {
  return static_cast<size_t>(
      std::count_if(steps_.begin(), steps_.end(), [](const Step& s) { return s.fallback >= 0; }));
}

// A fallback chain belongs to its delegate call alone.
Status Method::check_fallback_chains() const {
  for (const Control& c : controls_)
    for (uint32_t chain : c.chains)
      if (chain < fallback_of_chain_.size() && fallback_of_chain_[chain] >= 0)
        return fail(Error::InvalidProgram, program_->name(), ": ", describe_instruction(c.instruction),
                    " calls chain ", str(chain), ", the fallback of instruction ",
                    str(static_cast<uint64_t>(fallback_of_chain_[chain])));
  return Status::Ok();
}

Status Method::execute_delegate(DelegateCall& call) {
  BackendExecutionContext context(&temp_allocator_, tracer_, name_);
  const Status s = call.backend->execute(context, call.handle, Span<EValue*>(call.args));
  temp_allocator_.reset();
  if (!s.ok())
    return fail(s.error(), "instruction ", str(call.instruction), ": delegate ", str(call.delegate),
                " (backend '", call.backend_id, "') failed", describe_failed_node(call, context), ": ",
                reason(s.failure()));
  return Status::Ok();
}

// " in its node 7, ONNX node 'conv_1' (Conv)" when the backend named the
// node that failed; else " (it runs ONNX nodes 'a' (Conv), … and 9 more)".
std::string Method::describe_failed_node(const DelegateCall& call,
                                         const BackendExecutionContext& context) const {
  if (context.has_failed_node()) {
    const std::string key = context.failed_node_name().empty()
                                ? str(context.failed_node_id())
                                : "'" + std::string(context.failed_node_name()) + "'";
    const Span<const int32_t> handles = delegate_debug_handles(
        *program_, call.delegate, context.failed_node_name(), context.failed_node_id());
    const std::string nodes = describe_onnx_nodes(*program_, handles);
    if (nodes.empty()) return " in its node " + key + " (not in its debug handle map)";
    return " in its node " + key + ", " + nodes;
  }
  const std::string all = describe_instruction(call.instruction);
  const size_t from = all.find(" from ");
  return from == std::string::npos ? std::string() : " (it runs " + all.substr(from + 6) + ")";
}

std::vector<Method::DelegateActivations> Method::delegate_activations() const {
  std::vector<DelegateActivations> out;
  for (const DelegateCall& call : delegates_)
    out.push_back({call.backend_id, call.backend->activation_bytes(call.handle)});
  for (const ReplacedRange& range : replaced_)
    out.push_back({options_.delegate->name(), range.kernel->activation_bytes()});
  return out;
}

// Last initialised, first destroyed: a backend may share state between the
// handles of one Method in the order it created them.
void Method::destroy_delegates() {
  for (auto it = delegates_.rbegin(); it != delegates_.rend(); ++it) it->backend->destroy(it->handle);
  delegates_.clear();
}

}  // namespace etc
