// Fuzz target: arbitrary bytes as a oneDNN delegate blob (plain or with
// prepacked weights).
#include "tests/fuzz/fuzz_backend_blob.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  etc::fuzz::init_blob("onednn", data, size);
  return 0;
}
