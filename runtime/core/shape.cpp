#include "runtime/core/shape.h"

namespace etc {

std::string Shape::str() const {
  std::string out = "[";
  for (int i = 0; i < rank_; ++i) {
    if (i) out += ", ";
    out += std::to_string(dims_[i]);
  }
  return out + "]";
}

}  // namespace etc
