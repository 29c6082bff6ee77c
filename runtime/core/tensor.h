#pragma once
// Tensor: a typed, shaped, non-owning view of memory. The memory (arena,
// constant segment or user buffer) must outlive the tensor.

#include <cstddef>
#include <cstdint>

#include "runtime/core/dtype.h"
#include "runtime/core/shape.h"

namespace etc {

// Static description of a tensor: element type and shape.
struct TensorSpec {
  DType dtype = DType::Invalid;
  Shape shape;
  size_t nbytes() const { return static_cast<size_t>(shape.numel()) * dtype_size(dtype); }
  bool operator==(const TensorSpec& o) const { return dtype == o.dtype && shape == o.shape; }
};

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
