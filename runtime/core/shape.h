#pragma once
// Fixed-capacity tensor shape (rank <= kMaxRank), plain data, no allocation.

#include <array>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>

#include "runtime/core/span.h"

namespace etc {

inline constexpr int kMaxRank = 8;
// What a program file may declare for one value: each dim at most
// kMaxTensorDim, and the product of its non-zero dims times the element size
// at most kMaxTensorExtentBytes (far above what a device holds; the bound
// keeps every size and stride arithmetic inside int64).
inline constexpr int64_t kMaxTensorDim = int64_t{1} << 40;
inline constexpr uint64_t kMaxTensorExtentBytes = uint64_t{1} << 48;

enum class DimsBound { kOk, kNegativeDim, kDimTooLarge, kExtentTooLarge };

// Whether `dims` of elements of `element_size` bytes are within what a
// program may declare (above), checked in the same way by the compiler and
// the loader. On kOk, *bytes is the tensor's size (0 when a dim is 0).
inline DimsBound check_dims_bound(Span<const int64_t> dims, uint64_t element_size, uint64_t* bytes) {
  uint64_t extent = element_size;
  bool empty = false;
  for (int64_t d : dims) {
    if (d < 0) return DimsBound::kNegativeDim;
    if (d > kMaxTensorDim) return DimsBound::kDimTooLarge;
    if (d == 0) {
      empty = true;
      continue;
    }
    if (extent > kMaxTensorExtentBytes / static_cast<uint64_t>(d)) return DimsBound::kExtentTooLarge;
    extent *= static_cast<uint64_t>(d);
  }
  *bytes = empty ? 0 : extent;
  return DimsBound::kOk;
}

class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) {
    for (int64_t d : dims) push_back(d);
  }
  // Caller guarantees dims.size() <= kMaxRank (see from_span for checked use).
  explicit Shape(Span<const int64_t> dims) {
    for (int64_t d : dims) push_back(d);
  }

  int rank() const { return rank_; }
  int64_t operator[](int i) const { return dims_[i]; }
  int64_t& operator[](int i) { return dims_[i]; }
  // Negative axes count from the back, as in ONNX.
  int64_t dim(int axis) const { return dims_[axis < 0 ? axis + rank_ : axis]; }
  void push_back(int64_t d) { dims_[rank_++] = d; }
  void resize(int rank, int64_t fill = 1) {
    for (int i = rank_; i < rank; ++i) dims_[i] = fill;
    rank_ = rank;
  }
  const int64_t* begin() const { return dims_.data(); }
  const int64_t* end() const { return dims_.data() + rank_; }
  Span<const int64_t> dims() const { return {dims_.data(), static_cast<size_t>(rank_)}; }

  // Product of dims (1 for a scalar). Saturates at INT64_MAX instead of
  // overflowing, so a hostile shape compares unequal to every real count;
  // checked_numel says whether the product is exact.
  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < rank_; ++i)
      if (__builtin_mul_overflow(n, dims_[i], &n)) return std::numeric_limits<int64_t>::max();
    return n;
  }
  // The product of dims into *out; false (and *out untouched) when a dim is
  // negative or the product of the non-zero dims overflows int64. Zero dims
  // are left out of that check so that it does not depend on their place:
  // every stride a kernel computes from a suffix of the dims fits as well.
  bool checked_numel(int64_t* out) const {
    int64_t nonzero = 1;
    bool empty = false;
    for (int i = 0; i < rank_; ++i) {
      if (dims_[i] < 0) return false;
      if (dims_[i] == 0)
        empty = true;
      else if (__builtin_mul_overflow(nonzero, dims_[i], &nonzero))
        return false;
    }
    *out = empty ? 0 : nonzero;
    return true;
  }
  bool operator==(const Shape& o) const {
    if (rank_ != o.rank_) return false;
    for (int i = 0; i < rank_; ++i)
      if (dims_[i] != o.dims_[i]) return false;
    return true;
  }
  bool operator!=(const Shape& o) const { return !(*this == o); }
  // "[1, 3, 224, 224]"
  std::string str() const;

 private:
  std::array<int64_t, kMaxRank> dims_{};
  int rank_ = 0;
};

// Row-major strides in elements.
inline std::array<int64_t, kMaxRank> strides_of(const Shape& s) {
  std::array<int64_t, kMaxRank> st{};
  int64_t acc = 1;
  for (int i = s.rank() - 1; i >= 0; --i) {
    st[i] = acc;
    acc *= s[i];
  }
  return st;
}

}  // namespace etc
