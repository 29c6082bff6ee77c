#pragma once
// Owned operator attributes of IR nodes, and the kernel-facing views of them.

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "runtime/kernels/attrs.h"

namespace etc::ir {

using AttrValue = std::variant<int64_t, float, std::vector<int64_t>, std::vector<float>, std::string>;

// Ordered name → value list (order is kept so printing and emission are stable).
class Attrs {
 public:
  Attrs() = default;
  Attrs(std::initializer_list<std::pair<std::string, AttrValue>> items) : items_(items) {}

  Attrs& set(std::string name, AttrValue value);
  const AttrValue* find(const std::string& name) const;
  const std::vector<std::pair<std::string, AttrValue>>& items() const { return items_; }
  bool empty() const { return items_.empty(); }

  // Views for kernels (AttrList); valid while this Attrs is alive and unchanged.
  std::vector<AttrView> views() const;
  // "axis=1, perm=[0, 2, 1]"
  std::string str() const;

 private:
  std::vector<std::pair<std::string, AttrValue>> items_;
};

}  // namespace etc::ir
