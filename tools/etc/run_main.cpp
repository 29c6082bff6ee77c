// etc: runs and describes programs (etc run, etc info) without loading ONNX
// or protobuf, and hands every other command line to etc-compiler, the whole
// CLI, beside it (cli_setup.h).
#include "tools/etc/cli_setup.h"
#include "tools/etc/commands.h"

int main(int argc, char** argv) {
  const std::string chosen = etc::cli::subcommand_of(argc, argv);
  if (chosen != "run" && chosen != "info") return etc::cli::hand_to_compiler(argv);
  return etc::cli::run_app(argc, argv, {etc::cli::add_run, etc::cli::add_info}, /*is_compiler=*/false);
}
