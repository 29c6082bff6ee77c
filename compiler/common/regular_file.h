#pragma once
// Reading a file a user named (a model, external data, an input tensor)
// safely: only a regular file — a FIFO, a device or a directory would block
// or never end — and only up to a size limit known before reading. Symbolic
// links are followed to what they name, which must be a regular file too.

#include <cstdint>
#include <string>

namespace etc {

// Models and tensors larger than this are refused (16 GiB).
inline constexpr uint64_t kMaxInputFileBytes = uint64_t{16} << 30;

// The whole file into `bytes`. Returns an empty string on success, else why
// not ("is a FIFO, not a regular file", "cannot open: ...", "is 20 GiB,
// more than ...").
std::string read_regular_file(const std::string& path, std::string& bytes,
                              uint64_t max_bytes = kMaxInputFileBytes);

// Bytes [offset, offset + length) of the file (length < 0: to its end),
// which must lie inside it; `size` receives the file's size.
std::string read_regular_file_range(const std::string& path, int64_t offset, int64_t length,
                                    std::string& bytes, uint64_t& size,
                                    uint64_t max_bytes = kMaxInputFileBytes);

}  // namespace etc
