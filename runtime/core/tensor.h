#pragma once
// Tensor: a typed, shaped, non-owning view of memory. The memory (arena,
// constant segment or user buffer) must outlive the tensor.

#include <cstddef>
#include <cstdint>
#include <string>

#include "runtime/core/dtype.h"
#include "runtime/core/shape.h"

namespace etc {

// Static description of a tensor: element type and shape.
struct TensorSpec {
  DType dtype = DType::Invalid;
  Shape shape;
  // Saturates at SIZE_MAX (see Shape::numel); specs a program or the
  // compiler accepts always have an exact count.
  size_t nbytes() const {
    size_t bytes = 0;
    if (__builtin_mul_overflow(static_cast<size_t>(shape.numel()), dtype_size(dtype), &bytes))
      return SIZE_MAX;
    return bytes;
  }
  bool operator==(const TensorSpec& o) const { return dtype == o.dtype && shape == o.shape; }
  // "float32[1, 3, 224, 224]"
  std::string str() const { return std::string(dtype_name(dtype)) + shape.str(); }
};

// Index of the first of n bool elements whose byte is neither 0 nor 1, or -1
// when all are. Kernels read bool elements as C++ bool, for which any other
// byte is undefined, so every bool entering from outside (an input, a
// constant in a program file) is checked with this.
inline int64_t first_invalid_bool(const void* data, size_t n) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < n; ++i)
    if (bytes[i] > 1) return static_cast<int64_t>(i);
  return -1;
}

struct Tensor {
  TensorSpec spec;
  void* data = nullptr;

  DType dtype() const { return spec.dtype; }
  const Shape& shape() const { return spec.shape; }
  int rank() const { return spec.shape.rank(); }
  int64_t numel() const { return spec.shape.numel(); }
  size_t nbytes() const { return spec.nbytes(); }
  // An optional input that the model left out.
  bool present() const { return spec.dtype != DType::Invalid; }

  template <typename T>
  T* data_as() const {
    return static_cast<T*>(data);
  }
};

}  // namespace etc
