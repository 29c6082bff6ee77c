// etc-compiler: the whole etc CLI, ahead-of-time compiler and runtime for
// ONNX models. `etc` hands it every command but run and info (cli_setup.h).
#include <CLI/CLI.hpp>

#include "partitioners/register.h"
#include "preprocessors/register.h"
#include "tools/etc/cli_setup.h"
#include "tools/etc/commands.h"
#include "tools/etc/tool_error.h"

int main(int argc, char** argv) {
  CLI::App app;
  etc::cli::GlobalOptions global;
  etc::cli::add_global_options(app, global);

  std::vector<std::pair<CLI::App*, etc::cli::Action>> commands;
  auto remember = [&](etc::cli::Action a) {
    commands.emplace_back(app.get_subcommands({}).back(), std::move(a));
  };
  remember(etc::cli::add_partition(app));
  remember(etc::cli::add_preprocess(app));
  remember(etc::cli::add_run(app));
  remember(etc::cli::add_info(app));
  remember(etc::cli::add_backends(app));
  remember(etc::cli::add_inspect(app));
  remember(etc::cli::add_debug(app));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : etc::cli::kExitUsage;
  }
  if (int code = etc::cli::set_up(global); code != etc::cli::kExitOk) return code;
  etc::register_builtin_partitioners();
  etc::register_builtin_preprocessors();
  try {
    return etc::cli::run_chosen(commands);
  } catch (const etc::cli::NeedsCompiler&) {  // this executable is the compiler
    return etc::cli::kExitError;
  }
}
