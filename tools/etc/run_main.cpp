// etc: runs and describes programs (etc run, etc info) without loading ONNX
// or protobuf, and hands every other command line to etc-compiler, the whole
// CLI, beside it (cli_setup.h).
#include <CLI/CLI.hpp>

#include "tools/etc/cli_setup.h"
#include "tools/etc/commands.h"
#include "tools/etc/tool_error.h"

int main(int argc, char** argv) {
  const std::string chosen = etc::cli::subcommand_of(argc, argv);
  if (chosen != "run" && chosen != "info") return etc::cli::hand_to_compiler(argv);

  CLI::App app;
  etc::cli::GlobalOptions global;
  etc::cli::add_global_options(app, global);
  std::vector<std::pair<CLI::App*, etc::cli::Action>> commands;
  auto remember = [&](etc::cli::Action a) {
    commands.emplace_back(app.get_subcommands({}).back(), std::move(a));
  };
  remember(etc::cli::add_run(app));
  remember(etc::cli::add_info(app));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : etc::cli::kExitUsage;
  }
  if (int code = etc::cli::set_up(global); code != etc::cli::kExitOk) return code;
  try {
    return etc::cli::run_chosen(commands);
  } catch (const etc::cli::NeedsCompiler&) {
    return etc::cli::hand_to_compiler(argv);
  }
}
