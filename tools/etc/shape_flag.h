#pragma once
// Parses the --input-shape flag: "NAME=1x3x224x224", where a dimension may
// be a range "320..960" (bounded dynamic shapes: the program runs at any
// size within it). Throws CompileError.

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "compiler/common/compile_error.h"
#include "runtime/core/shape.h"

namespace etc::cli {

struct ShapeFlag {
  std::string name;
  Shape max;  // the shape compiled for (each range's upper end)
  Shape min;  // each range's lower end (= max for a fixed shape)
};

inline ShapeFlag parse_shape_flag(const std::string& flag) {
  const size_t eq = flag.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == flag.size())
    throw CompileError(
        "--input-shape '" + flag +
        "': expected NAME=DIMxDIM..., e.g. input=1x3x224x224 (a range per dim: 1x3x320..960x320..960)");
  ShapeFlag out{flag.substr(0, eq), {}, {}};
  const std::string rest = flag.substr(eq + 1);
  auto number = [&](const std::string& part, const std::string& dim) {
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos || part.size() > 12)
      throw CompileError("--input-shape '" + flag + "': '" + dim +
                         "' is not a dimension (N, or a range A..B)");
    return std::stoll(part);
  };
  size_t pos = 0;
  while (pos <= rest.size()) {
    const size_t x = rest.find('x', pos);
    const std::string dim = rest.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
    if (out.max.rank() == kMaxRank) throw CompileError("--input-shape '" + flag + "': rank above 8");
    const size_t dots = dim.find("..");
    const int64_t lo = number(dim.substr(0, dots), dim);
    const int64_t hi = dots == std::string::npos ? lo : number(dim.substr(dots + 2), dim);
    if (lo > hi)
      throw CompileError("--input-shape '" + flag + "': the range " + dim +
                         " runs backwards (A..B needs A <= B)");
    out.min.push_back(lo);
    out.max.push_back(hi);
    if (x == std::string::npos) break;
    pos = x + 1;
  }
  return out;
}

// Every --input-shape flag, by input name: the shapes to compile for (each
// range's upper end).
inline std::map<std::string, Shape> parse_shape_flags(const std::vector<std::string>& flags) {
  std::map<std::string, Shape> shapes;
  for (const std::string& flag : flags) {
    ShapeFlag f = parse_shape_flag(flag);
    shapes[f.name] = f.max;  // a later flag for the same input wins
  }
  return shapes;
}

// The smallest shapes of the inputs given a range, by input name.
inline std::map<std::string, Shape> parse_shape_ranges(const std::vector<std::string>& flags) {
  std::map<std::string, Shape> shapes;
  for (const std::string& flag : flags) {
    ShapeFlag f = parse_shape_flag(flag);
    if (f.min == f.max)
      shapes.erase(f.name);
    else
      shapes[f.name] = f.min;
  }
  return shapes;
}

}  // namespace etc::cli
