#pragma once
// Dtype dispatch for kernels: calls fn.template operator()<T>() for the C type
// of a runtime dtype, or returns InvalidType.

#include <cstdint>

#include "runtime/core/dtype.h"
#include "runtime/core/result.h"

namespace etc {

// Arithmetic dtypes: float32, float64, int32, int64, int8, uint8.
template <typename F>
Status dispatch_arith(DType dtype, F&& fn) {
  switch (dtype) {
    case DType::Float32: return fn.template operator()<float>();
    case DType::Float64: return fn.template operator()<double>();
    case DType::Int32: return fn.template operator()<int32_t>();
    case DType::Int64: return fn.template operator()<int64_t>();
    case DType::Int8: return fn.template operator()<int8_t>();
    case DType::UInt8: return fn.template operator()<uint8_t>();
    default: return fail(Error::InvalidType, "unsupported dtype ", dtype_name(dtype));
  }
}

// Every dtype, including bool (for data movement: gather, concat, ...).
template <typename F>
Status dispatch_all(DType dtype, F&& fn) {
  if (dtype == DType::Bool) return fn.template operator()<bool>();
  return dispatch_arith(dtype, fn);
}

// Floating dtypes only.
template <typename F>
Status dispatch_float(DType dtype, F&& fn) {
  switch (dtype) {
    case DType::Float32: return fn.template operator()<float>();
    case DType::Float64: return fn.template operator()<double>();
    default: return fail(Error::InvalidType, "expects float32 or float64, got ", dtype_name(dtype));
  }
}

}  // namespace etc
