#pragma once
// The compiler reports user-facing failures (bad model, unsupported op, bad
// flag) by throwing CompileError; the CLI prints what() and exits non-zero.
// Messages name the model file, the ONNX node (name and op_type) and the reason.

#include <stdexcept>
#include <string>

namespace etc {

class CompileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace etc
