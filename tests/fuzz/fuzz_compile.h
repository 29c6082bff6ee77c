#pragma once
// The whole ahead-of-time path on one ONNX file, as `etc preprocess` runs it,
// then the program's load, init and one run. The oracle: a model the compiler
// accepts must give a program that loads and initializes; anything it
// refuses must be refused with a CompileError.

#include <cstddef>
#include <cstdint>
#include <string>

namespace etc::fuzz {

enum class Delegation { kPortable, kXnnpack, kDemo };

void compile_and_run(const std::string& model_path, Delegation delegation, const uint8_t* fill,
                     size_t fill_size);

}  // namespace etc::fuzz
