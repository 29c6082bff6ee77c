#pragma once
// FileData: the read-only bytes of a program file, memory-mapped (or, for
// buffers handed in by the caller, borrowed). Move-only; unmaps on destruction.

#include <cstddef>
#include <cstdint>
#include <string>

#include "runtime/core/result.h"

namespace etc {

class FileData {
 public:
  // Maps `path` read-only. Fails with AccessFailed naming the path and the reason.
  static Result<FileData> map(const std::string& path);
  // Wraps caller-owned bytes; they must outlive the FileData.
  static FileData borrow(const void* data, size_t size);

  FileData() = default;
  FileData(FileData&& o) noexcept;
  FileData& operator=(FileData&& o) noexcept;
  FileData(const FileData&) = delete;
  FileData& operator=(const FileData&) = delete;
  ~FileData();

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool is_mapped() const { return mapped_; }

  // Returns the whole pages of [begin, begin + size) to the operating system
  // (madvise MADV_DONTNEED): they leave the process's resident memory, and
  // are read again from the file should anything touch them later, so the
  // bytes never change. Partial pages at either end stay. Does nothing for
  // borrowed bytes or a range outside the data.
  void release_pages(const void* begin, size_t size) const;

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;
};

}  // namespace etc
