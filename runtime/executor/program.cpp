#include "runtime/executor/program.h"

#include <algorithm>
#include <cstring>

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

}  // namespace etc
