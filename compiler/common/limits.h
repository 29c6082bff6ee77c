#pragma once
// Every limit etc puts on what a file may ask for, in one place. A model, a
// program or an input that needs more is refused with a message that names
// the limit and the flag that raises it (docs/limits.md lists them all):
//
//   tensor rank          8                 fixed (kMaxRank, runtime/core/shape.h)
//   element count        fits in int64     fixed: a count that overflows is refused
//   dims                 2^40 each, 2^48 bytes for the non-zero ones together (kMaxTensorDim,
//                        runtime/core/shape.h): the program format's bound, empty tensors too
//   one tensor           4 GiB             --max-tensor-bytes
//   one program          16 GiB            --max-program-bytes (arena + constants + delegate blobs)
//   one file read whole  16 GiB            --max-file-bytes (model, external data, input)
//   threads              the core count    --threads is capped there, with a warning
//
// The limits are process-wide: the CLI sets them once from its flags before
// any work; library users may set them too.

#include <cstdint>
#include <string>

#include "runtime/core/tensor.h"

namespace etc {

struct Limits {
  uint64_t max_tensor_bytes = uint64_t{4} << 30;
  uint64_t max_program_bytes = uint64_t{16} << 30;
  uint64_t max_file_bytes = uint64_t{16} << 30;
};

const Limits& limits();
void set_limits(const Limits& limits);

// "4 GiB", "1.5 MiB", "312 bytes".
std::string format_bytes(uint64_t bytes);

// Empty when the spec's element and byte counts fit int64 and
// --max-tensor-bytes; else why not, e.g. "[1099511627776, 3] float32 needs
// 12 TiB, above --max-tensor-bytes (4 GiB)".
std::string tensor_size_error(const TensorSpec& spec);

// Empty when a program's run-time memory (its arena and its segments:
// constants and delegate blobs) fits --max-program-bytes; else why not.
std::string program_size_error(uint64_t arena_bytes, uint64_t segment_bytes);

}  // namespace etc
