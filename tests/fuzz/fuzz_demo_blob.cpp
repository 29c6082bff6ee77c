// Fuzz target: arbitrary bytes as a demo delegate blob (its text program).
#include "tests/fuzz/fuzz_backend_blob.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  etc::fuzz::init_blob("demo", data, size);
  return 0;
}
