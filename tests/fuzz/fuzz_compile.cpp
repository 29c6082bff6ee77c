#include "tests/fuzz/fuzz_compile.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "compiler/backend/partitioner.h"
#include "compiler/backend/to_backend.h"
#include "compiler/common/compile_error.h"
#include "compiler/common/limits.h"
#include "compiler/driver.h"
#include "compiler/emit/program_writer.h"
#include "partitioners/register.h"
#include "runtime/backends/register_builtin.h"
#include "tests/fuzz/fuzz_support.h"

namespace etc::fuzz {

namespace {

[[noreturn]] void finding(const char* what, const std::string& why) {
  std::fprintf(stderr, "finding: %s: %s\n", what, why.c_str());
  std::abort();
}

}  // namespace

void compile_and_run(const std::string& model_path, Delegation delegation, const uint8_t* fill,
                     size_t fill_size) {
  static const bool registered = [] {
    // Small limits keep every compiled program quick to initialize and run;
    // what they refuse goes through the same checks as the defaults.
    Limits small;
    small.max_tensor_bytes = uint64_t{64} << 20;
    small.max_program_bytes = uint64_t{256} << 20;
    set_limits(small);
    register_builtin_partitioners();
    return register_builtin_backends().ok();
  }();
  if (!registered) std::abort();
  std::vector<uint8_t> bytes;
  try {
    ir::ExportedProgram program = compile_onnx(model_path);
    if (delegation != Delegation::kPortable)
      program =
          to_backend(program, *make_partitioner(delegation == Delegation::kXnnpack ? "xnnpack" : "demo"));
    bytes = emit::serialize_program(program);
  } catch (const CompileError& e) {
    // Refused with a message: what the compiler must do with a bad model.
    // ETC_FUZZ_VERBOSE=1 prints it (to see what a generator mostly hits).
    static const bool verbose = std::getenv("ETC_FUZZ_VERBOSE") != nullptr;
    if (verbose) std::fprintf(stderr, "refused: %s\n", e.what());
    return;
  }
  auto loaded = Program::load_from_data(FileData::borrow(bytes.data(), bytes.size()), "fuzz.etp");
  if (!loaded.ok()) finding("a compiled program does not load", loaded.message());
  std::string why;
  if (!init_and_run(loaded.get(), fill, fill_size, RunBudget{}, &why))
    finding("a compiled program does not initialize", why);
}

}  // namespace etc::fuzz
