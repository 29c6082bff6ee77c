#pragma once
// Writing output files so that a failure or an interruption never leaves a
// half-written file under the final name: the bytes go to a temporary file
// in the same folder, renamed over the target once complete.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace etc::cli {

// Throws ToolError naming `path` and the reason (missing folder, write or
// rename failure); the temporary file is removed.
void write_file_atomically(const std::string& path, const std::vector<uint8_t>& bytes);
// The same for a file given as pieces, written in order.
void write_file_atomically(const std::string& path, std::span<const std::span<const uint8_t>> pieces);

}  // namespace etc::cli
