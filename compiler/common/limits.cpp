#include "compiler/common/limits.h"

#include <cstdio>

namespace etc {

namespace {

Limits& mutable_limits() {
  static Limits current;
  return current;
}

}  // namespace

const Limits& limits() { return mutable_limits(); }
void set_limits(const Limits& limits) { mutable_limits() = limits; }

std::string format_bytes(uint64_t bytes) {
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
  double v = static_cast<double>(bytes);
  int unit = -1;
  while (v >= 1024.0 && unit < 5) {
    v /= 1024.0;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, v == static_cast<double>(static_cast<uint64_t>(v)) ? "%.0f %s" : "%.1f %s",
                v, kUnits[unit]);
  return text;
}

std::string tensor_size_error(const TensorSpec& spec) {
  const std::string what = spec.shape.str() + " " + dtype_name(spec.dtype);
  int64_t count = 0;
  if (!spec.shape.checked_numel(&count)) return what + " has more elements than a 64-bit count can hold";
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(count), dtype_size(spec.dtype), &bytes))
    return what + " has more bytes than a 64-bit count can hold";
  if (bytes > limits().max_tensor_bytes)
    return what + " needs " + format_bytes(bytes) + ", above --max-tensor-bytes (" +
           format_bytes(limits().max_tensor_bytes) + ")";
  // The program format bounds every tensor, an empty one too: its non-zero
  // dims still size its strides.
  switch (check_dims_bound(spec.shape.dims(), dtype_size(spec.dtype), &bytes)) {
    case DimsBound::kDimTooLarge: return what + " has a dim above 2^40, the most a program may declare";
    case DimsBound::kExtentTooLarge:
      return what + ": its non-zero dims span more than 2^48 bytes, the most a program may declare";
    default: return {};  // negative dims were refused above (checked_numel)
  }
}

std::string program_size_error(uint64_t arena_bytes, uint64_t segment_bytes) {
  const uint64_t total = arena_bytes + segment_bytes;  // each is below 2^63: the sum cannot wrap
  if (total <= limits().max_program_bytes) return {};
  return "the program needs " + format_bytes(total) + " at run time (arena " + format_bytes(arena_bytes) +
         ", constants and delegate blobs " + format_bytes(segment_bytes) + "), above --max-program-bytes (" +
         format_bytes(limits().max_program_bytes) + ")";
}

}  // namespace etc
