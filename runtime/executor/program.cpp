#include "runtime/executor/program.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "runtime/core/checksum.h"
#include "runtime/executor/program_validation.h"

namespace etc {

Result<Program> Program::load(const std::string& path) {
  ETC_ASSIGN_OR_RETURN(FileData data, FileData::map(path));
  return load_from_data(std::move(data), path);
}

Result<Program> Program::load_from_data(FileData data, const std::string& name) {
  const uint8_t* bytes = data.data();
  const size_t size = data.size();
  if (size < 12)  // size prefix, root offset, file identifier
    return fail(Error::InvalidProgram, name, ": not an etc program (", std::to_string(size),
                " bytes is too short)");
  uint32_t fb_size = 0;
  std::memcpy(&fb_size, bytes, 4);
  if (!flatbuffers::BufferHasIdentifier(bytes + 4, kProgramIdentifier))
    return fail(Error::InvalidProgram, name, ": not an etc program (missing file identifier 'ETP1')");
  if (static_cast<uint64_t>(fb_size) + 4 > size)
    return fail(Error::InvalidProgram, name, ": truncated (header says ", std::to_string(fb_size + 4ull),
                " bytes of program, file has ", std::to_string(size), ")");
  // Alignment is relative to the start of the size-prefixed buffer.
  flatbuffers::Verifier verifier(bytes, 4 + static_cast<size_t>(fb_size), /*max_depth=*/64,
                                 /*max_tables=*/10000000);
  if (!verifier.VerifySizePrefixedBuffer<fb::Program>(kProgramIdentifier))
    return fail(Error::InvalidProgram, name, ": corrupt program (flatbuffer verification failed)");

  Program program;
  program.root_ = flatbuffers::GetSizePrefixedRoot<fb::Program>(bytes);
  program.segment_base_ =
      (4 + static_cast<size_t>(fb_size) + kSegmentAlignment - 1) / kSegmentAlignment * kSegmentAlignment;
  program.name_ = name;
  if (program.root_->version() != kProgramVersion)
    return fail(Error::IncompatibleVersion, name, ": program version ",
                std::to_string(program.root_->version()), " but this runtime reads version ",
                std::to_string(kProgramVersion), "; recompile the model with this etc");
  Status s = validate_program(*program.root_, program.segment_base_, size);
  if (!s.ok()) return fail(s.error(), name, ": ", s.message());
  program.data_ = std::move(data);
  if (Status b = program.check_bool_constants(); !b.ok()) return fail(b.error(), name, ": ", b.message());
  return program;
}

Span<const uint8_t> Program::segment(uint32_t i) const {
  const fb::Segment* seg = root_->segments()->Get(i);
  return {data_.data() + segment_base_ + seg->offset(), static_cast<size_t>(seg->size())};
}

uint64_t Program::fingerprint() const {
  uint64_t hash = 0xcbf29ce484222325ull;
  const size_t end = std::min(segment_base_, data_.size());
  for (size_t i = 0; i < end; ++i) {
    hash ^= data_.data()[i];
    hash *= 0x100000001b3ull;
  }
  return hash;
}

Status Program::check_bool_constants() const {
  for (int plan_index = 0; plan_index < num_plans(); ++plan_index) {
    const fb::ExecutionPlan& p = plan(plan_index);
    if (!p.values()) continue;
    for (const fb::Value* v : *p.values()) {
      if (v->kind() != fb::ValueKind::Constant || static_cast<DType>(v->dtype()) != DType::Bool) continue;
      const TensorSpec spec = value_spec(*v);  // validated: the count fits and the bytes are in the file
      const uint8_t* bytes = segment(v->segment()).data() + v->segment_offset();
      if (const int64_t bad = first_invalid_bool(bytes, spec.nbytes()); bad >= 0)
        return fail(Error::InvalidProgram, "bool constant '", v->name() ? v->name()->str() : "",
                    "' holds the byte ", std::to_string(bytes[bad]), " at element ", std::to_string(bad),
                    " (a bool must be 0 or 1)");
    }
  }
  return Status::Ok();
}

uint64_t Program::content_hash() const { return checksum64(data_.data(), data_.size()); }

namespace {

// "segment 1 (blob of delegate #0, xnnpack)", "segment 0 (constants)".
std::string describe_segment(const fb::Program& p, uint32_t index) {
  std::string what = "segment " + std::to_string(index) + " (";
  if (p.delegates())
    for (uint32_t d = 0; d < p.delegates()->size(); ++d)
      if (p.delegates()->Get(d)->segment() == static_cast<int32_t>(index))
        return what + "blob of delegate #" + std::to_string(d) + ", " +
               p.delegates()->Get(d)->backend_id()->str() + ")";
  return what + "constants)";
}

}  // namespace

Status Program::verify_segment_checksums() const {
  const auto* sums = root_->segment_checksums();
  if (!sums) return fail(Error::NotFound, name_, ": records no segment checksums (written by an older etc)");
  for (uint32_t i = 0; i < sums->size(); ++i) {
    const Span<const uint8_t> bytes = segment(i);
    if (checksum64(bytes.data(), bytes.size()) != sums->Get(i))
      return fail(Error::InvalidProgram, name_, ": ", describe_segment(*root_, i),
                  " does not match its checksum: the file is corrupt");
  }
  return Status::Ok();
}

}  // namespace etc
