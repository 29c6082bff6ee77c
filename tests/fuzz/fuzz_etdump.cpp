// Fuzz target: arbitrary bytes as an ETDump file, through the reader the
// Inspector uses.
#include "compiler/common/compile_error.h"
#include "compiler/devtools/etdump_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    (void)etc::devtools::parse_etdump(data, size, "fuzz.etdump");
  } catch (const etc::CompileError&) {
  }
  return 0;
}
