// etc: ahead-of-time compiler and runtime for ONNX models.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "compiler/common/compile_error.h"
#include "compiler/common/limits.h"
#include "partitioners/register.h"
#include "preprocessors/register.h"
#include "runtime/backends/register_builtin.h"
#include "runtime/core/log.h"
#include "tools/etc/commands.h"
#include "tools/etc/tool_error.h"

namespace {

void spdlog_sink(etc::LogLevel level, const char* message) {
  switch (level) {
    case etc::LogLevel::Debug: spdlog::debug("{}", message); break;
    case etc::LogLevel::Info: spdlog::info("{}", message); break;
    case etc::LogLevel::Warning: spdlog::warn("{}", message); break;
    case etc::LogLevel::Error: spdlog::error("{}", message); break;
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"etc: compile ONNX models into deployable programs and run them"};
  app.set_version_flag("--version", "etc " ETC_VERSION_STRING);
  app.require_subcommand(1);
  // Global options (-v, -q, the limits) may also follow the subcommand (etc preprocess -q ...).
  app.fallthrough();
  int verbose = 0;
  bool quiet = false;
  app.add_flag("-v,--verbose", verbose, "More log output (-vv for debug)");
  app.add_flag("-q,--quiet", quiet, "Only errors");
  // Limits on what a file may ask for (compiler/common/limits.h, docs/limits.md).
  etc::Limits limits;
  const auto size_value = CLI::AsSizeValue(false);  // 4G, 512M, 64k (powers of 1024) or bytes
  app.add_option("--max-tensor-bytes", limits.max_tensor_bytes,
                 "Largest tensor a model may have (default 4G)")
      ->transform(size_value);
  app.add_option("--max-program-bytes", limits.max_program_bytes,
                 "Largest run-time memory a program may need (default 16G)")
      ->transform(size_value);
  app.add_option("--max-file-bytes", limits.max_file_bytes,
                 "Largest model, external data or input file read (default 16G)")
      ->transform(size_value);

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
  // Logs go to standard error, so standard output stays the command's result
  // (a table, or JSON a script parses) at any -v.
  spdlog::set_default_logger(spdlog::stderr_color_mt("etc"));
  spdlog::set_pattern("%^[%l]%$ %v");
  spdlog::set_level(quiet          ? spdlog::level::err
                    : verbose >= 2 ? spdlog::level::debug
                    : verbose == 1 ? spdlog::level::info
                                   : spdlog::level::warn);
  etc::set_log_sink(spdlog_sink);
  etc::set_limits(limits);
  // Built-in backends are registered explicitly, never by static initializers.
  etc::register_builtin_partitioners();
  etc::register_builtin_preprocessors();
  if (etc::Status s = etc::register_builtin_backends(); !s.ok()) {
    std::cerr << "error: " << s.message() << "\n";
    return etc::cli::kExitError;
  }
  for (auto& [sub, action] : commands) {
    if (!sub->parsed()) continue;
    try {
      return action();
    } catch (const etc::CompileError& e) {
      std::cerr << "error: " << e.what() << "\n";
      return etc::cli::kExitError;
    } catch (const etc::cli::ToolError& e) {
      std::cerr << "error: " << e.what() << "\n";
      return etc::cli::kExitError;
    } catch (const std::exception& e) {  // a bug: say so rather than crash
      std::cerr << "error: " << e.what() << "\n";
      return etc::cli::kExitError;
    }
  }
  return etc::cli::kExitUsage;
}
