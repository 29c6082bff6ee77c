#pragma once
// What the CLI's own code throws for a failure that is not the compiler's:
// a file that cannot be read or written, a program that fails to load or
// run, an input that does not fit. The compiler throws CompileError; main()
// prints either as "error: <what()>" and exits with kExitError.

#include <stdexcept>

namespace etc::cli {

class ToolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace etc::cli

namespace etc::cli {

// Thrown by etc (the executable without ONNX) when a command needs
// etc-compiler, before the command has done anything: main hands the command
// line to etc-compiler (cli_setup.h).
struct NeedsCompiler {};

}  // namespace etc::cli
