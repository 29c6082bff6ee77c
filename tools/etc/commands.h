#pragma once
// Subcommands of the etc CLI. Each adds itself to the app and returns the
// function to run when it is chosen; the function returns the exit code.

#include <CLI/CLI.hpp>
#include <functional>

namespace etc::cli {

using Action = std::function<int()>;

Action add_preprocess(CLI::App& app);
Action add_run(CLI::App& app);
Action add_info(CLI::App& app);
Action add_partition(CLI::App& app);
Action add_backends(CLI::App& app);
Action add_debug(CLI::App& app);
Action add_inspect(CLI::App& app);

// Exit codes scripts can rely on.
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;       // bad input, compile or run failure
inline constexpr int kExitUsage = 2;       // bad flags
inline constexpr int kExitGateFailed = 3;  // a CI gate (--require-coverage ...) not met

}  // namespace etc::cli
