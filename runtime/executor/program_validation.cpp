#include "runtime/executor/program_validation.h"

#include <string>

#include "runtime/core/tensor.h"
#include "runtime/kernels/kernel.h"

namespace etc {
namespace {

std::string str(uint64_t v) { return std::to_string(v); }

// Byte size of a value, or an error when its dtype/shape are invalid or overflow.
Result<uint64_t> checked_nbytes(const fb::Value& v) {
  const DType dtype = static_cast<DType>(v.dtype());
  if (!dtype_valid(dtype)) return fail(Error::InvalidProgram, "invalid dtype");
  uint64_t n = dtype_size(dtype);
  if (v.shape() && v.shape()->size() > static_cast<size_t>(kMaxRank))
    return fail(Error::InvalidProgram, "rank ", str(v.shape()->size()), " exceeds ", str(kMaxRank));
  if (v.shape()) {
    for (int64_t d : *v.shape()) {
      if (d < 0 || d > (int64_t{1} << 40))
        return fail(Error::InvalidProgram, "invalid dim ", std::to_string(d));
      if (d != 0 && n > (uint64_t{1} << 48) / static_cast<uint64_t>(d))
        return fail(Error::InvalidProgram, "tensor too large");
      n *= static_cast<uint64_t>(d);
    }
  }
  return n;
}

Status validate_indices(const flatbuffers::Vector<int32_t>* ids, size_t num_values, bool allow_absent,
                        const char* what) {
  if (!ids) return Status::Ok();
  for (int32_t id : *ids) {
    if (id == -1 && allow_absent) continue;
    if (id < 0 || static_cast<size_t>(id) >= num_values)
      return fail(Error::InvalidProgram, what, " refers to value ", std::to_string(id), " of ",
                  str(num_values));
  }
  return Status::Ok();
}

// Kernels write their outputs: those must be arena values, never constants
// (read-only mapping) or inputs.
Status validate_writable(const flatbuffers::Vector<int32_t>* ids, const fb::ExecutionPlan& plan,
                         const std::string& where) {
  if (!ids) return Status::Ok();
  for (int32_t id : *ids) {
    const fb::ValueKind kind = plan.values()->Get(id)->kind();
    if (kind == fb::ValueKind::Constant || kind == fb::ValueKind::Input)
      return fail(Error::InvalidProgram, where, " writes to constant or input value ", std::to_string(id));
  }
  return Status::Ok();
}

Status validate_plan(const fb::Program& p, const fb::ExecutionPlan& plan) {
  const size_t num_values = plan.values() ? plan.values()->size() : 0;
  const size_t num_segments = p.segments() ? p.segments()->size() : 0;
  for (size_t i = 0; i < num_values; ++i) {
    const fb::Value& v = *plan.values()->Get(i);
    auto nbytes = checked_nbytes(v);
    if (!nbytes.ok()) return fail(Error::InvalidProgram, "value ", str(i), ": ", nbytes.message());
    if (v.kind() == fb::ValueKind::Constant) {
      if (v.segment() >= num_segments)
        return fail(Error::InvalidProgram, "value ", str(i), ": segment ", str(v.segment()),
                    " does not exist");
      const uint64_t seg_size = p.segments()->Get(v.segment())->size();
      if (v.segment_offset() > seg_size || nbytes.get() > seg_size - v.segment_offset())
        return fail(Error::InvalidProgram, "value ", str(i), ": constant data out of bounds");
    } else {
      if (v.arena_offset() > plan.arena_size() || nbytes.get() > plan.arena_size() - v.arena_offset())
        return fail(Error::InvalidProgram, "value ", str(i), ": arena placement out of bounds");
    }
  }
  ETC_TRY(validate_indices(plan.inputs(), num_values, false, "plan input"));
  ETC_TRY(validate_indices(plan.outputs(), num_values, false, "plan output"));
  const size_t num_ops = p.operators() ? p.operators()->size() : 0;
  const size_t num_delegates = p.delegates() ? p.delegates()->size() : 0;
  if (!plan.instructions()) return Status::Ok();
  for (size_t i = 0; i < plan.instructions()->size(); ++i) {
    const fb::Instruction& ins = *plan.instructions()->Get(i);
    const std::string where = "instruction " + str(i);
    if (const fb::KernelCall* k = ins.args_as_KernelCall()) {
      if (k->op() >= num_ops) return fail(Error::InvalidProgram, where, ": operator index out of range");
      ETC_TRY(validate_indices(k->inputs(), num_values, true, where.c_str()));
      ETC_TRY(validate_indices(k->outputs(), num_values, false, where.c_str()));
      ETC_TRY(validate_writable(k->outputs(), plan, where));
    } else if (const fb::DelegateCall* d = ins.args_as_DelegateCall()) {
      if (d->delegate() >= num_delegates)
        return fail(Error::InvalidProgram, where, ": delegate index out of range");
      ETC_TRY(validate_indices(d->inputs(), num_values, false, where.c_str()));
      ETC_TRY(validate_indices(d->outputs(), num_values, false, where.c_str()));
      ETC_TRY(validate_writable(d->outputs(), plan, where));
    } else {
      return fail(Error::InvalidProgram, where, ": unknown instruction kind");
    }
  }
  return Status::Ok();
}

}  // namespace

TensorSpec value_spec(const fb::Value& v) {
  TensorSpec spec;
  spec.dtype = static_cast<DType>(v.dtype());
  if (v.shape())
    for (int64_t d : *v.shape()) spec.shape.push_back(d);
  return spec;
}

Status validate_program(const fb::Program& p, size_t segment_base, size_t file_size) {
  if (p.segments()) {
    for (size_t i = 0; i < p.segments()->size(); ++i) {
      const fb::Segment* s = p.segments()->Get(i);
      if (segment_base > file_size || s->offset() > file_size - segment_base ||
          s->size() > file_size - segment_base - s->offset())
        return fail(Error::InvalidProgram, "segment ", str(i), " lies outside the file (truncated?)");
    }
  }
  if (p.operators()) {
    for (size_t i = 0; i < p.operators()->size(); ++i) {
      const auto* name = p.operators()->Get(i);
      if (!name || !edge_op_from_name(name->string_view()))
        return fail(Error::InvalidProgram, "unknown operator '", name ? name->str() : "", "'");
    }
  }
  if (p.delegates()) {
    const size_t num_segments = p.segments() ? p.segments()->size() : 0;
    for (size_t i = 0; i < p.delegates()->size(); ++i) {
      const int32_t seg = p.delegates()->Get(i)->segment();
      if (seg != -1 && (seg < 0 || static_cast<size_t>(seg) >= num_segments))
        return fail(Error::InvalidProgram, "delegate ", str(i), ": segment out of range");
    }
  }
  if (!p.plans() || p.plans()->size() == 0) return fail(Error::InvalidProgram, "no execution plan");
  for (size_t i = 0; i < p.plans()->size(); ++i) {
    Status s = validate_plan(p, *p.plans()->Get(i));
    if (!s.ok()) return fail(s.error(), "plan ", str(i), ": ", s.message());
  }
  return Status::Ok();
}

}  // namespace etc
