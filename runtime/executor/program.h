#pragma once
// Program: a loaded, fully verified program file. After load() succeeds every
// index and offset in the file is known to be in bounds, so Method::init and
// execute never re-check them.

#include <cstdint>
#include <memory>
#include <string>

#include "runtime/core/result.h"
#include "runtime/core/span.h"
#include "runtime/executor/file_data.h"
#include "runtime/schema/program_generated.h"

namespace etc {

inline constexpr uint32_t kProgramVersion = 1;
inline constexpr size_t kSegmentAlignment = 64;
inline constexpr char kProgramIdentifier[] = "ETP1";

class Program {
 public:
  // Maps and verifies a program file. Messages name the file and the defect.
  static Result<Program> load(const std::string& path);
  // Verifies bytes already in memory (they must outlive the Program).
  static Result<Program> load_from_data(FileData data, const std::string& name);

  const fb::Program& fb() const { return *root_; }
  const fb::ExecutionPlan& plan(int index = 0) const { return *root_->plans()->Get(index); }
  int num_plans() const { return static_cast<int>(root_->plans()->size()); }
  // Bytes of segment i (verified to lie inside the file).
  Span<const uint8_t> segment(uint32_t i) const;
  const std::string& name() const { return name_; }
  size_t file_size() const { return data_.size(); }
  // See FileData::release_pages: for bytes of this program (a delegate's
  // blob once its backend no longer needs it).
  void release_pages(const void* begin, size_t size) const { data_.release_pages(begin, size); }
  // FNV-1a 64 of the flatbuffer part of the file (not the constant
  // segments): identifies the program an ETDump was recorded from.
  uint64_t fingerprint() const;
  // checksum64 of the whole file: identifies its exact bytes (etc info).
  uint64_t content_hash() const;
  // Whether the file records a checksum per segment.
  bool has_segment_checksums() const { return root_->segment_checksums() != nullptr; }
  // Recomputes every segment's checksum (constants, delegate blobs) and
  // compares it with the recorded one: InvalidProgram naming the segment
  // and what it holds on a mismatch; NotFound when none are recorded.
  // Reads every byte of the file: opt-in (etc run --verify, etc info --verify).
  Status verify_segment_checksums() const;

 private:
  // Every bool constant's bytes are 0 or 1 (see first_invalid_bool).
  Status check_bool_constants() const;

  FileData data_;
  const fb::Program* root_ = nullptr;
  size_t segment_base_ = 0;
  std::string name_;
};

}  // namespace etc
