// Fuzz target: arbitrary bytes as an ONNX model file, through import, the
// XNNPACK partitioner and preprocess, emit, load, init and one run. The first
// byte picks the delegation; the rest is the file.
#include "tests/fuzz/fuzz_compile.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace etc::fuzz;
  if (size < 1) return 0;
  const Delegation delegation = static_cast<Delegation>(data[0] % 3);
  const std::string path = write_scratch(data + 1, size - 1, ".onnx");
  compile_and_run(path, delegation, data, size);
  return 0;
}
