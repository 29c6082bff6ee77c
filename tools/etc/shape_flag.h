#pragma once
// Parses "NAME=1x3x224x224" (the --input-shape flag). Throws CompileError.

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "compiler/common/compile_error.h"
#include "runtime/core/shape.h"

namespace etc::cli {

inline std::pair<std::string, Shape> parse_shape_flag(const std::string& flag) {
  const size_t eq = flag.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == flag.size())
    throw CompileError("--input-shape '" + flag + "': expected NAME=DIMxDIM..., e.g. input=1x3x224x224");
  Shape shape;
  std::string rest = flag.substr(eq + 1);
  size_t pos = 0;
  while (pos <= rest.size()) {
    const size_t x = rest.find('x', pos);
    const std::string part = rest.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos || part.size() > 12)
      throw CompileError("--input-shape '" + flag + "': '" + part + "' is not a dimension");
    if (shape.rank() == kMaxRank) throw CompileError("--input-shape '" + flag + "': rank above 8");
    shape.push_back(std::stoll(part));
    if (x == std::string::npos) break;
    pos = x + 1;
  }
  return {flag.substr(0, eq), shape};
}

// Every --input-shape flag, by input name.
inline std::map<std::string, Shape> parse_shape_flags(const std::vector<std::string>& flags) {
  std::map<std::string, Shape> shapes;
  for (const std::string& flag : flags) {
    auto [name, shape] = parse_shape_flag(flag);
    shapes[name] = shape;  // a later flag for the same input wins
  }
  return shapes;
}

}  // namespace etc::cli
