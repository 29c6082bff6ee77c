#pragma once
// EValue: a value passed between instructions: a tensor, or a scalar.
// Delegates receive their arguments as EValues (inputs, then outputs).

#include <cstdint>

#include "runtime/core/tensor.h"

namespace etc {

class EValue {
 public:
  enum class Tag : uint8_t { None, Tensor, Int, Double, Bool };

  EValue() = default;
  explicit EValue(Tensor* t) : tag_(Tag::Tensor), tensor_(t) {}
  explicit EValue(int64_t v) : tag_(Tag::Int), int_(v) {}
  explicit EValue(double v) : tag_(Tag::Double), double_(v) {}
  explicit EValue(bool v) : tag_(Tag::Bool), bool_(v) {}

  Tag tag() const { return tag_; }
  bool is_tensor() const { return tag_ == Tag::Tensor; }
  // Preconditions: the tag matches.
  Tensor& to_tensor() const { return *tensor_; }
  int64_t to_int() const { return int_; }
  double to_double() const { return double_; }
  bool to_bool() const { return bool_; }

 private:
  Tag tag_ = Tag::None;
  union {
    Tensor* tensor_ = nullptr;
    int64_t int_;
    double double_;
    bool bool_;
  };
};

}  // namespace etc
