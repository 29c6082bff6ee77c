#pragma once
// Checks every index, offset, dtype and shape of a flatbuffer-verified program
// against the file size, so nothing after load can read out of bounds.

#include <cstddef>

#include "runtime/core/result.h"
#include "runtime/core/tensor.h"
#include "runtime/schema/program_generated.h"

namespace etc {

Status validate_program(const fb::Program& program, size_t segment_base, size_t file_size);

// Spec (dtype + shape) of a value that passed validation.
TensorSpec value_spec(const fb::Value& value);

}  // namespace etc
