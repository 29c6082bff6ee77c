// etc-compiler: the whole etc CLI, ahead-of-time compiler and runtime for
// ONNX models. `etc` hands it every command but run and info (cli_setup.h).
#include "partitioners/register.h"
#include "preprocessors/register.h"
#include "tools/etc/cli_setup.h"
#include "tools/etc/commands.h"

int main(int argc, char** argv) {
  etc::cli::restart_with_compiling_allocator(argc, argv);
  // Built-in backends are registered explicitly, never by static initializers.
  etc::register_builtin_partitioners();
  etc::register_builtin_preprocessors();
  using namespace etc::cli;
  return run_app(argc, argv,
                 {add_partition, add_preprocess, add_run, add_info, add_backends, add_inspect, add_debug},
                 /*is_compiler=*/true);
}
