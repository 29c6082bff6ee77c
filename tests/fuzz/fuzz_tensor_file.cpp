// Fuzz target: arbitrary bytes as a run-time input file; the first byte picks
// the format (.npy or .pb, TensorProto).
#include "compiler/common/compile_error.h"
#include "tests/fuzz/fuzz_support.h"
#include "tools/etc/tensor_io.h"
#include "tools/etc/tool_error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace etc;
  if (size < 1) return 0;
  const bool npy = data[0] & 1;
  const std::string path = fuzz::write_scratch(data + 1, size - 1, npy ? ".npy" : ".pb");
  try {
    const io::OwnedTensor t = npy ? io::read_npy(path) : io::read_pb(path);
    if (t.bytes.size() != t.spec.nbytes()) std::abort();  // the bytes must match the declared spec
  } catch (const cli::ToolError&) {
  } catch (const CompileError&) {
  }
  return 0;
}
