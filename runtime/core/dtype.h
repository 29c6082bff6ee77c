#pragma once
// Element types the runtime understands. Values match program.fbs DType.

#include <cstddef>
#include <cstdint>

namespace etc {

// X(Enum, C type, name)
#define ETC_FOR_EACH_DTYPE(X)  \
  X(Float32, float, "float32") \
  X(Int64, int64_t, "int64")   \
  X(Int32, int32_t, "int32")   \
  X(Bool, bool, "bool")        \
  X(UInt8, uint8_t, "uint8")   \
  X(Int8, int8_t, "int8")      \
  X(Float64, double, "float64")

enum class DType : uint8_t {
  Invalid = 0,
#define ETC_DTYPE_ENUM(E, T, N) E,
  ETC_FOR_EACH_DTYPE(ETC_DTYPE_ENUM)
#undef ETC_DTYPE_ENUM
};

// Bytes per element; 0 for Invalid.
size_t dtype_size(DType dtype);
// Lower-case name ("float32"); "invalid" for unknown values.
const char* dtype_name(DType dtype);
// True for values inside the enum range.
bool dtype_valid(DType dtype);

template <typename T>
constexpr DType dtype_of();
#define ETC_DTYPE_OF(E, T, N)     \
  template <>                     \
  constexpr DType dtype_of<T>() { \
    return DType::E;              \
  }
ETC_FOR_EACH_DTYPE(ETC_DTYPE_OF)
#undef ETC_DTYPE_OF

}  // namespace etc
