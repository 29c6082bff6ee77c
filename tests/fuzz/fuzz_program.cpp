// Fuzz target: arbitrary bytes as a program file (.etp): verification at
// load, then init of every plan (delegates included) and one run.
#include <string>

#include "runtime/backends/register_builtin.h"
#include "runtime/executor/program.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace etc;
  static const bool registered = register_builtin_backends().ok();
  if (!registered) std::abort();
  auto loaded = Program::load_from_data(FileData::borrow(data, size), "fuzz.etp");
  if (!loaded.ok()) return 0;
  std::string why;
  (void)fuzz::init_and_run(loaded.get(), data, size, fuzz::RunBudget{}, &why);  // init may refuse it
  return 0;
}
