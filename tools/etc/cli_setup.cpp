#include "tools/etc/cli_setup.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "compiler/common/compile_error.h"
#include "compiler/common/limits.h"
#include "runtime/backends/register_builtin.h"
#include "runtime/core/log.h"
#include "tools/etc/tool_error.h"

namespace etc::cli {
namespace {

// The CLI's log: "[level] message" on standard error, the level coloured on
// a terminal, below the chosen level dropped.
LogLevel g_threshold = LogLevel::Warning;
bool g_colour = false;

void stderr_sink(LogLevel level, const char* message) {
  if (level < g_threshold) return;
  static const char* const kNames[] = {"debug", "info", "warning", "error"};
  static const char* const kColours[] = {"\033[36m", "\033[32m", "\033[33m\033[1m", "\033[31m\033[1m"};
  const auto i = static_cast<size_t>(level);
  if (g_colour)
    std::fprintf(stderr, "[%s%s\033[m] %s\n", kColours[i], kNames[i], message);
  else
    std::fprintf(stderr, "[%s] %s\n", kNames[i], message);
}

// Global options that take a value as the next word (--max-file-bytes 4G).
constexpr const char* kValueOptions[] = {"--max-tensor-bytes", "--max-program-bytes", "--max-file-bytes"};

struct GlobalOptions {
  int verbose = 0;
  bool quiet = false;
  Limits limits;
};

// The app's version flag and global options; one subcommand required.
void add_global_options(CLI::App& app, GlobalOptions& options) {
  app.description("etc: compile ONNX models into deployable programs and run them");
  app.set_version_flag("--version", "etc " ETC_VERSION_STRING);
  app.require_subcommand(1);
  // Global options (-v, -q, the limits) may also follow the subcommand (etc preprocess -q ...).
  app.fallthrough();
  app.add_flag("-v,--verbose", options.verbose, "More log output (-vv for debug)");
  app.add_flag("-q,--quiet", options.quiet, "Only errors");
  // Limits on what a file may ask for (compiler/common/limits.h, docs/limits.md).
  const auto size_value = CLI::AsSizeValue(false);  // 4G, 512M, 64k (powers of 1024) or bytes
  app.add_option(kValueOptions[0], options.limits.max_tensor_bytes,
                 "Largest tensor a model may have (default 4G)")
      ->transform(size_value);
  app.add_option(kValueOptions[1], options.limits.max_program_bytes,
                 "Largest run-time memory a program may need (default 16G)")
      ->transform(size_value);
  app.add_option(kValueOptions[2], options.limits.max_file_bytes,
                 "Largest model, external data or input file read (default 16G)")
      ->transform(size_value);
}

// Logging to standard error at the chosen level, the limits and the
// built-in runtime backends (etc-compiler registers its partitioners and
// preprocessors itself). Returns kExitOk or kExitError.
int set_up(const GlobalOptions& options) {
  // Logs go to standard error, so standard output stays the command's result
  // (a table, or JSON a script parses) at any -v.
  g_threshold = options.quiet          ? LogLevel::Error
                : options.verbose >= 2 ? LogLevel::Debug
                : options.verbose == 1 ? LogLevel::Info
                                       : LogLevel::Warning;
  const char* term = std::getenv("TERM");
  g_colour = ::isatty(STDERR_FILENO) == 1 && (term == nullptr || std::strcmp(term, "dumb") != 0);
  set_log_sink(stderr_sink);
  set_limits(options.limits);
  // Built-in backends are registered explicitly, never by static initializers.
  if (Status s = register_builtin_backends(); !s.ok()) {
    std::cerr << "error: " << s.message() << "\n";
    return kExitError;
  }
  return kExitOk;
}

int run_chosen(const std::vector<std::pair<CLI::App*, Action>>& chosen) {
  for (const auto& [sub, action] : chosen) {
    if (!sub->parsed()) continue;
    try {
      return action();
    } catch (const NeedsCompiler&) {
      throw;
    } catch (const CompileError& e) {
      std::cerr << "error: " << e.what() << "\n";
      return kExitError;
    } catch (const ToolError& e) {
      std::cerr << "error: " << e.what() << "\n";
      return kExitError;
    } catch (const std::exception& e) {  // a bug: say so rather than crash
      std::cerr << "error: " << e.what() << "\n";
      return kExitError;
    }
  }
  return kExitUsage;
}

}  // namespace

int run_app(int argc, char** argv, const std::vector<AddCommand>& commands, bool is_compiler) {
  CLI::App app;
  GlobalOptions global;
  add_global_options(app, global);
  std::vector<std::pair<CLI::App*, Action>> chosen;
  for (AddCommand add : commands) {
    Action action = add(app);
    chosen.emplace_back(app.get_subcommands({}).back(), std::move(action));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : kExitUsage;
  }
  if (int code = set_up(global); code != kExitOk) return code;
  try {
    return run_chosen(chosen);
  } catch (const NeedsCompiler&) {
    return is_compiler ? kExitError : hand_to_compiler(argv);
  }
}

std::string subcommand_of(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.empty() || word[0] != '-') return word;
    for (const char* option : kValueOptions)
      if (word == option) ++i;  // its value is the next word
  }
  return "";
}

bool set_compiling_allocator(int argc, char** argv) {
  const std::string command = subcommand_of(argc, argv);
  if (command != "preprocess" && command != "partition" && command != "debug") return false;
  if (std::getenv("GLIBC_TUNABLES") != nullptr) return false;
  return ::setenv("GLIBC_TUNABLES",
                  "glibc.malloc.hugetlb=1:glibc.malloc.mmap_threshold=33554432:"
                  "glibc.malloc.trim_threshold=4294967295:glibc.malloc.top_pad=67108864",
                  0) == 0;
}

void restart_with_compiling_allocator(int argc, char** argv) {
  if (set_compiling_allocator(argc, argv)) ::execv("/proc/self/exe", argv);
}

int hand_to_compiler(char** argv) {
  int argc = 0;
  while (argv[argc] != nullptr) ++argc;
  set_compiling_allocator(argc, argv);
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::filesystem::path compiler =
      (ec ? std::filesystem::path(argv[0]) : self).parent_path() / "etc-compiler";
  ::execv(compiler.c_str(), argv);
  const int error = errno;
  std::cerr << "error: this command needs etc-compiler, the compiler's half of etc, at " << compiler.string()
            << ": " << std::strerror(error) << " (etc alone runs programs: `etc run` and `etc info`)\n";
  return kExitError;
}

}  // namespace etc::cli
