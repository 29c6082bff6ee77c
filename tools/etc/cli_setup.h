#pragma once
// What etc and etc-compiler share: the global options (-v, -q, the limits),
// the set-up they choose (logging, limits, registrations), running the chosen
// subcommand with its errors reported, and handing a command line on.
//
// Two executables because starting costs what is linked: `etc` runs and
// describes programs (run, info) without loading ONNX and protobuf (~3.4 ms
// of dynamic linking at every start here); every other command, and a run
// that reads TensorProto inputs, it hands to `etc-compiler` beside it, which
// has the whole CLI.

#include <CLI/CLI.hpp>
#include <string>
#include <utility>
#include <vector>

#include "compiler/common/limits.h"
#include "tools/etc/commands.h"

namespace etc::cli {

struct GlobalOptions {
  int verbose = 0;
  bool quiet = false;
  Limits limits;
};

// The app's name, version flag and global options; one subcommand required.
void add_global_options(CLI::App& app, GlobalOptions& options);

// Logging to standard error at the chosen level, the limits and the
// built-in runtime backends (etc-compiler registers its partitioners and
// preprocessors itself). Returns kExitOk or kExitError.
int set_up(const GlobalOptions& options);

// Runs the action of the parsed subcommand; an error is printed as
// "error: ..." with kExitError. NeedsCompiler passes through.
int run_chosen(const std::vector<std::pair<CLI::App*, Action>>& commands);

// The subcommand a command line names: its first word that is neither a
// global option nor a global option's value ("" when there is none).
std::string subcommand_of(int argc, char** argv);

// Replaces this process with etc-compiler (the file beside this executable)
// on the same command line. Returns only on failure, with kExitError and a
// message naming the file looked for.
int hand_to_compiler(char** argv);

}  // namespace etc::cli
