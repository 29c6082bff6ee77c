#include "runtime/executor/program_validation.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "runtime/core/tensor.h"
#include "runtime/core/vector_alignment.h"
#include "runtime/kernels/kernel.h"

namespace etc {
namespace {

std::string str(uint64_t v) { return std::to_string(v); }

// Byte size of a value, or an error when its dtype/shape are invalid or overflow.
Result<uint64_t> checked_nbytes(const fb::Value& v) {
  const DType dtype = static_cast<DType>(v.dtype());
  if (!dtype_valid(dtype)) return fail(Error::InvalidProgram, "invalid dtype");
  if (misaligned_8(v.shape())) return fail(Error::InvalidProgram, "misaligned shape");
  if (v.shape() && v.shape()->size() > static_cast<size_t>(kMaxRank))
    return fail(Error::InvalidProgram, "rank ", str(v.shape()->size()), " exceeds ", str(kMaxRank));
  const Span<const int64_t> dims =
      v.shape() ? Span<const int64_t>(v.shape()->data(), v.shape()->size()) : Span<const int64_t>();
  uint64_t bytes = 0;
  switch (check_dims_bound(dims, dtype_size(dtype), &bytes)) {
    case DimsBound::kOk: return bytes;
    case DimsBound::kExtentTooLarge: return fail(Error::InvalidProgram, "tensor too large");
    default: {  // a negative dim or one above kMaxTensorDim
      const auto bad =
          std::find_if(dims.begin(), dims.end(), [](int64_t d) { return d < 0 || d > kMaxTensorDim; });
      return fail(Error::InvalidProgram, "invalid dim ", std::to_string(*bad));
    }
  }
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

// A delegate's processed bytes are inline or in one segment, never both.
Status validate_delegate(const fb::Delegate& d, size_t num_segments) {
  if (d.backend_id()->size() == 0) return fail(Error::InvalidProgram, "empty backend id");
  const int32_t seg = d.segment();
  if (seg != -1 && (seg < 0 || static_cast<size_t>(seg) >= num_segments))
    return fail(Error::InvalidProgram, "segment ", std::to_string(seg), " out of range (", str(num_segments),
                " segments)");
  const bool has_inline = d.inline_data() && d.inline_data()->size() > 0;
  if (seg != -1 && has_inline)
    return fail(Error::InvalidProgram, "processed bytes both inline and in a segment");
  if (seg == -1 && !d.inline_data())
    return fail(Error::InvalidProgram, "no processed bytes (neither inline nor a segment)");
  if (d.compile_specs()) {
    for (size_t j = 0; j < d.compile_specs()->size(); ++j)
      if (d.compile_specs()->Get(j)->key()->size() == 0)
        return fail(Error::InvalidProgram, "compile spec ", str(j), " has an empty key");
  }
  return Status::Ok();
}

// A delegate writes its outputs while it may still read its inputs: the two
// must not share a value.
Status validate_no_alias(const fb::DelegateCall& d, const std::string& where) {
  if (!d.inputs() || !d.outputs()) return Status::Ok();
  for (int32_t out : *d.outputs())
    for (int32_t in : *d.inputs())
      if (in == out)
        return fail(Error::InvalidProgram, where, ": value ", std::to_string(out),
                    " is both an input and an output of the delegate call");
  return Status::Ok();
}

// Kernels and delegates read tensors through typed pointers: each must lie in
// bounds and start at a multiple of its element size.
Status validate_value(const fb::Program& p, const fb::ExecutionPlan& plan, const fb::Value& v,
                      size_t segment_base) {
  ETC_ASSIGN_OR_RETURN(const uint64_t nbytes, checked_nbytes(v));
  const uint64_t element = dtype_size(static_cast<DType>(v.dtype()));
  const size_t num_segments = p.segments() ? p.segments()->size() : 0;
  if (v.kind() == fb::ValueKind::Constant) {
    if (v.segment() >= num_segments)
      return fail(Error::InvalidProgram, "segment ", str(v.segment()), " does not exist");
    const fb::Segment& seg = *p.segments()->Get(v.segment());
    if (v.segment_offset() > seg.size() || nbytes > seg.size() - v.segment_offset())
      return fail(Error::InvalidProgram, "constant data out of bounds");
    if ((segment_base + seg.offset() + v.segment_offset()) % element != 0)
      return fail(Error::InvalidProgram, "constant data misaligned");
  } else {
    if (misaligned_8(v.min_shape())) return fail(Error::InvalidProgram, "misaligned smallest shape");
    if (v.min_shape() && v.kind() != fb::ValueKind::Input)
      return fail(Error::InvalidProgram, "a smallest shape on a value that is not an input");
    if (v.arena_offset() > plan.arena_size() || nbytes > plan.arena_size() - v.arena_offset())
      return fail(Error::InvalidProgram, "arena placement out of bounds");
    if (v.arena_offset() % element != 0) return fail(Error::InvalidProgram, "arena placement misaligned");
  }
  return Status::Ok();
}

Status validate_attrs(const fb::KernelCall& k, const std::string& where) {
  if (!k.attrs()) return Status::Ok();
  for (const fb::Attr* a : *k.attrs())
    if (misaligned_8(a->ints()))
      return fail(Error::InvalidProgram, where, ": attribute '", a->name()->str(), "' is misaligned");
  return Status::Ok();
}

Status validate_plan(const fb::Program& p, const fb::ExecutionPlan& plan, size_t segment_base) {
  const size_t num_values = plan.values() ? plan.values()->size() : 0;
  for (size_t i = 0; i < num_values; ++i) {
    Status s = validate_value(p, plan, *plan.values()->Get(i), segment_base);
    if (!s.ok()) return fail(s.error(), "value ", str(i), ": ", s.message());
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
      ETC_TRY(validate_attrs(*k, where));
    } else if (const fb::DelegateCall* d = ins.args_as_DelegateCall()) {
      if (d->delegate() >= num_delegates)
        return fail(Error::InvalidProgram, where, ": delegate ", str(d->delegate()), " out of range (",
                    str(num_delegates), " delegates)");
      ETC_TRY(validate_indices(d->inputs(), num_values, false, where.c_str()));
      ETC_TRY(validate_indices(d->outputs(), num_values, false, where.c_str()));
      ETC_TRY(validate_writable(d->outputs(), plan, where));
      ETC_TRY(validate_no_alias(*d, where));
    } else if (const fb::IfCall* c = ins.args_as_IfCall()) {
      if (c->cond() < 0 || static_cast<size_t>(c->cond()) >= num_values)
        return fail(Error::InvalidProgram, where, ": condition value out of range");
      ETC_TRY(validate_indices(c->outputs(), num_values, false, where.c_str()));
      ETC_TRY(validate_writable(c->outputs(), plan, where));
    } else if (const fb::LoopCall* c = ins.args_as_LoopCall()) {
      for (int32_t id : {c->trip_count(), c->cond()})
        if (id < -1 || (id >= 0 && static_cast<size_t>(id) >= num_values))
          return fail(Error::InvalidProgram, where, ": trip count or condition value out of range");
      ETC_TRY(validate_indices(c->carried(), num_values, false, where.c_str()));
      ETC_TRY(validate_indices(c->outputs(), num_values, false, where.c_str()));
      ETC_TRY(validate_writable(c->outputs(), plan, where));
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
  if (misaligned_8(p.segments())) return fail(Error::InvalidProgram, "misaligned segment table");
  if (misaligned_8(p.segment_checksums())) return fail(Error::InvalidProgram, "misaligned segment checksums");
  if (p.segments()) {
    for (size_t i = 0; i < p.segments()->size(); ++i) {
      const fb::Segment* s = p.segments()->Get(i);
      if (segment_base > file_size || s->offset() > file_size - segment_base ||
          s->size() > file_size - segment_base - s->offset())
        return fail(Error::InvalidProgram, "segment ", str(i), " lies outside the file (truncated?)");
    }
  }
  if (p.segment_checksums() && p.segment_checksums()->size() != (p.segments() ? p.segments()->size() : 0))
    return fail(Error::InvalidProgram, "records ", str(p.segment_checksums()->size()),
                " segment checksums for ", str(p.segments() ? p.segments()->size() : 0), " segments");
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
      Status s = validate_delegate(*p.delegates()->Get(i), num_segments);
      if (!s.ok()) return fail(s.error(), "delegate ", str(i), ": ", s.message());
    }
  }
  if (!p.plans() || p.plans()->size() == 0) return fail(Error::InvalidProgram, "no execution plan");
  for (size_t i = 0; i < p.plans()->size(); ++i) {
    Status s = validate_plan(p, *p.plans()->Get(i), segment_base);
    if (!s.ok()) return fail(s.error(), "plan ", str(i), ": ", s.message());
  }
  return Status::Ok();
}

}  // namespace etc
