// Fuzz target: arbitrary bytes as an XNNPACK delegate blob.
#include "tests/fuzz/fuzz_backend_blob.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  etc::fuzz::init_blob("xnnpack", data, size);
  return 0;
}
