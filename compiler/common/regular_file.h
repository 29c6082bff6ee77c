#pragma once
// Reading a file a user named (a model, external data, an input tensor)
// safely: only a regular file — a FIFO, a device or a directory would block
// or never end — and only up to a size limit known before reading. Symbolic
// links are followed to what they name, which must be a regular file too.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace etc {

// A regular file mapped read-only (map_regular_file): its bytes straight
// from the page cache, with none of the fresh memory a copy would take (a
// model's weights are most of its file). Unmapped when destroyed.
class MappedFile {
 public:
  MappedFile() = default;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  const char* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  friend std::string map_regular_file(const std::string&, MappedFile&, std::optional<uint64_t>);
  const char* data_ = nullptr;
  size_t size_ = 0;
};

// The whole file into `bytes`, at most max_bytes of it (by default
// --max-file-bytes, limits.h). Returns an empty string on success, else why
// not ("is a FIFO, not a regular file", "cannot open: ...", "holds 20 GiB to
// read, above --max-file-bytes (16 GiB)").
std::string read_regular_file(const std::string& path, std::string& bytes,
                              std::optional<uint64_t> max_bytes = std::nullopt);

// The whole file mapped into `file` (an empty file maps to no bytes), with
// the checks and messages of read_regular_file. Like the runtime's program
// mapping, it assumes nobody truncates the file while it is mapped.
std::string map_regular_file(const std::string& path, MappedFile& file,
                             std::optional<uint64_t> max_bytes = std::nullopt);

// Bytes [offset, offset + length) of the file (length < 0: to its end),
// which must lie inside it; `size` receives the file's size.
std::string read_regular_file_range(const std::string& path, int64_t offset, int64_t length,
                                    std::string& bytes, uint64_t& size,
                                    std::optional<uint64_t> max_bytes = std::nullopt);

}  // namespace etc
