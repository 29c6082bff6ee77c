#pragma once
// Reading a file a user named (a model, external data, an input tensor)
// safely: only a regular file — a FIFO, a device or a directory would block
// or never end — and only up to a size limit known before reading. Symbolic
// links are followed to what they name, which must be a regular file too.

#include <cstdint>
#include <optional>
#include <string>

namespace etc {

// The whole file into `bytes`, at most max_bytes of it (by default
// --max-file-bytes, limits.h). Returns an empty string on success, else why
// not ("is a FIFO, not a regular file", "cannot open: ...", "holds 20 GiB to
// read, above --max-file-bytes (16 GiB)").
std::string read_regular_file(const std::string& path, std::string& bytes,
                              std::optional<uint64_t> max_bytes = std::nullopt);

// Bytes [offset, offset + length) of the file (length < 0: to its end),
// which must lie inside it; `size` receives the file's size.
std::string read_regular_file_range(const std::string& path, int64_t offset, int64_t length,
                                    std::string& bytes, uint64_t& size,
                                    std::optional<uint64_t> max_bytes = std::nullopt);

}  // namespace etc
