#pragma once
// Operator attributes as kernels see them: non-owning views into the program
// file (at runtime) or into compiler IR storage (when the compiler folds
// constants). The viewed storage must outlive the AttrList.

#include <cstdint>
#include <string_view>
#include <vector>

#include "runtime/core/result.h"
#include "runtime/core/span.h"

namespace etc {

enum class AttrKind : uint8_t { Int, Float, Ints, Floats, String };

struct AttrView {
  std::string_view name;
  AttrKind kind = AttrKind::Int;
  int64_t i = 0;
  float f = 0.0f;
  Span<const int64_t> ints;
  Span<const float> floats;
  std::string_view s;
};

class AttrList {
 public:
  AttrList() = default;
  explicit AttrList(Span<const AttrView> attrs) : attrs_(attrs) {}

  const AttrView* find(std::string_view name) const;
  bool has(std::string_view name) const { return find(name) != nullptr; }

  // Each getter fails with InvalidProgram naming the attribute when it is
  // missing (no default given) or of another kind.
  Result<int64_t> get_int(std::string_view name) const;
  Result<int64_t> get_int(std::string_view name, int64_t fallback) const;
  Result<float> get_float(std::string_view name) const;
  Result<float> get_float(std::string_view name, float fallback) const;
  Result<std::vector<int64_t>> get_ints(std::string_view name) const;
  Result<std::vector<int64_t>> get_ints(std::string_view name, std::vector<int64_t> fallback) const;
  Result<std::vector<float>> get_floats(std::string_view name) const;
  Result<std::string_view> get_string(std::string_view name) const;
  Result<std::string_view> get_string(std::string_view name, std::string_view fallback) const;

  Span<const AttrView> all() const { return attrs_; }

 private:
  Span<const AttrView> attrs_;
};

}  // namespace etc
