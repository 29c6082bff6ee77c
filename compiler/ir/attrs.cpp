#include "compiler/ir/attrs.h"

#include <sstream>

namespace etc::ir {

Attrs& Attrs::set(std::string name, AttrValue value) {
  for (auto& [n, v] : items_) {
    if (n == name) {
      v = std::move(value);
      return *this;
    }
  }
  items_.emplace_back(std::move(name), std::move(value));
  return *this;
}

const AttrValue* Attrs::find(const std::string& name) const {
  for (const auto& [n, v] : items_)
    if (n == name) return &v;
  return nullptr;
}

std::vector<AttrView> Attrs::views() const {
  std::vector<AttrView> out;
  out.reserve(items_.size());
  for (const auto& [name, value] : items_) {
    AttrView v;
    v.name = name;
    if (const auto* i = std::get_if<int64_t>(&value)) {
      v.kind = AttrKind::Int;
      v.i = *i;
    } else if (const auto* f = std::get_if<float>(&value)) {
      v.kind = AttrKind::Float;
      v.f = *f;
    } else if (const auto* is = std::get_if<std::vector<int64_t>>(&value)) {
      v.kind = AttrKind::Ints;
      v.ints = *is;
    } else if (const auto* fs = std::get_if<std::vector<float>>(&value)) {
      v.kind = AttrKind::Floats;
      v.floats = *fs;
    } else {
      v.kind = AttrKind::String;
      v.s = std::get<std::string>(value);
    }
    out.push_back(v);
  }
  return out;
}

std::string Attrs::str() const {
  std::ostringstream os;
  bool first = true;
  for (const auto& [name, value] : items_) {
    os << (first ? "" : ", ") << name << "=";
    first = false;
    std::visit(
        [&](const auto& v) {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<V, std::string>) {
            os << '"' << v << '"';
          } else if constexpr (std::is_same_v<V, int64_t> || std::is_same_v<V, float>) {
            os << v;
          } else {
            os << "[";
            for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
            os << "]";
          }
        },
        value);
  }
  return os.str();
}

}  // namespace etc::ir
