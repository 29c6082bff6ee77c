// Control flow of a Method: chains of instructions, If and Loop
// (runtime/schema/program.fbs has the conventions).
#include <algorithm>
#include <climits>
#include <cstring>
#include <string>

#include "runtime/executor/method.h"

namespace etc {
namespace {

std::string str(uint64_t v) { return std::to_string(v); }

// Nested control flow recurses once per level; a program deeper than this
// is refused at init rather than allowed to exhaust the stack.
constexpr uint32_t kMaxNesting = 64;

bool holds_one(const Tensor& t, DType dtype) { return t.spec.dtype == dtype && t.spec.shape.numel() == 1; }

void copy_tensor(Tensor& to, const Tensor& from) {
  if (to.data != from.data && to.nbytes() > 0) std::memmove(to.data, from.data, to.nbytes());
}

}  // namespace

Status Method::bind_chains(const fb::ExecutionPlan& plan) {
  const uint32_t num_instructions = plan.instructions() ? plan.instructions()->size() : 0;
  chain_of_.assign(num_instructions, 0);
  if (!plan.chains() || plan.chains()->size() == 0) {
    chains_.push_back(Chain{0, num_instructions, {}, {}});
    chain_depth_.assign(1, 0);
    return Status::Ok();
  }
  chain_depth_.assign(plan.chains()->size(), 0);
  uint32_t next = 0;
  for (uint32_t c = 0; c < plan.chains()->size(); ++c) {
    const fb::Chain& fc = *plan.chains()->Get(c);
    if (fc.first() != next || fc.count() > num_instructions - next)
      return fail(Error::InvalidProgram, program_->name(), ": chain ", str(c), " covers instructions ",
                  str(fc.first()), "+", str(fc.count()), "; chains must follow each other from 0 to ",
                  str(num_instructions));
    Chain chain{fc.first(), fc.count(), {}, {}};
    for (auto [ids, inputs] : {std::pair{fc.inputs(), true}, std::pair{fc.outputs(), false}}) {
      if (!ids) continue;
      for (int32_t id : *ids) {
        if (id < 0 || static_cast<size_t>(id) >= tensors_.size())
          return fail(Error::InvalidProgram, program_->name(), ": chain ", str(c), " refers to value ",
                      std::to_string(id), " of ", str(tensors_.size()));
        if (inputs) {
          const fb::ValueKind kind = plan_->values()->Get(static_cast<uint32_t>(id))->kind();
          if (kind == fb::ValueKind::Constant || kind == fb::ValueKind::Input)
            return fail(Error::InvalidProgram, program_->name(), ": chain ", str(c),
                        " takes constant or input value ", std::to_string(id), " as an input it writes");
          chain.inputs.push_back(&tensors_[static_cast<size_t>(id)]);
        } else {
          chain.outputs.push_back(&tensors_[static_cast<size_t>(id)]);
        }
      }
    }
    for (uint32_t i = fc.first(); i < fc.first() + fc.count(); ++i) chain_of_[i] = c;
    next = fc.first() + fc.count();
    chains_.push_back(std::move(chain));
  }
  if (next != num_instructions)
    return fail(Error::InvalidProgram, program_->name(), ": chains cover ", str(next), " of ",
                str(num_instructions), " instructions");
  return Status::Ok();
}

Status Method::create_control_step(const fb::Instruction& ins, uint32_t index) {
  const std::string where = program_->name() + ": " + describe_instruction(index);
  auto value = [&](int32_t id, bool allow_absent) -> Result<Tensor*> {
    if (id == -1 && allow_absent) return static_cast<Tensor*>(nullptr);
    if (id < 0 || static_cast<size_t>(id) >= tensors_.size())
      return fail(Error::InvalidProgram, where, ": refers to value ", std::to_string(id), " of ",
                  str(tensors_.size()));
    return &tensors_[static_cast<size_t>(id)];
  };
  auto chain = [&](uint32_t c) -> Status {
    if (c >= chains_.size() || c <= chain_of_[index])
      return fail(Error::InvalidProgram, where, ": calls chain ", str(c), " from chain ",
                  str(chain_of_[index]), " (a call must go to a later chain of the ", str(chains_.size()),
                  ")");
    return Status::Ok();
  };
  Control control;
  const flatbuffers::Vector<int32_t>* outputs = nullptr;
  if (const fb::IfCall* call = ins.args_as_IfCall()) {
    ETC_ASSIGN_OR_RETURN(Tensor * cond, value(call->cond(), false));
    control.cond = cond;
    ETC_TRY(chain(call->then_chain()));
    ETC_TRY(chain(call->else_chain()));
    control.chains[0] = call->then_chain();
    control.chains[1] = call->else_chain();
    if (call->then_error()) control.errors[0] = call->then_error()->string_view();
    if (call->else_error()) control.errors[1] = call->else_error()->string_view();
    outputs = call->outputs();
  } else if (const fb::LoopCall* call = ins.args_as_LoopCall()) {
    control.is_loop = true;
    ETC_ASSIGN_OR_RETURN(Tensor * trip, value(call->trip_count(), true));
    ETC_ASSIGN_OR_RETURN(Tensor * cond, value(call->cond(), true));
    control.trip_count = trip;
    control.cond = cond;
    ETC_TRY(chain(call->body()));
    control.chains[0] = call->body();
    if (call->carried())
      for (int32_t id : *call->carried()) {
        ETC_ASSIGN_OR_RETURN(Tensor * t, value(id, false));
        control.carried.push_back(t);
      }
    outputs = call->outputs();
  } else {
    return fail(Error::InvalidProgram, where, ": unknown instruction kind");
  }
  // Callers come before callees, so every caller of this instruction's
  // chain has set its depth by now.
  const uint32_t depth = chain_depth_[chain_of_[index]] + 1;
  if (depth > kMaxNesting)
    return fail(Error::InvalidProgram, where, ": control flow nests deeper than ", str(kMaxNesting),
                " levels");
  for (uint32_t c : control.chains) chain_depth_[c] = std::max(chain_depth_[c], depth);
  control.instruction = index;
  Step step;
  step.instruction = index;
  if (outputs)
    for (int32_t id : *outputs) {
      ETC_ASSIGN_OR_RETURN(Tensor * t, value(id, false));
      const fb::ValueKind kind = plan_->values()->Get(static_cast<uint32_t>(id))->kind();
      if (kind == fb::ValueKind::Constant || kind == fb::ValueKind::Input)
        return fail(Error::InvalidProgram, where, ": writes to constant or input value ", std::to_string(id));
      control.outputs.push_back(t);
      step.outputs.push_back(t);
    }
  ETC_TRY(check_control(control, index));
  step.control = static_cast<int>(controls_.size());
  controls_.push_back(std::move(control));
  steps_.push_back(std::move(step));
  return Status::Ok();
}

// Types and counts, so execute can copy without checks.
Status Method::check_control(const Control& c, uint32_t index) const {
  const std::string where = program_->name() + ": " + describe_instruction(index);
  if (c.cond && !holds_one(*c.cond, DType::Bool))
    return fail(Error::InvalidProgram, where, ": the condition is ", c.cond->spec.str(), ", not one bool");
  auto check_outputs = [&](const Chain& chain, size_t first, size_t count, size_t out_first,
                           const char* what) -> Status {
    for (size_t k = 0; k < count; ++k) {
      const TensorSpec& from = chain.outputs[first + k]->spec;
      const TensorSpec& to = c.outputs[out_first + k]->spec;
      if (!(from == to))
        return fail(Error::InvalidProgram, where, ": ", what, " output ", str(first + k), " is ", from.str(),
                    " but the instruction's output ", str(out_first + k), " is ", to.str());
    }
    return Status::Ok();
  };
  if (!c.is_loop) {
    for (uint32_t chain : c.chains) {
      const Chain& ch = chains_[chain];
      if (ch.outputs.size() != c.outputs.size())
        return fail(Error::InvalidProgram, where, ": branch chain ", str(chain), " has ",
                    str(ch.outputs.size()), " outputs, the If ", str(c.outputs.size()));
      ETC_TRY(check_outputs(ch, 0, ch.outputs.size(), 0, "branch"));
    }
    return Status::Ok();
  }
  if (c.trip_count && !holds_one(*c.trip_count, DType::Int64))
    return fail(Error::InvalidProgram, where, ": the trip count is ", c.trip_count->spec.str(),
                ", not one int64");
  const Chain& body = chains_[c.chains[0]];
  const size_t n = c.carried.size();
  if (body.inputs.size() != 2 + n || body.outputs.size() < 1 + n || c.outputs.size() < n ||
      body.outputs.size() - 1 - n != c.outputs.size() - n)
    return fail(Error::InvalidProgram, where, ": the loop carries ", str(n), " value(s) and has ",
                str(c.outputs.size()), " output(s), its body takes ", str(body.inputs.size()), " and gives ",
                str(body.outputs.size()));
  if (!holds_one(*body.inputs[0], DType::Int64) || !holds_one(*body.inputs[1], DType::Bool) ||
      !holds_one(*body.outputs[0], DType::Bool))
    return fail(Error::InvalidProgram, where,
                ": the body's iteration and condition are not one int64 and bools");
  for (size_t k = 0; k < n; ++k)
    if (!(c.carried[k]->spec == body.inputs[2 + k]->spec))
      return fail(Error::InvalidProgram, where, ": carried value ", str(k), " is ", c.carried[k]->spec.str(),
                  " but the body takes ", body.inputs[2 + k]->spec.str());
  ETC_TRY(check_outputs(body, 1, n, 0, "body"));
  for (size_t k = 0; k < n; ++k)
    if (!(body.outputs[1 + k]->spec == body.inputs[2 + k]->spec))
      return fail(Error::InvalidProgram, where, ": the body gives carried value ", str(k), " as ",
                  body.outputs[1 + k]->spec.str(), " but takes it as ", body.inputs[2 + k]->spec.str());
  for (size_t j = n; j < c.outputs.size(); ++j) {
    const TensorSpec& row = body.outputs[1 + j]->spec;
    const TensorSpec& all = c.outputs[j]->spec;
    bool ok = all.dtype == row.dtype && all.shape.rank() == row.shape.rank() + 1;
    for (int d = 0; ok && d < row.shape.rank(); ++d) ok = all.shape[d + 1] == row.shape[d];
    if (!ok)
      return fail(Error::InvalidProgram, where, ": scan output ", str(j - n), " is ", all.str(),
                  ", not rows of the body's ", row.str());
  }
  return Status::Ok();
}

template <bool kTraced>
Status Method::run_control(const Control& c) {
  if (!c.is_loop) {
    const bool taken = *static_cast<const uint8_t*>(c.cond->data) != 0;
    const uint32_t chain = c.chains[taken ? 0 : 1];
    if (!c.errors[taken ? 0 : 1].empty())
      return fail(Error::NotSupported, describe_instruction(c.instruction), ": takes its ",
                  taken ? "then" : "else",
                  " branch, which this program cannot run (it did not compile for the ",
                  "program's shapes): ", c.errors[taken ? 0 : 1]);
    ETC_TRY(run_chain<kTraced>(chain));
    const Chain& ch = chains_[chain];
    for (size_t k = 0; k < c.outputs.size(); ++k) copy_tensor(*c.outputs[k], *ch.outputs[k]);
    return Status::Ok();
  }
  const Chain& body = chains_[c.chains[0]];
  const size_t n = c.carried.size();
  const int64_t trips = c.trip_count ? *static_cast<const int64_t*>(c.trip_count->data) : INT64_MAX;
  bool cond = c.cond ? *static_cast<const uint8_t*>(c.cond->data) != 0 : true;
  for (size_t k = 0; k < n; ++k) copy_tensor(*body.inputs[2 + k], *c.carried[k]);
  const int64_t limit = options_.max_loop_iterations > 0 ? options_.max_loop_iterations : INT64_MAX;
  int64_t i = 0;
  for (; i < trips && cond; ++i) {
    if (i >= limit)
      return fail(Error::InvalidArgument, describe_instruction(c.instruction), ": stopped after ",
                  std::to_string(limit), " iterations (the limit the runtime options set)");
    *static_cast<int64_t*>(body.inputs[0]->data) = i;
    *static_cast<uint8_t*>(body.inputs[1]->data) = cond ? 1 : 0;
    ETC_TRY(run_chain<kTraced>(c.chains[0]));
    cond = *static_cast<const uint8_t*>(body.outputs[0]->data) != 0;
    for (size_t k = 0; k < n; ++k) copy_tensor(*body.inputs[2 + k], *body.outputs[1 + k]);
    for (size_t j = n; j < c.outputs.size(); ++j) {
      Tensor& all = *c.outputs[j];
      const Tensor& row = *body.outputs[1 + j];
      if (i >= all.spec.shape[0])
        return fail(Error::InvalidArgument, describe_instruction(c.instruction), ": runs more than the ",
                    std::to_string(all.spec.shape[0]), " iterations its scan outputs hold");
      if (row.nbytes() > 0)
        std::memcpy(static_cast<uint8_t*>(all.data) + static_cast<size_t>(i) * row.nbytes(), row.data,
                    row.nbytes());
    }
  }
  for (size_t j = n; j < c.outputs.size(); ++j)
    if (i != c.outputs[j]->spec.shape[0])
      return fail(Error::InvalidArgument, describe_instruction(c.instruction), ": ran ", std::to_string(i),
                  " iteration(s) but its scan outputs hold ", std::to_string(c.outputs[j]->spec.shape[0]));
  for (size_t k = 0; k < n; ++k) copy_tensor(*c.outputs[k], *body.inputs[2 + k]);
  return Status::Ok();
}

template Status Method::run_control<false>(const Control&);
template Status Method::run_control<true>(const Control&);

// A delegate call's portable fallback (method_delegate.cpp), run like a
// branch: its chain, then its outputs copied out.
template <bool kTraced>
Status Method::run_fallback(const Step& step) {
  const auto f = static_cast<uint32_t>(step.fallback);
  ETC_TRY(run_chain<kTraced>(f));
  const Chain& chain = chains_[f];
  for (size_t k = 0; k < step.outputs.size(); ++k) copy_tensor(*step.outputs[k], *chain.outputs[k]);
  return Status::Ok();
}

template Status Method::run_fallback<false>(const Step&);
template Status Method::run_fallback<true>(const Step&);

}  // namespace etc
